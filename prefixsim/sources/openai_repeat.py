"""A Chat request built from what its conversation's previous request was built to.

A gateway's log sends a conversation's whole history on every line; its reader shares what a line
repeats of the conversation's last line (`sources.linejson`: the same message objects, also lines
back). What a request makes of its tools and of each message, before its own new ones, is then what
that previous request made: the same pieces (rendered once, `wire.reuse`), digests, token counts,
sizes between the same anchors, and blocks. Taking them from it costs a slice per request; making
them again cost the whole history per request (issue 35: ~0.1 s of the 600 requests of
bench/openai_log_throughput.py). Only a Chat body whose pieces are all plain (no reasoning item, no
reference to an earlier output: their sizes and blocks come from the reader's state as it is when
they are read) is built so, and kept for its conversation's next request.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prefixsim.sources.linejson import RECENT_LINES

if TYPE_CHECKING:
    from prefixsim.model import Block
    from prefixsim.wire.openai import Piece

#: Conversations whose last request is kept. The line parser shares values with the last RECENT_LINES
#: lines only, so an older conversation's next request holds none of its objects: kept longer, it
#: could not be reused, and it would hold its history's text alive.
KEPT = RECENT_LINES

@dataclass(slots=True)
class Built:
    """What one Chat request was built to, for the next request of its conversation."""

    head: tuple                # (provider, model, prefix settings): where its digests start
    tools: list | None         # the tool definitions as parsed (their objects)
    messages: list             # the messages as parsed (their objects)
    ends: list[int]            # the number of pieces before each message and after the last
    pieces: list[Piece]
    chain: list[bytes]         # the digest at each piece's end
    counts: list[int]          # each piece's count, the last one's without the reply primer
    marks: list[tuple[int, int]]   # (pieces, tokens) at each anchor its sizes were spread between
    sizes: list[int]
    blocks: tuple[Block, ...]


def conversation(body: dict) -> tuple | None:
    """The key a Chat body's conversation is kept under (its prompt_cache_key and user, as the
    replay's stream), None for a body that is not built from an earlier one (Responses, instructions)."""
    key, user = body.get("prompt_cache_key"), body.get("user")
    if not isinstance(body.get("messages"), list) or "input" in body or "instructions" in body \
            or not isinstance(key, (str, type(None))) or not isinstance(user, (str, type(None))):
        return None
    return key, user


def repeated(last: Built | None, head: tuple, body: dict) -> int | None:
    """How many leading messages of `body` are `last`'s own objects (its tools being the same objects
    too, in the same namespace): None when nothing can be taken from `last`."""
    if last is None or last.head != head:
        return None
    tools, messages = body.get("tools"), body["messages"]
    if tools is not last.tools and not (isinstance(tools, list) and isinstance(last.tools, list)
                                        and len(tools) == len(last.tools) and all(map(operator.is_, tools, last.tools))):
        return None
    return _lead(messages, last.messages)


def unmarked(last: Built | None, body: dict) -> int:
    """How many leading messages of `body` are `last`'s own objects: messages it sent without a
    cache_control marker (`routers.breakpoints` keeps only those as they are)."""
    return 0 if last is None else _lead(body["messages"], last.messages)


def _lead(messages: list, earlier: list) -> int:
    """How many leading items of `messages` are those of `earlier` (the same objects)."""
    k = min(len(messages), len(earlier))
    same = list(map(operator.is_, messages[:k], earlier[:k]))
    return same.index(False) if False in same else k


def plain(pieces: list[Piece]) -> bool:
    """No piece whose size or content the reader's state gives (a reasoning item, an item reference)."""
    return not any(p.reasoning or p.ref for p in pieces)


def spread_before(last: Built | None, marks: list[tuple[int, int]], shared: int) -> tuple[list[int], int]:
    """(the sizes `last` spread between the leading anchors it has in common with `marks`, the index
    of the last of those marks): the same spans of the same counts between the same anchors (within
    the `shared` leading pieces, and short of `last`'s final piece, whose count carried the reply
    primer). ([], 0) when none."""
    if last is None:
        return [], 0
    limit = min(shared, len(last.pieces) - 1)
    n = 0
    for x, y in zip(marks, last.marks):
        if x != y or x[0] > limit:
            break
        n += 1
    return (last.sizes[:marks[n - 1][0]], n - 1) if n > 1 else ([], 0)


def kept(memory: dict[Any, Built], key: tuple | None, built: Built) -> None:
    """Keep `built` for its conversation's next request (the conversation built least recently
    forgotten past KEPT)."""
    memory.pop(key, None)
    memory[key] = built
    if len(memory) > KEPT:
        del memory[next(iter(memory))]
