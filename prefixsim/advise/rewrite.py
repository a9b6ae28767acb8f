"""The same traffic with each request rewritten as a proposed change would send it: the what-if a
recommendation is verified by. A rewrite is a factory of a per-walk function (a walk may keep
state, e.g. the first value seen at a path), so the traffic can be walked once per replay."""
from __future__ import annotations

import heapq
import json
from dataclasses import replace
from typing import Callable, Iterable, Iterator

from prefixsim.model import PROMPT_END, Block, Call, Layer
from prefixsim.sources.record import Record
from prefixsim.sources.traffic import Head, Traffic

#: A per-walk rewrite of one record.
Step = Callable[[Record], Record]

#: The time to first token a replay assumes where the source gave none (core/simulator.Simulator's default).
DEFAULT_TTFT = 1.0


class Rewritten(Traffic):
    """`base` with every record passed through `make()` (fresh per walk); with `reorder`, the
    rewritten records are walked in their new time order (a rewrite that moves start times)."""

    def __init__(self, base: Traffic, make: Callable[[], Step], reorder: bool = False) -> None:
        self.base, self.make, self.reorder = base, make, reorder
        self.parts, self.t0 = base.parts, base.t0

    def __len__(self) -> int:
        return len(self.base)

    def heads(self) -> Iterator[Head]:
        return self.base.heads()

    def __iter__(self) -> Iterator[Record]:
        out = map(self.make(), iter(self.base))
        if self.reorder:   # stable: requests that start together keep the recorded order
            return iter(sorted(out, key=lambda r: r.call.t))
        return out


def calls(rec: Record, f: Callable[[Call], Call]) -> Record:
    """`rec` with `f` applied to its call and to each later model iteration."""
    return replace(rec, call=f(rec.call), iterations=tuple(f(c) for c in rec.iterations))


def with_blocks(call: Call, blocks: Iterable[Block]) -> Call:
    blocks = tuple(blocks)
    if blocks == call.request.blocks:
        return call
    return replace(call, request=replace(call.request, blocks=blocks))


def timeless() -> Step:
    """Every request at t = 0 with its write readable at once: nothing expires and nothing is still
    pending, so a request reads every prefix an earlier request wrote that the rules let it read
    (order kept). The oracle that attribution measures losses against."""
    return lambda rec: calls(rec, lambda c: replace(c, t=0.0, ttft=0.0))


def hold(held: frozenset[tuple[str, str]]) -> Callable[[], Step]:
    """Hold each request of `held` ((stream, request id) pairs: requests that found an earlier
    write not yet readable) until the writes of the requests running when it started are readable
    (their start + time to first token); the rest of its stream moves with it."""

    def make() -> Step:
        shift: dict[str, float] = {}
        running: list[float] = []   # heap of the readable-from times of earlier requests

        def step(rec: Record) -> Record:
            c = rec.call
            if c.stream not in shift:   # a child launched by a held stream starts later too
                shift[c.stream] = shift.get(c.parent or "", 0.0)
            t = c.t + shift[c.stream]
            while running and running[0] <= t - 3600:   # long past: nothing holds on it
                heapq.heappop(running)
            if (c.stream, rec.request_id) in held:
                pending = [a for a in running if a > t]
                if pending:
                    wait = max(pending) - t
                    shift[c.stream] = shift.get(c.stream, 0.0) + wait
                    t += wait
            heapq.heappush(running, t + (DEFAULT_TTFT if c.ttft is None else c.ttft))
            return calls(rec, lambda x: replace(x, t=round(x.t + (t - c.t), 3)))
        return step
    return make


def _marked(blocks: tuple[Block, ...]) -> list[int]:
    return [i for i, b in enumerate(blocks) if b.breakpoint]


def add_breakpoint(layer: Layer) -> Callable[[], Step]:
    """One more cache_control, on the last block of `layer`, where the request has a free slot (at
    most 4, A-PC) and none there yet; its TTL is the next marker's (else the previous one's), so 1h
    entries still come before 5m ones."""
    def one(c: Call) -> Call:
        blocks, req = c.request.blocks, c.request
        marked = _marked(blocks)
        last = max((i for i, b in enumerate(blocks) if b.layer == layer), default=None)
        slots = len(marked) + (1 if req.auto_cache else 0)
        if last is None or not marked or blocks[last].breakpoint or slots >= 4:
            return c
        ttl = next((blocks[i].breakpoint for i in marked if i > last), blocks[marked[-1]].breakpoint)
        return with_blocks(c, (b.with_breakpoint(ttl) if i == last else b for i, b in enumerate(blocks)))
    return lambda: (lambda rec: calls(rec, one))


def move_last_breakpoint() -> Step:
    """The last cache_control moved onto the last block of the prompt (the whole prompt cached)."""
    def one(c: Call) -> Call:
        blocks = c.request.blocks
        marked = _marked(blocks)
        end = len(blocks) - 1
        if end > 0 and blocks[end].data == PROMPT_END:
            end -= 1
        if not marked or marked[-1] >= end or c.request.auto_cache:
            return c
        ttl = blocks[marked[-1]].breakpoint
        return with_blocks(c, (b.with_breakpoint(None) if i == marked[-1] else b.with_breakpoint(ttl) if i == end
                               else b for i, b in enumerate(blocks)))
    return lambda rec: calls(rec, one)


def stable_order() -> Step:
    """Tool definitions in one fixed order (by their bytes) and the keys of every tool and system
    block sorted: the same tools and system text give the same prefix whatever order they came in."""
    def sorted_keys(b: Block) -> Block:
        if b.layer == Layer.MESSAGES:
            return b
        try:
            value = json.loads(b.data)
        except ValueError:
            return b
        data = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
        return b if data == b.data else replace(b, data=data)   # keeps its size and what the model sees

    def one(c: Call) -> Call:
        blocks = [sorted_keys(b) for b in c.request.blocks]
        tools = [i for i, b in enumerate(blocks) if b.layer == Layer.TOOLS]
        if tools and tools == list(range(tools[0], tools[-1] + 1)):
            marks = [blocks[i].breakpoint for i in tools]   # markers stay at their positions
            order = sorted((blocks[i] for i in tools), key=lambda b: b.data)
            for k, (i, b) in enumerate(zip(tools, order)):
                blocks[i] = replace(b, path=f"tools[{k}]", breakpoint=marks[k])
        return with_blocks(c, blocks)
    return lambda rec: calls(rec, one)


def pad(tokens: dict[str, int]) -> Callable[[], Step]:
    """Each request of a stream in `tokens` opens with a block of that many filler tokens, the same
    on every request, so its first breakpoint's prefix reaches the model's minimum."""
    def one(stream_tokens: int, c: Call) -> Call:
        blocks = c.request.blocks
        if not blocks:
            return c
        filler = Block(blocks[0].layer, b"padding to the minimum cacheable length", "padding", None, stream_tokens)
        return with_blocks(c, (filler, *blocks))

    def step(rec: Record) -> Record:
        n = tokens.get(rec.call.stream)
        return rec if n is None else calls(rec, lambda c: one(n, c))
    return lambda: step


def stream_ttl(stream: str, ttl: str) -> Step:
    """Every cache_control of one stream's requests at `ttl` (the other streams as recorded)."""
    def one(c: Call) -> Call:
        req = c.request
        blocks = tuple(b.with_breakpoint(ttl) if b.breakpoint else b for b in req.blocks)
        auto = ttl if req.auto_cache else None
        if blocks == req.blocks and auto == req.auto_cache:
            return c
        return replace(c, request=replace(req, blocks=blocks, auto_cache=auto))
    return lambda rec: calls(rec, one) if rec.call.stream == stream else rec
