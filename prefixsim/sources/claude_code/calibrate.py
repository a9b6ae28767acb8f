"""Claude Code calls as the transcript shows them (`Raw`), turned into requests calibrated from their
observed usage (`Calibrator`): the two static entries, the history grown by what each call added,
breakpoints where the harness puts them (the rules are in claude_code.py's docstring)."""
from __future__ import annotations

import heapq
from dataclasses import replace
from functools import lru_cache

import xxhash

from prefixsim.model import Block, Call, Layer, Request, Usage
from prefixsim.sources.claude_code.generations import Generations
from prefixsim.sources.claude_code.raw import Raw
from prefixsim.sources.claude_code.stream import _append, _grow, _mark, _reply_block, _request_blocks, _Stream
from prefixsim.sources.claude_code.versions import uncertain_cd
from prefixsim.sources.record import Record


#: How many of the latest outcomes decide whether a key's cross-session prefix is kept warm outside the
#: data (Calibrator._outside): how many others run a version and model changes as they upgrade.
KEPT_RECENT = 5
#: A new user turn whose read passes what its logged requests cached by more than this many tokens read
#: into the reply before it: what the harness's end-of-turn request cached (`Calibrator._turn_end`).
TURN_END_SLACK = 10


class Calibrator:
    """Turns raw calls, fed in start order (`step`), into Records; keeps only per-stream state."""

    def __init__(self, count_text) -> None:
        self.count_text = count_text
        self.streams: dict[str, _Stream] = {}
        self.learned: dict[str, int] = {}    # family -> size of its system entry (the whole static prefix)
        self.shared: dict[str, int] = {}     # shared key -> size of the cross-session prefix
        self.families: set[str] = set()      # families that have made a request
        self.own: dict[str, int] = {}        # shared key -> the latest session's own part (entry - shared)
        #: (shared key, first message) -> the prompt a session's first request read whole from another's
        self.verbatim: dict[tuple[str, str], int] = {}
        #: (usable from, seq, table: shared | learned | verbatim, its key, size, shared key)
        self._pending: list[tuple[float, int, str, object, int, str]] = []
        self.generations = Generations()   # which version of the cross-session prefix each stream carries
        #: shared key -> the latest system entry a read showed for a family of that key (any session):
        #: where a sub-agent's system prompt ends before its own session's siblings show it
        self.entry: dict[str, int] = {}
        #: shared key -> its latest KEPT_RECENT outcomes (1: read the cross-session prefix, 0: read nothing) when
        #: nothing in the data kept it cached: Claude Code's global cache scope, kept by others' traffic
        self.kept: dict[str, tuple[int, ...]] = {}
        self._kept_pending: list[tuple[float, int, str, int]] = []
        #: stream -> whether its latest new user turn read past what its logged requests cached, into the
        #: reply before it (a request the harness sends at a turn's end cached it: `_turn_end`)
        self.turn_end: dict[str, bool] = {}
        #: the same, latest of any session launched in a folder, and of any session at all (1 or 0), each
        #: known once that turn's response is logged: the setting and the server's flag are the user's,
        #: so a session's first turn takes its project's latest, else the latest anywhere (`_suggests`)
        self.suggests_in: dict[str, int] = {}
        self.suggests_any: dict[str, int] = {}
        self.replied: dict[str, float] = {}   # stream -> its latest request's response time

    def _learn_until(self, now: float) -> None:
        while self._kept_pending and self._kept_pending[0][0] <= now:
            _, _, key, hit = heapq.heappop(self._kept_pending)
            self.kept[key] = (*self.kept.get(key, ())[1 - KEPT_RECENT:], hit)
        while self._pending and self._pending[0][0] <= now:
            _, _, table, key, size, shared_key = heapq.heappop(self._pending)
            getattr(self, table)[key] = size
            if table == "learned":
                self.entry[shared_key] = size
            if table == "learned" and self.shared.get(shared_key):
                self.own[shared_key] = max(0, size - self.shared[shared_key])

    def step(self, r: Raw) -> Record:
        base = r.shared
        r = replace(r, shared=self.generations.key(base, r.stream, r.start, r.parent, r.folder))
        self._learn_until(r.start)
        if r.event == "lookback" and r.stripped and r.said is not None and self._suggests(r):
            # the turn's first thinking request lies past the API's lookback, but the harness's end-of-turn
            # request cached the turn as this one sends it, near its end (`_turn_end`)
            r = replace(r, event=None)
        u = r.usage
        size = u.cache_read + u.cache_creation
        prev = self.streams.get(r.stream)
        prev_size = prev.size if prev else 0
        ttl = _ttl_of(u, prev.ttl if prev else "5m")
        parent = self.streams.get(r.parent) if r.parent and prev is None else None
        back = prev.marks.get(r.fork) if prev is not None and r.fork and not r.event else None
        unlogged: tuple[Call, ...] = ()
        ended: tuple[Call, ...] = ()
        logged: int | None = None   # a new user turn: the most its logged requests cached of its prompt
        # The compaction call is the conversation plus an instruction, sent with its settings (it reads the
        # conversation's cache whatever its own file's lines state)
        thinking = parent.thinking if parent is not None else r.thinking
        params = _thinking_params(thinking)
        rewound = back is not None and size >= back[1]
        # A compaction call forks a conversation the data has no request of: its transcript is not in the
        # folder (Claude Code's cleanupPeriodDays sweep deletes a session's main transcript and leaves its
        # subagents/ folder; a copy can leave out large files)
        absent = r.kind == "compaction" and prev is None and r.parent is not None and r.parent not in self.streams
        conversation: tuple[Call, ...] = ()
        if rewound:
            # A rewind: the history as request `fork` sent it, then its reply (as large as a later read
            # proved it cached, if one did), then what this request adds.
            st = prev
            st.ttl, st.model = ttl, r.model
            st.blocks, st.base, base = st.blocks[:back[0]], None, back[1]   # type: ignore[index]
            reply = st.replies.get(r.fork, 0)
            if base < reply <= size:
                st.blocks.append(_reply_block(r.stream, st.epoch, r.fork, reply - base))
                base = reply
            if r.stripped and r.said is not None:   # a new turn without the earlier turns' thinking
                logged = base
                ended, base = self._turn_end(st, r, base, size, params, ttl)
            _grow(st, size - base, r)
        elif parent is not None and size >= parent.size:
            # The compaction call sends the conversation itself plus its summary instruction.
            st = _Stream([*parent.blocks], parent.size, parent.epoch, parent.static, ttl, r.model)
            _grow(st, size - parent.size, r)
        elif absent:
            # That conversation's latest request, which its transcript would have logged, cached the
            # conversation the compaction sends: its prompt less the instruction (the latest reply, which
            # that request did not cache, is counted in; the data does not size it). The static part is
            # what reads showed for the family, the rest the conversation's own. One call stands for that
            # request, stepped before this one (Record.absent; docs/rules.md#claude-code-harness).
            instruction = min(self.count_text(r.first_text), size)
            static = self.learned.get(r.family) or self.shared.get(r.shared, 0) + self.own.get(r.shared, 0)
            static = min(static, size - instruction)
            st = _Stream(self._static_blocks(r, static), static, 0, static, ttl, r.model)
            _grow(st, size - instruction - static, r)
            conversation = (Call(t=r.start - 0.002, request=Request(model=r.model, blocks=tuple(_mark(st.blocks, ttl)),
                                                                    layer_params=params),
                                 stream=f"{r.parent}|absent", label=f"{r.parent}: latest request (transcript absent)",
                                 ttft=0.001),)
            _grow(st, instruction, r)
        elif prev is None or r.event or size < prev.size:
            static, verbatim = self.learned.get(r.family), None
            if static is None and prev is None and r.kind == "agent":
                # a sub-agent opening with the message of one whose first request read all of its
                # prompt from another session's (Claude Code's `Warmup`), at the same size (another
                # size: its environment changed): the same bytes, so the rest of the prompt is shared
                # too. Not for a main conversation: its own part differs from session to session (8 of
                # 8 opening like an earlier one that read whole read less; docs/rules.md)
                known = self.verbatim.get((r.shared, r.first_text))
                if known == size:
                    static = verbatim = known
            if static is None and prev is None and r.shared in self.own and self.shared.get(r.shared):
                # the session's own part as large as an earlier session's (same harness, type, model)
                static = self.shared[r.shared] + self.own[r.shared]
            confirmed: int | None = None   # a learned entry, or one read whole: all of it confirmed
            if static is None and prev is not None:
                static, confirmed = prev.static, self._confirmed(prev)
            elif static is None:
                static = max(0, size - self.count_text(r.first_text))
                if r.kind == "agent":
                    # where the system entry ends, as a sibling type's read showed it (else the estimate)
                    confirmed = self.entry.get(r.shared, static)
            static = min(static, size)
            if r.event == "lookback" and r.stripped and r.said is not None:
                logged = static   # only the static prefix is findable from what the logged requests cached
            epoch = prev.epoch + 1 if prev else 0
            blocks = self._static_blocks(r, static, verbatim is not None, confirmed, epoch)
            st = _Stream(blocks, static, epoch, static, ttl, r.model)
            _grow(st, size - static, r)
        else:
            st = prev
            st.ttl, st.model = ttl, r.model
            if st.blocks[0].tokens == 0 and self.shared.get(r.shared, 0) and st.blocks[0].data == \
                    f"cc-shared|{r.shared}".encode():
                # The cross-session prefix became known after this epoch began (its first read showed
                # it): the same entries, measured better; from now on the stream writes it for others.
                st.blocks, st.base = [*self._static_blocks(r, st.static, confirmed=self._confirmed(st),
                                                           epoch=st.epoch), *st.blocks[st.nstatic:]], None
            elif st.nstatic == 3 and self.learned.get(r.family, st.static) != self._confirmed(st) \
                    and self.learned.get(r.family, st.static) < st.static:
                # Where this epoch's system entry ends became known after it began (a sibling's read
                # showed it): the family's entry is that long, the rest stays the first message's (the
                # same blocks, measured better: the stream's own entries stay readable).
                st.blocks, st.base = [*self._static_blocks(r, st.static, confirmed=self.learned[r.family],
                                                           epoch=st.epoch), *st.blocks[3:]], None
            if prev.last and prev.size < u.cache_read < size:
                # The read went past the previous request's prompt into its reply: a request the
                # transcript does not log (sent after that reply) cached it. Learned from this request's
                # observation, so only later ones can use it: a rewind to that reply reads it.
                st.replies[prev.last] = u.cache_read
                reply = _mark([*st.blocks, _reply_block(r.stream, st.epoch, prev.last, u.cache_read - prev.size)], ttl)
                unlogged = (Call(t=r.start, request=Request(model=r.model, blocks=tuple(reply), layer_params=params),
                                 stream=f"{r.stream}|unlogged", label=f"{prev.last} reply", ttft=0.001,
                                 parent=r.stream),)
            if r.said is not None and r.fork is None and not r.event:
                logged = prev.size   # evidence only: the turn keeps its thinking, so the previous prompt is read
            _grow(st, size - prev.size, r)
        if st.blocks and st.blocks[0].data.startswith(b"cc-shared|") and st.blocks[0].data != \
                f"cc-shared|{r.shared}".encode():
            # the stream now carries another version of the cross-session prefix (generations.py)
            st.blocks, st.base = [*self._static_blocks(r, st.static, confirmed=self._confirmed(st), epoch=st.epoch),
                                  *st.blocks[st.nstatic:]], None
        st.size, st.thinking = size, thinking
        st.marks[r.request_id] = (len(st.blocks), size)
        st.last = r.request_id
        self.streams[r.stream] = st
        first = r.family not in self.families
        if r.parent is None and not rewound and r.event != "environment" and 0 < u.cache_read < size and (
                prev is None or r.event or u.cache_read < prev_size):
            # A partial read exposes a cached boundary of the static prefix, usable once logged: a
            # family's first request can only have read what another session wrote (the cross-session
            # prefix); a later one, past that, reads its own system entry (after a compaction, an expiry).
            if first or u.cache_read > self.shared.get(r.shared, 0):
                heapq.heappush(self._pending, (r.response, r.order, "shared" if first else "learned",
                                               r.shared if first else r.family, u.cache_read, r.shared))
        elif first and prev is None and r.kind == "agent" and 0 < u.cache_read == size:
            # A sub-agent's first request that read all of its prompt read another session's request
            # byte for byte (where in it the cross-session prefix ends, the read does not show)
            heapq.heappush(self._pending, (r.response, r.order, "verbatim", (r.shared, r.first_text), size,
                                           r.shared))
        if prev is None and r.parent is None and r.kind == "main" and not r.event:
            if u.cache_read == 0 < self.shared.get(r.shared, 0) and self.generations.warm(r.shared, r.stream, r.start):
                # read nothing of the cross-session prefix another session kept cached: other bytes
                self.generations.observed(base, r.stream, r.response, r.order, other_bytes=True)
            elif self.generations.carries_new(base, r.stream) and u.cache_read >= self.shared.get(base, 0) > 0 \
                    and not self.generations.warm(r.shared, r.stream, r.start):
                # read the old version's prefix where nobody had written the new one: the old bytes
                self.generations.observed(base, r.stream, r.response, r.order, other_bytes=False)
        outside = not absent and self._outside(r, prev is None, size)
        self.generations.used_by(r.shared, r.stream, r.start, r.response, ttl)
        self.families.add(r.family)
        tail = (Block(Layer.MESSAGES, f"cc-tail|{r.request_id}".encode(), "tail after the last breakpoint",
                      tokens=u.input_tokens),) if u.input_tokens else ()
        request = Request(model=r.model, blocks=_request_blocks(st, ttl, tail), layer_params=params)
        call = Call(t=r.start, request=request, stream=r.stream,
                    label=r.request_id, output_tokens=0, ttft=max(r.response - r.start, 0.001),
                    parent=r.parent,
                    event="compaction" if r.event == "compaction" else None)
        kept = ()
        if outside and request.blocks[0].tokens:
            kept = (Call(t=r.start - 0.002, request=Request(model=r.model, blocks=(request.blocks[0].with_breakpoint(ttl),),
                                                          layer_params=params),
                         stream=f"outside|{r.shared}", label="kept warm outside the data", ttft=0.001),)
        if logged is not None and r.suggests:
            # what this turn shows of the harness's end-of-turn request, for the stream's later turns and,
            # once its response is logged, other sessions' first
            seen = True if u.cache_read > logged + TURN_END_SLACK else False if u.cache_read >= logged * 0.9 else None
            if seen is not None:
                self.turn_end[r.stream] = seen
                for table, key in (("suggests_in", r.folder), ("suggests_any", "")):
                    heapq.heappush(self._pending, (r.response, r.order, table, key, int(seen), r.shared))
        self.replied[r.stream] = r.response
        return Record(call, r.request_id, r.timestamp, u, r.path, r.line, output_final=False, main=r.kind == "main",
                      unlogged=unlogged, timed=True, generated=r.generated, kept=kept, absent=conversation,
                      ended=ended)

    def _turn_end(self, st: _Stream, r: Raw, base: int, size: int, params, ttl: str) -> tuple[tuple[Call, ...], int]:
        """A request the harness sends when a turn ends, which the transcript does not log: it caches the
        conversation through the turn's last reply, as the next turn sends it (earlier thinking left out
        where that turn leaves it out). Taken as sent before `r`, a new user turn, where the stream's latest
        new turn read past what its logged requests cached; then `r` reads all but what the user typed.
        Returns (that call, or none; where `r`'s own part begins)."""
        top = size - min(r.said or 0, size)
        if not self._suggests(r) or top <= base:
            return (), base
        _append(st, Block(Layer.MESSAGES, f"cc-turn-end|{r.stream}|{st.epoch}|{st.last}".encode(),
                          f"the turn through {st.last}'s reply, as the next turn sends it", tokens=top - base))
        when = min(self.replied.get(r.stream, r.start) + 0.001, r.start - 0.002)
        call = Call(t=when, request=Request(model=r.model, blocks=tuple(_mark(st.blocks, ttl)), layer_params=params),
                    stream=f"{r.stream}|turn-end", label=f"end of the turn of {st.last} (not logged)", ttft=0.001)
        return (call,), top


    def _suggests(self, r: Raw) -> bool:
        """Whether `r`'s session is taken to send the prompt-suggestion request: as its latest new turn
        showed, else as the latest of its project's sessions, else of any session (none: no)."""
        seen = self.turn_end.get(r.stream)
        if seen is None:
            seen = bool(self.suggests_in.get(r.folder, self.suggests_any.get("", 0)))
        return seen

    def _outside(self, r: Raw, first: bool, size: int) -> bool:
        """Whether the cross-session prefix is taken as kept warm by traffic outside the data at `r`
        (nothing in the data used it within its TTL, the stream's own entries included), as the data's
        latest requests of the same key show (KEPT_RECENT of them: more than twice as many read it when
        nothing in the data kept it as read nothing, plus one). Also records what `r` shows, usable once
        its response is logged."""
        last = self.generations.last.get(r.stream)   # its own entries first: one lookup, before every stream's
        if (last and 0 <= r.start - last[0] < last[1]) or self.generations.warm(r.shared, r.stream, r.start):
            return False
        recent = self.kept.get(r.shared, ())
        hits, zeros = sum(recent), len(recent) - sum(recent)
        shared, read = self.shared.get(r.shared, 0), r.usage.cache_read
        if read == 0:
            heapq.heappush(self._kept_pending, (r.response, r.order, r.shared, 0))
        elif (shared and read >= shared) or (not shared and first and read < size):
            heapq.heappush(self._kept_pending, (r.response, r.order, r.shared, 1))
        return bool(shared) and hits > 2 * zeros + 1

    @staticmethod
    def _confirmed(st: _Stream) -> int | None:
        """The end of the stream's static prefix a read confirmed (None: all of it)."""
        return st.blocks[0].tokens + st.blocks[1].tokens if st.nstatic == 3 else None

    def _static_blocks(self, r: Raw, static: int, same_first: bool = False, confirmed: int | None = None,
                       epoch: int = 0) -> list[Block]:
        """The static prefix as two cached entries: the cross-session prefix (tools and the shared part
        of the system prompt, named by harness version, prompt type and model, so every session of the
        folder shares it) and the session's own part (environment, memory files), named by the family.
        Their names carry no size: each request measures them with what is known before it starts.
        Until a read has shown the cross-session prefix it is taken as empty: sessions share nothing
        that no observation showed them sharing. `same_first`: the session starts with a request
        another session was seen to send byte for byte; the rest of it is named by that message."""
        shared = min(self.shared.get(r.shared, 0), static)
        if same_first:
            first = xxhash.xxh3_64_hexdigest(r.first_text.encode("utf-8", "surrogatepass"))
            name, label = f"cc-first|{r.shared}|{first}", "first request as another session sent it"
        else:
            name, label = f"cc-static|{r.family}|{r.env}", f"{r.family} static prefix"
            version = r.shared.split("|", 1)[0]
            if r.event == "environment" and uncertain_cd(version):
                label += f" in a new working directory (unconfirmed on Claude Code {version}: 2.1.146 keeps the launch one)"
        # An estimate no read confirmed (the prompt less its first message's visible text) also holds
        # what the harness adds to that message (CLAUDE.md, reminders), past the system prompt's
        # breakpoint: no entry ends there, so siblings and later epochs cannot read it (docs/rules.md
        # "### Where the static prefix ends"). The family's entry is what a read confirmed; the rest
        # is this epoch's first message.
        end = static if confirmed is None else max(shared, min(confirmed, static))
        out = [Block(Layer.SYSTEM, f"cc-shared|{r.shared}".encode(), "cross-session prefix", tokens=shared),
               Block(Layer.SYSTEM, name.encode(), label, tokens=end - shared)]
        if confirmed is not None:
            out.append(Block(Layer.MESSAGES, f"cc-context|{r.stream}|{epoch}".encode(),
                             "context the harness adds to the first message", tokens=static - end))
        return out


@lru_cache(maxsize=64)
def _thinking_params(thinking: str) -> tuple[bytes, bytes, bytes]:
    """The layer parameters of a turn's thinking setting: a change invalidates the messages, on every
    model (providers.tables.THINKING_LAYER)."""
    return (b"", b"", f"thinking={thinking}".encode()) if thinking else (b"", b"", b"")


def _ttl_of(u: Usage, default: str) -> str:
    """The TTL the harness asked for, as its writes show (a property of the harness, not the cache)."""
    if u.cache_write_1h > u.cache_write_5m:
        return "1h"
    if u.cache_write_5m > 0:
        return "5m"
    return default
