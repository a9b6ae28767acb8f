"""The lines of a request log in the order the replay runs them: by time, ties by the line's own bytes.

A reader fixes things as it goes: a block's size once it is scaled to an observed total, the counts
the OpenAI and Gemini readers anchor later requests on, which of two lines with one id is kept, the
ids it makes up for lines without one. The replay runs in time order. Were the lines read in file
order, two lines swapped (their timestamps unchanged) would give other sizes and other numbers; read
in time order, the same traffic gives the same numbers in any file order
(docs/rules.md#request-logs-line-order-ids-and-skipped-requests).

The order: when every request line gives a time, by time; lines with one time by their length in
bytes (a conversation's later request repeats the earlier one and adds to it), then by a digest of
their bytes, which no file order changes. A log with a request line that gives no time is read in
file order, as before: such a line's time is its place in the log (`anthropic_log.DEFAULT_SPACING`
apart), so the file's order is all it has. A line that is no request, or whose time cannot be read,
is skipped by its reader wherever it comes.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import xxhash

from prefixsim.sources import problems
from prefixsim.sources.jsonl import UNREAD, lines_at, parsed, read_buffer
from prefixsim.sources.linejson import LineParser

#: A format's time of a parsed request line: epoch seconds, None when the line gives none; it raises
#: for a line that is no request or whose time cannot be read (its reader names it when it reads it).
LineTime = Callable[[Any], "float | None"]


def _key(when: LineTime, n: int, raw: bytes, parser: LineParser) -> tuple | None:
    try:
        obj = parser.loads(raw.decode("utf-8"))
        t = when(obj)
    except problems.LINE_ERRORS:   # a line that does not parse, or is no request: named when it is read,
        return (0, n)                # and skipped wherever it comes
    return None if t is None else (1, t, len(raw), xxhash.xxh3_128_digest(raw))


def ordered_lines(path: Path, when: LineTime) -> Iterator[tuple[int, int, Any]]:
    """(line number, byte offset, parsed value) of each line that parses, in time order. A first
    pass keeps each line's key and offset only; the second reads each line again at its offset
    (naming those that do not parse), so memory follows the number of lines, not their bytes. A log
    already in time order reads forward: each seek lands in the read buffer."""
    first = LineParser()
    entries = [(_key(when, n, raw, first), n, at) for n, at, raw in lines_at(path)]
    if all(key is not None for key, _, _ in entries):
        entries.sort(key=lambda e: e[0])
    parser = LineParser()   # shares values between lines adjacent in the new order
    with path.open("rb", buffering=read_buffer(path.stat().st_size)) as fh:
        for _, n, at in entries:
            fh.seek(at)
            obj = parsed(path, n, fh.readline(), parser.loads)
            if obj is not UNREAD:
                yield n, at, obj
