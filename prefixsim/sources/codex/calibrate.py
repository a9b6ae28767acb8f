"""Codex calls (`rollout.Raw`) -> Records whose prompts are rebuilt from the observed sizes.

A rollout holds what the model saw but no token counts per item, no tool definitions and no base
instructions' tokens, so, as for Claude Code transcripts, each request is rebuilt from its usage:
`input_tokens` is the whole prompt (cached included), `output_tokens` the response (reasoning
included). Blocks of one request: [cross-session prefix] [the session's own static part] [one block
per earlier growth and reply]. OpenAI caches every prefix past its minimum, so no breakpoints; the
response is the request's `output`, cached with it, and the next request of the turn sends it back.

- within a user turn, a request is the previous prompt, its reply (the response's output tokens:
  reasoning and calls are sent back), then what came since (tool outputs);
- the first request of a new user turn keeps the prompt only up to the first request of the turn
  before whose response reasoned: OpenAI drops earlier turns' reasoning from the context (the
  reasoning guide, docs/rules.md#openai-automatic-prompt-caching), so the history parts there;
- a compaction (`compacted`) starts a new epoch: the static prefix, then the replacement history;
  so does a prompt smaller than the part it would keep;
- a rollback of N user turns returns to the history before the N-th last turn began;
- a fork (`forked_from_id`, its parent's rollout in the same replay) starts from its parent's
  latest prompt and reply, so it reads the parent's cache;
- the cross-session prefix (instructions and tools, the same for every session of one Codex version
  and model) is learned from a session's first request that read part of its prompt, usable once
  that response began; until then it is taken as empty. The session's static part is its first
  prompt less its first user message (counted with cl100k).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from prefixsim.core.sharedseq import MIN_SHARED, PrefixTuple
from prefixsim.model import Block, Call, Layer, Request
from prefixsim.sources.codex.rollout import Raw
from prefixsim.sources.record import Record


@dataclass(slots=True)
class _Stream:
    blocks: list[Block]          # append-only; replaced (never cut) when the history parts
    size: int                    # the latest prompt's tokens
    static: int
    epoch: int
    reply: Block | None = None   # the latest response, as the next request of the turn sends it back
    #: (blocks, size) of the prompt of the current turn's first request whose response reasoned
    reasoned_at: tuple[int, int] | None = None
    #: (blocks, size) of the history each user turn started from (a rollback returns there)
    turns: list[tuple[int, int]] = field(default_factory=list)
    #: (blocks, size) before the block the latest request added (where its new content began)
    grown: tuple[int, int] = (0, 0)


class Calibrator:
    """Turns raw calls, fed in start order (`step`), into Records; keeps only per-stream state."""

    def __init__(self, count_text) -> None:
        self.count_text = count_text
        self.streams: dict[str, _Stream] = {}
        self.shared: dict[str, int] = {}          # shared key -> size of the cross-session prefix
        self._pending: list[tuple[float, int, str, int]] = []   # (usable from, order, key, size)

    def _learn_until(self, now: float) -> None:
        while self._pending and self._pending[0][0] <= now:
            _, _, key, size = heapq.heappop(self._pending)
            self.shared.setdefault(key, size)

    def step(self, r: Raw) -> Record:
        self._learn_until(r.start)
        size = r.prompt
        st = self.streams.get(r.stream)
        parent = self.streams.get(r.parent) if r.parent and st is None else None
        if parent is not None and size >= parent.size + ((parent.reply.tokens or 0) if parent.reply else 0):
            st = _Stream(list(parent.blocks), parent.size, parent.static, parent.epoch, parent.reply)
            self._continue(st, size, r)
        elif st is None or r.event == "compaction":
            st = self._epoch(st, size, r)
        elif r.event == "rollback" and r.rolled_back and st.turns:
            k, base = st.turns[-min(r.rolled_back, len(st.turns))]
            del st.turns[-min(r.rolled_back, len(st.turns)):]
            st = self._from(st, k, base, size, r) if size >= base else self._epoch(st, size, r)
        elif r.new_turn and st.reasoned_at is not None:
            k, base = st.reasoned_at
            st = self._from(st, k, base, size, r) if size >= base else self._epoch(st, size, r)
        elif size >= st.size:
            self._continue(st, size, r)
        else:
            st = self._epoch(st, size, r)
        if r.new_turn or not st.turns:
            st.turns.append(st.grown)
            st.reasoned_at = None
        if r.reasoned and st.reasoned_at is None:
            st.reasoned_at = (len(st.blocks), size)
        st.size = size
        st.reply = Block(Layer.MESSAGES, f"cx-reply|{r.stream}|{st.epoch}|{r.request_id}".encode(),
                         f"reply of {r.request_id}", tokens=r.output) if r.output else None
        self.streams[r.stream] = st
        blocks = tuple(st.blocks) if len(st.blocks) < MIN_SHARED else PrefixTuple(st.blocks, len(st.blocks), ())
        request = Request(model=r.model, blocks=blocks, output=(st.reply,) if st.reply else ())
        call = Call(t=r.start, request=request, stream=r.stream, label=r.request_id, output_tokens=r.output,
                    ttft=max(r.response - r.start, 0.001), parent=r.parent if parent is not None else None,
                    event="compaction" if r.event == "compaction" else None)
        return Record(call, r.request_id, r.timestamp, r.usage, r.path, r.line, provider=r.provider, timed=True)

    def _epoch(self, prev: _Stream | None, size: int, r: Raw) -> _Stream:
        """A history that keeps only the static prefix: a session's first request, or after a
        compaction (the summary replaces the conversation)."""
        if prev is None:
            u = r.usage
            if 0 < u.cache_read < size:
                # a first request that read part of its prompt read another session's prefix
                heapq.heappush(self._pending, (r.response, r.order, r.shared, u.cache_read))
            static = max(0, size - self.count_text(r.first_text)) if r.first_text else size
        else:
            static = prev.static
        static = min(static, size)
        shared = min(self.shared.get(r.shared, 0), static)
        epoch = prev.epoch + 1 if prev else 0
        # Named without a size: the same entries, measured with what is known when the request starts.
        st = _Stream([Block(Layer.SYSTEM, f"cx-shared|{r.shared}".encode(), "cross-session prefix", tokens=shared),
                      Block(Layer.SYSTEM, f"cx-static|{r.session}".encode(), f"session {r.session} static prefix",
                            tokens=static - shared)], static, static, epoch)
        _grow(st, size - static, r)
        return st

    def _from(self, st: _Stream, k: int, base: int, size: int, r: Raw) -> _Stream:
        """The history as it stood `k` blocks in (`base` tokens), then what this request adds."""
        new = _Stream(st.blocks[:k], base, st.static, st.epoch, None, None, st.turns)
        _grow(new, size - base, r)
        return new

    def _continue(self, st: _Stream, size: int, r: Raw) -> None:
        """The previous prompt, its reply (as large as the response was, when the prompt holds it),
        then what came since."""
        if st.reply is not None and size >= st.size + (st.reply.tokens or 0):
            st.blocks.append(st.reply)
            st.size += st.reply.tokens or 0
        _grow(st, size - st.size, r)


def _grow(st: _Stream, delta: int, r: Raw) -> None:
    """What the request added (`delta` tokens) as one history block, appended in place: requests refer
    to the stream's list by its first k items only, which appending never changes."""
    st.grown = (len(st.blocks), st.size)
    if delta > 0:
        i = len(st.blocks)
        st.blocks.append(Block(Layer.MESSAGES, f"cx-hist|{r.stream}|{st.epoch}|{i}|{r.request_id}".encode(),
                               f"history[{i - 2}] (added by {r.request_id})", tokens=delta))
    st.size += max(delta, 0)
