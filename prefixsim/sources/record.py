"""What every importer yields: a timed call for the simulator plus what the provider reported for it."""
from __future__ import annotations

from dataclasses import dataclass

from ..model import Call, Usage


@dataclass(frozen=True, slots=True)
class Record:
    """One deduplicated request of real traffic.

    `observed` is the usage the provider reported (None when the log has none); `timestamp` is the
    ISO time the source gives for the request start; `path`/`line` say where it came from.
    `output_final` is False when the source's output count is not the final one (Claude Code
    transcripts log a streaming snapshot), so costs leave output out. `main` says, for traffic of a
    harness with TTL buckets (Claude Code), whether the request belongs to the main conversation's
    bucket; None when the source knows no such buckets (every request writes as its client asks).
    """

    call: Call
    request_id: str
    timestamp: str
    observed: Usage | None
    path: str
    line: int
    output_final: bool = True
    main: bool | None = None
