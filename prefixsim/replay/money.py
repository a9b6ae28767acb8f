"""The money of a replay, as a user of the traffic reads it first: what it cost, what caching saved
against the same traffic with no cache, what was lost to the cache and to which cause, and all of it
split by session, day, project or model (as ccusage splits Claude Code's usage).

The cost is what was paid: each request's observed usage at its provider's prices (the replay's
prediction where the log has no usage). The no-cache cost is the same prompt tokens (and output,
where priced) all at the input rate. What a request lost is given by the caller, one figure per row:
advise's attribution (advise/attribution.py: against reading every prefix an earlier request wrote
that the rules let it read) for replayed rows, the usage-told loss for audited ones. Requests whose
model nothing prices count in `unpriced`, not as $0."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import PurePath

from prefixsim.replay.run import ReplayResult, ReplayRow, _instant

#: What `--by` splits the money by.
BY = ("session", "day", "project", "model")
#: A Claude Code session id (a UUID): shown by its first 8 characters, as git shows a commit.
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _subagents_at(parts: tuple[str, ...]) -> int | None:
    """Where the last `subagents` folder stands in a file's path parts (None: not a sub-agent's file)."""
    if "subagents" not in parts[:-1]:
        return None
    return len(parts) - 2 - parts[-2::-1].index("subagents")


def session_of(stream: str, path: str = "") -> str:
    """A request's session. A stream key of parts is `<session>/<stream>` (Claude Code's streams of a
    folder: `<session>/main`, `<session>/agent-1`): its session is all but the last part. A stream
    of one part (a session file given alone: `main`, `agent-1`) belongs to its file's session: the
    file without its suffix, a sub-agent's file (`<session>/subagents/agent-1.jsonl`) its session's."""
    head, sep, _ = stream.rpartition("/")
    if sep:
        return head
    if not path:
        return stream
    parts = PurePath(path).parts
    i = _subagents_at(parts)
    if i is not None:
        return PurePath(*parts[:i]).as_posix() if i else stream
    return PurePath(path).with_suffix("").as_posix()


def project_of(path: str) -> str:
    """The folder a request's file lies in, as Claude Code names a project (~/.claude/projects/
    <project>/<session>.jsonl; a sub-agent's file lies in <project>/<session>/subagents/). Another
    log's project is its own folder; a file given without one is "."."""
    parts = PurePath(path).parts
    i = _subagents_at(parts)
    if i is not None:   # the session's folder holds it, the project's folder holds that
        return parts[i - 2] if i >= 2 else "."
    return parts[-2] if len(parts) >= 2 else "."


def day_of(stamp: str) -> str:
    """A request's UTC date (the same whoever runs the replay, wherever); "no time" without a timestamp."""
    t = _instant(stamp)
    return t.date().isoformat() if t is not None else "no time"


def key_of(row: ReplayRow, by: str) -> str:
    if by == "session":
        return session_of(row.stream, row.path)
    if by == "day":
        return day_of(row.timestamp)
    if by == "project":
        return project_of(row.path)
    return row.model


def paid(row: ReplayRow) -> Decimal:
    """What a request cost: its observed usage priced, else (no usage logged) the replay's prediction."""
    if row.cost_observed is not None:
        return row.cost_observed
    return Decimal(0) if row.audit else row.cost_predicted


@dataclass(frozen=True, slots=True)
class Group:
    key: str
    requests: int
    cost: Decimal
    no_cache: Decimal
    lost: Decimal
    prompt: int          # prompt tokens, observed where logged
    read: int            # of which read from the cache
    unpriced: int        # requests whose cost is missing (not in cost, no_cache, lost)

    @property
    def saved(self) -> Decimal:
        return self.no_cache - self.cost

    @property
    def read_share(self) -> float | None:
        return self.read / self.prompt if self.prompt else None


@dataclass(frozen=True, slots=True)
class Money:
    total: Group
    by: str
    groups: tuple[Group, ...]                                  # most costly first
    lost_by_cause: tuple[tuple[str, int, Decimal, Decimal], ...]   # cause, misses, their cost, lost
    predicted: int       # requests whose cost is the replay's prediction (no usage logged)
    measured: bool = True   # False: no loss was given for the replayed rows (their lost is unknown, not $0)


def _group(key: str, rows: Sequence[ReplayRow], lost: dict[int, Decimal]) -> Group:
    priced = [r for r in rows if r.priced]
    prompt = read = 0
    for r in rows:
        u = r.observed if r.observed is not None else (None if r.audit else r.predicted)
        if u is not None:
            prompt += u.prompt_tokens
            read += u.cache_read
    return Group(key, len(rows), sum((paid(r) for r in priced), Decimal(0)),
                 sum((r.cost_no_cache if r.cost_no_cache is not None else paid(r) for r in priced), Decimal(0)),
                 sum((lost.get(r.index, Decimal(0)) for r in priced), Decimal(0)), prompt, read,
                 len(rows) - len(priced))


def money(result: ReplayResult, lost: Sequence[Decimal] | None, by: str = "day") -> Money:
    """The money of `result` split `by` one of BY; `lost` is each row's loss in row order (None: the
    attribution was not run, and an audited row's own usage-told loss is all there is)."""
    if by not in BY:
        raise ValueError(f"by must be one of {BY}, got {by!r}")
    losses: dict[int, Decimal] = {}
    for i, r in enumerate(result.rows):
        if r.audit:
            losses[r.index] = r.lost_usd or Decimal(0)
        elif lost:
            losses[r.index] = lost[i]
    split: dict[str, list[ReplayRow]] = {}
    causes: dict[str, list] = {}
    for r in result.rows:
        split.setdefault(key_of(r, by), []).append(r)
        if r.cause.kind:
            c = causes.setdefault(r.cause.kind, [0, Decimal(0), Decimal(0)])
            c[0] += 1
            if r.priced:
                c[1] += paid(r)
                c[2] += losses.get(r.index, Decimal(0))
    groups = sorted((_group(k, rows, losses) for k, rows in split.items()),
                    key=lambda g: (g.key if by == "day" else "", -g.cost, g.key))
    by_cause = tuple(sorted(((k, *v) for k, v in causes.items()), key=lambda t: (-t[3], -t[2], t[0])))
    return Money(_group("TOTAL", result.rows, losses), by, tuple(groups), by_cause,
                 sum(r.cost_observed is None and not r.audit for r in result.rows),
                 bool(lost) or all(r.audit for r in result.rows))


def short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Display names for stream and session keys, the same at every width (a table never cuts a name
    to fit: it leaves out columns instead): each key by the fewest of its last parts that no other
    key shows alike, a UUID part (a Claude Code session id) by its first 8 characters."""
    keys = sorted(set(keys))

    def shown(k: str, n: int) -> str:
        return "/".join(p[:8] if _UUID.match(p) else p for p in k.split("/")[-n:])

    names: dict[str, str] = {}
    pending = set(keys)
    for n in range(1, max((k.count("/") + 1 for k in keys), default=1) + 1):
        # names of n parts: one no other key shows at n parts is unique (a name of fewer parts has fewer slashes)
        at = {k: shown(k, n) for k in keys}
        seen = Counter(at.values())
        for k in sorted(pending):
            if seen[at[k]] == 1:
                names[k] = at[k]
                pending.discard(k)
    return {k: names.get(k, k) for k in keys}
