"""A calibrated stream's history as blocks (`_Stream`): grown in place as requests add to it, with the
breakpoints where Claude Code puts them (the two static entries and the last history block)."""
from __future__ import annotations

from dataclasses import dataclass, field

from prefixsim.core.sharedseq import MIN_SHARED, PrefixTuple
from prefixsim.model import Block, Layer
from prefixsim.sources.claude_code.raw import Raw


@dataclass(slots=True)
class _Stream:
    blocks: list[Block]   # the stream's own list, grown in place (`_grow`); replaced, never cut
    size: int          # B of the last request
    epoch: int
    static: int
    ttl: str
    model: str
    #: this epoch's requests: request id -> (blocks, size) of the history it sent (a rewind returns there)
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: request id -> size of its prompt through its reply, as a later read proved it cached
    replies: dict[str, int] = field(default_factory=dict)
    last: str = ""
    # `blocks` with the two static entries marked with `marked` (their TTL), grown with it: the base
    # every request of the stream shares its leading blocks with (`_request_blocks`). Whenever
    # `blocks` is replaced (a rewind, better-measured static entries) it is reset to None.
    base: list[Block] | None = None
    marked: str = ""
    thinking: str = ""   # the setting its latest request was sent with

    @property
    def nstatic(self) -> int:
        """How many of `blocks` lead as the static prefix: 2 (the two entries), or 3 when the estimate
        runs past what any read confirmed (`_static_blocks`: the rest is the first message's)."""
        return 3 if len(self.blocks) > 2 and self.blocks[2].data.startswith(b"cc-context|") else 2


def _reply_block(stream: str, epoch: int, request_id: str, tokens: int) -> Block:
    return Block(Layer.MESSAGES, f"cc-reply|{stream}|{epoch}|{request_id}".encode(), f"reply of {request_id}",
                 tokens=tokens)


def _grow(st: _Stream, delta: int, r: Raw) -> None:
    """The history block a request added (`delta` tokens), appended in place: requests refer to the
    stream's lists by their first k items only (`_request_blocks`), which appending never changes."""
    if delta <= 0:
        return
    i = len(st.blocks)
    _append(st, Block(Layer.MESSAGES, f"cc-hist|{r.stream}|{st.epoch}|{i}|{r.request_id}".encode(),
                      f"history[{i + 1 - st.nstatic}] (added by {r.request_id})", tokens=delta))


def _append(st: _Stream, b: Block) -> None:
    """`b` at the end of the stream's history and of its marked base (if made)."""
    st.blocks.append(b)
    if st.base is not None:
        st.base.append(b)


def _request_blocks(st: _Stream, ttl: str, tail: tuple[Block, ...]) -> tuple[Block, ...] | PrefixTuple:
    """The request's blocks: breakpoints on the two static entries and the last history block, none
    elsewhere, then `tail`. Past MIN_SHARED blocks, the stream's marked base up to the last history
    block and the rest, by reference (sharedseq.PrefixTuple): no per-request copy of the history, and
    the runner finds what two requests share without comparing it."""
    if st.base is None or st.marked != ttl:   # a new epoch, or the harness's TTL changed: marked anew
        st.base = [st.blocks[0].with_breakpoint(ttl), st.blocks[1].with_breakpoint(ttl), *st.blocks[2:]]
        st.marked = ttl
    base = st.base
    k = max(len(base) - 1, 2)
    own = (base[-1].with_breakpoint(ttl),) + tail if len(base) > 2 else tail
    if k < MIN_SHARED:
        return (*base[:k], *own)
    return PrefixTuple(base, k, own)


def _mark(blocks: list[Block], ttl: str) -> list[Block]:
    """Breakpoints on the two static entries and the last history block, none elsewhere (a stream's
    blocks carry none, so only those are replaced: no per-block work on a long history)."""
    out = list(blocks)
    out[0] = out[0].with_breakpoint(ttl)
    out[1] = out[1].with_breakpoint(ttl)
    out[-1] = out[-1].with_breakpoint(ttl)
    return out
