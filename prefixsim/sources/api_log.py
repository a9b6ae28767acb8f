"""Anthropic / OpenAI request logs as a Part of Traffic without holding their bodies.

A line is a whole request body, and a conversation's log repeats its history on every line, so
holding the parsed requests grows with the file (a 2 GB log, 2 GB and more). The first read checks
every line (skips and notes are reported before any replay, as --strict needs) and keeps per
request only its time, line number, index and byte offset beside its Head; a walk reads each line
again at its offset, in time order, when it reaches it. Memory follows the number of requests.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from prefixsim.sources.anthropic_log import Sizer
from prefixsim.sources.files import open_regular
from prefixsim.sources.linejson import LineParser
from prefixsim.sources.record import Record
from prefixsim.sources.scan import LineRecord, RequestId, scan
from prefixsim.sources.timeorder import LineTime
from prefixsim.sources.traffic import Head, Part
from prefixsim.wire.anthropic import History


@dataclass(frozen=True, slots=True)
class LogEntry:
    """Where a request's line is, and what rebuilding its Record needs besides the line."""

    t: float
    offset: int
    line: int
    index: int       # among the log's usable requests, in file order (labels, default spacing)


def part(path: Path, request_id: RequestId, line_record: LineRecord, sizer: Sizer, when: LineTime) -> Part:
    """The log's requests, walked by re-reading their lines in time order (`when`: a line's time).
    The sizer keeps its counts across walks, so each distinct block is tokenized once."""
    kept: list[tuple[LogEntry, Head]] = []
    # hold=False: the first read's parsed lines are not kept for its second pass (they are the bodies)
    for i, (offset, rec) in enumerate(scan(path, request_id, line_record, sizer, when, hold=False)):
        kept.append((LogEntry(rec.call.t, offset, rec.line, i), Head.of(rec)))
    kept.sort(key=lambda x: x[0].t)   # stable: equal times keep file order
    entries = [e for e, _ in kept]

    def walk() -> Iterator[Record]:
        history, parser = History(), LineParser()
        with open_regular(path) as fh:
            for e in entries:
                # A log already in time order reads forward; the seek only moves within the buffer.
                fh.seek(e.offset)
                obj = parser.loads(fh.readline().decode("utf-8"))
                yield line_record(obj, request_id(obj), e.index, str(path), e.line, sizer, history)

    return Part([h for _, h in kept], walk)
