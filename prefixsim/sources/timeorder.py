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

from prefixsim._perf.heap import reuse_for_long_lines
from prefixsim.sources import problems
from prefixsim.sources.files import open_regular
from prefixsim.sources.jsonl import UNREAD, lines_at, parsed, read_buffer
from prefixsim.sources.linejson import LineParser

#: A format's time of a parsed request line: epoch seconds, None when the line gives none; it raises
#: for a line that is no request or whose time cannot be read (its reader names it when it reads it).
LineTime = Callable[[Any], "float | None"]


#: Characters of new values the first pass keeps for the second, for a log whose file order is the
#: replay's (most logs are written in time order): those lines are parsed once, not twice. A line's
#: values cost what it does not share with the lines before it (`LineParser.fresh`: a log that repeats
#: its history costs its new messages, not its bytes), about 1.2 bytes per character; the lines past
#: it (and past the line that fills it) are read again, as all were.
HOLD = 64 << 20


def _parse(when: LineTime, n: int, raw: bytes, parser: LineParser) -> tuple[tuple | None, Any]:
    """(the line's order key, its value; UNREAD when it does not parse)."""
    try:
        obj = parser.loads(raw.decode("utf-8"))
    except problems.LINE_ERRORS:   # a line that does not parse: named when it is read,
        return (0, n), UNREAD        # and skipped wherever it comes
    try:
        t = when(obj)
    except problems.LINE_ERRORS:   # no request, or its time cannot be read: its reader names it
        return (0, n), obj
    return None if t is None else (1, t, len(raw), xxhash.xxh3_128_digest(raw)), obj


def ordered_lines(path: Path, when: LineTime, hold: bool = True) -> Iterator[tuple[int, int, Any]]:
    """(line number, byte offset, parsed value) of each line that parses, in time order. A first
    pass keeps each line's key and offset; the second reads each line again at its offset (naming
    those that do not parse), so memory follows the number of lines, not their bytes. A log already
    in time order reads forward (each seek lands in the read buffer), and its leading lines are not
    parsed again while their new values fit `HOLD`: the first pass's values are what the second would
    make (the same lines through a `LineParser` in the same order, values shared between the same lines).
    Without `hold` (a reader whose memory must follow the lines: `api_log`), every line is read again."""
    try:
        size = path.stat().st_size
    except OSError:   # open_regular names what is wrong with the path
        size = 0
    reuse_for_long_lines(size)   # every line a whole request: they grow
    first = LineParser()
    entries: list[tuple[tuple | None, int, int]] = []
    held: dict[int, Any] = {}   # line -> its value from the first pass, the leading lines only
    room = HOLD
    rest: LineParser | None = None   # the first pass's parser as it was after the last line held
    for n, at, raw in lines_at(path):
        key, obj = _parse(when, n, raw, first)
        entries.append((key, n, at))
        if hold and obj is not UNREAD:
            held[n] = obj
            room -= first.fresh
            if room <= 0:   # the line that fills the room is the last held
                rest, hold = first.copy(), False
    if all(key is not None for key, _, _ in entries) and any(b[0] < a[0] for a, b in zip(entries, entries[1:])):
        entries.sort(key=lambda e: e[0])   # stable: a log in time order keeps its file order
        held.clear()
        rest = None
    parser = LineParser()   # shares values between lines adjacent in the new order
    with open_regular(path, read_buffer(size)) as fh:
        for _, n, at in entries:
            obj = held.pop(n, UNREAD)
            if obj is UNREAD:
                if rest is not None and not held:   # past the lines held: go on as the first pass did
                    parser, rest = rest, None
                fh.seek(at)
                obj = parsed(path, n, fh.readline(), parser.loads)
            if obj is not UNREAD:
                yield n, at, obj
