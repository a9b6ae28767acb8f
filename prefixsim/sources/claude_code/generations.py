"""Which version of the cross-session prefix a session carries.

The cross-session prefix (tools and the part of the system prompt sessions have in common) is the same
bytes only while what it is made of stays the same: the tool list (MCP servers are configured per user
and per project folder, and come and go), the agent definitions, the settings a session is launched
with. When a main session's first request reads nothing of it while another session was keeping it
cached, that session's prefix is other bytes. From then on, sessions launched in the same folder carry
that new version, and the session that showed it does too once its own entries have expired (until then
it reads what it wrote itself); sessions elsewhere, and those that started before, keep the old one.
The opposite observation undoes it: a session launched in that folder whose first request reads the
cross-session prefix, when nobody had written the new version, carries the old bytes after all.
Both are learned from a first request's observation, so only later requests use them (never the usage
of the request being predicted). Evidence and counts: docs/rules.md#claude-code-transcripts-parent-chain
("Versions of the cross-session prefix")."""
from __future__ import annotations

import heapq

from prefixsim.model import TTL_SECONDS
from prefixsim.providers.tables import ANTHROPIC_TTL_SLACK


class Generations:
    """Per cross-session key (harness version, prompt type, model): the version each launch folder's new
    sessions carry, the version of each stream, and who used which version when."""

    def __init__(self) -> None:
        self.in_folder: dict[tuple[str, str], int] = {}   # (base key, launch folder) -> version new sessions take
        self.folder: dict[str, str] = {}                  # stream -> the folder its session was launched in
        self.of: dict[tuple[str, str], int] = {}      # (stream, base key) -> the version its blocks are named by
        self.moving: dict[tuple[str, str], int] = {}  # (stream, base key) -> the version it takes once its entries expire
        self.used: dict[str, dict[str, tuple[float, float]]] = {}   # versioned key -> stream -> (start, ttl s)
        self.last: dict[str, tuple[float, float]] = {}              # stream -> (its latest start, ttl s)
        #: (usable from, order, base key, stream, whether the observation undid a version)
        self._pending: list[tuple[float, int, str, str, bool]] = []
        self._own = 0

    def key(self, base: str, stream: str, start: float, parent: str | None = None, folder: str = "") -> str:
        """The versioned cross-session key of `stream`'s request starting at `start` (a stream forked
        from `parent`, the compaction call, carries the parent's version)."""
        self.learn_until(start)
        k = (stream, base)
        if k not in self.of:
            self.folder.setdefault(stream, folder)
            now = self.in_folder.get((base, folder), 0)
            self.of[k] = self.of.get((parent, base), now) if parent else now
        elif k in self.moving:
            t, ttl = self.last[stream]
            if start - t >= ttl + ANTHROPIC_TTL_SLACK.value:   # its own entries are gone: it reads what its bytes are
                self.of[k] = self.moving.pop(k)
        g = self.of[k]
        return f"{base}#{g}" if g else base

    def used_by(self, key: str, stream: str, start: float, response: float, ttl: str) -> None:
        s = float(TTL_SECONDS.get(ttl, 300))
        self.used.setdefault(key, {})[stream] = (start, s)
        self.last[stream] = (max(start, response), s)   # its own entries live at least from its response

    def warm(self, key: str, stream: str, start: float) -> bool:
        """Whether another stream kept `key`'s entries cached at `start` (used within its TTL)."""
        return any(s != stream and 0 <= start - t < min(ttl, 300.0) for s, (t, ttl) in self.used.get(key, {}).items())

    def carries_new(self, base: str, stream: str) -> bool:
        """Whether `stream` started with a version its folder's sessions were taken to have moved to."""
        return self.of.get((stream, base), 0) != 0

    def observed(self, base: str, stream: str, usable_from: float, order: int, *, other_bytes: bool) -> None:
        """A first request's read, known once its response is logged: `other_bytes` (it read nothing of a
        warm prefix) starts a new version for its folder; otherwise (it read a prefix only the old version
        could give) its folder goes back to the old one."""
        heapq.heappush(self._pending, (usable_from, order, base, stream, not other_bytes))

    def learn_until(self, now: float) -> None:
        while self._pending and self._pending[0][0] <= now:
            _, _, base, stream, undo = heapq.heappop(self._pending)
            folder = (base, self.folder.get(stream, ""))
            if undo:
                self.in_folder.pop(folder, None)
                self.moving[(stream, base)] = 0
                continue
            self._own += 1
            self.moving[(stream, base)] = self.in_folder[folder] = -self._own
