"""Token sizes of an OpenAI-format request's pieces: counted with the model's encoding, then pinned
to the observed usage (exact at each request's end, and at every earlier request's end it starts
with), the difference spread over the pieces counted least surely."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import xxhash

from prefixsim.core.tokens import remembered_count
from prefixsim.model import Block
from prefixsim.sources.openai_repeat import Built, spread_before
from prefixsim.sources.anthropic_log import Sizer
from prefixsim.wire import openai as R
from prefixsim.wire.reuse import PieceMemo

#: Where an anchor's residual is spread as an addition rather than a scale: within this share of the
#: counted size, the count is taken as right up to a few framing or tool tokens.
ADDITIVE_WITHIN = 0.10
#: Chains, reasoning sizes and item ids kept per reader (least recently added forgotten first).
REMEMBERED = 65536



@dataclass
class SizerMemory:
    """What one reader learned from earlier requests: observed token counts at chain positions
    (anchors), the size of each reasoning item a response produced, and each response's conversation
    (for `previous_response_id`)."""

    anchors: dict[bytes, int] = field(default_factory=dict)
    reasoning: dict[str, int] = field(default_factory=dict)
    conversations: dict[str, tuple[R.Piece, ...]] = field(default_factory=dict)
    items: dict[str, tuple[R.Piece, ...]] = field(default_factory=dict)   # output item id -> its blocks
    counts: dict[tuple[str, bytes], int] = field(default_factory=dict)
    seen: PieceMemo = field(default_factory=PieceMemo)   # messages and tools rendered, by content
    blocks: dict[tuple, Block] = field(default_factory=dict)   # the blocks made, by what makes them
    built: dict[tuple, Built] = field(default_factory=dict)    # each conversation's last Chat request

    def remember(self, table: dict, key: Any, value: Any) -> None:
        table[key] = value
        if len(table) > REMEMBERED:
            del table[next(iter(table))]

    def block(self, piece: R.Piece, tokens: int) -> Block:
        """`piece.block(tokens)`, the same object as an earlier request's when it is made of the same:
        a log repeats a conversation's history, whose blocks keep their paths and sizes, and a Block
        is frozen. Each is made (its content key hashed) once, and a replay comparing a request with
        the one before it finds the blocks they share by identity."""
        key = (piece.layer, piece.data, piece.path, tokens, piece.lead, piece.text, piece.uncertain)
        b = self.blocks.get(key)
        if b is None:
            b = piece.block(tokens)
            self.remember(self.blocks, key, b)
        return b


def state_of(sizer: Sizer) -> SizerMemory:
    """The reader state that goes with a sizer (one per log or cassette, kept across its walks)."""
    st = sizer.__dict__.get("openai_state")
    if st is None:
        st = sizer.__dict__["openai_state"] = SizerMemory()
    return st


def _count(st: SizerMemory, enc: str, piece: R.Piece) -> int:
    key = (enc, piece.data)
    n = st.counts.get(key)
    if n is None:
        count = _counter(enc)
        n = sum(count(t) for t in piece.text if t)
        st.remember(st.counts, key, n)
    return n + piece.fixed


_COUNTERS: dict[str, Callable[[str], int]] = {}


def _counter(name: str) -> Callable[[str], int]:
    """`name`'s count, remembered across runs (`core.tokens.remembered_count`): a replay of a log
    whose texts an earlier run counted does not build the encoding (~0.4 s of o200k_base)."""
    count = _COUNTERS.get(name)
    if count is None:
        count = _COUNTERS[name] = remembered_count(name)
    return count


def _spread(counts: list[int], delta: int, uncertain: list[bool]) -> list[int]:
    """`counts` made to total `delta`. The difference goes to the blocks whose count is least sure
    (tool definitions, images, a history the log lacks) when they can take it; else, when it is
    small, to the last block (the reply primer, framing); else every count is scaled (cumulative
    rounding, no drift)."""
    if not counts:
        return []
    counted = sum(counts)
    diff = delta - counted
    targets = [i for i, u in enumerate(uncertain) if u]
    if not (targets and sum(counts[i] for i in targets) + diff >= 0):
        targets = [len(counts) - 1] if abs(diff) <= ADDITIVE_WITHIN * counted and counts[-1] + diff >= 0 else []
    if targets:
        out = list(counts)
        share = sum(out[i] for i in targets)
        prev = cum = 0
        for k, i in enumerate(targets):
            cum += out[i]
            part = round(diff * cum / share) if share else (diff if k == len(targets) - 1 else 0)
            out[i] += part - prev
            prev = part
        return out
    if counted == 0:
        return [0] * (len(counts) - 1) + [delta]
    sizes, cum, prev = [], 0, 0
    for c in counts:
        cum += c
        here = round(delta * cum / counted)
        sizes.append(here - prev)
        prev = here
    return sizes


def _chain(seed: bytes, pieces: list[R.Piece]) -> list[bytes]:
    out, d = [], seed
    for p in pieces:
        d = xxhash.xxh3_128_digest(d + bytes((int(p.layer),)) + p.data)
        out.append(d)
    return out


def _sizes(st: SizerMemory, enc: str, pieces: list[R.Piece], chain: list[bytes], total: int | None,
           last: Built | None = None, shared: int = 0, made: dict | None = None) -> list[int]:
    """Each piece's tokens: counted, then made exact at every anchor (an earlier request's observed
    end or output end that this request starts with) and at this request's observed end. With `last`
    (the conversation's previous request, whose first `shared` pieces are these: `openai_repeat`),
    their counts, and the sizes it spread between the same anchors, are its own. `made` gets the
    counts (the last one's without the primer) and the anchors' marks."""
    counts = last.counts[:shared] if last is not None else []
    for p in pieces[len(counts):]:
        size = st.reasoning.get(p.reasoning) if p.reasoning else None
        counts.append(size if size is not None else _count(st, enc, p))
    if made is not None:
        made["counts"] = list(counts)
    if counts:
        counts[-1] += R.PRIMER
    marks = [(0, 0)]
    for i, d in enumerate(chain):
        a = st.anchors.get(d)
        if a is not None and a >= marks[-1][1] and (total is None or a <= total):
            marks.append((i + 1, a))
    if total is not None and (marks[-1][0] < len(pieces) or marks[-1][1] != total) and total >= marks[-1][1]:
        if marks[-1][0] == len(pieces):
            marks.pop()
        marks.append((len(pieces), total))
    sizes, start = spread_before(last, marks, shared)
    for (a, x), (b, y) in zip(marks[start:], marks[start + 1:]):
        sizes.extend(_spread(counts[a:b], y - x, [p.uncertain for p in pieces[a:b]]))
    sizes.extend(counts[len(sizes):])
    if made is not None:
        made["marks"] = marks
    return sizes
