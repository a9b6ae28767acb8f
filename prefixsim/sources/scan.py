"""One pass over a JSON Lines request log: each line to a Record through a format's two steps (its
request id, then its Record), every bad line skipped and named, and the log's notes (duplicate ids,
out-of-order times, requests without usage) given at the end. Anthropic and OpenAI logs share it."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefixsim.model import Usage
from prefixsim.sources import problems
from prefixsim.sources.record import Record
from prefixsim.sources.timeorder import LineTime, ordered_lines
from prefixsim.wire.anthropic import History

if TYPE_CHECKING:
    from prefixsim.sources.anthropic_log import Sizer

#: A format's two steps: the request id of a line (UserError: no request), then its Record.
RequestId = Callable[[Any], "str | None"]
LineRecord = Callable[[Any, "str | None", int, str, int, "Sizer", History], Record]



class LineChecks:
    """Per-log bookkeeping that turns a line into a skip or a note: duplicate request ids (the first
    is kept), timestamps that go backwards (requests are replayed in time order anyway) and
    requests without usage (nothing to compare the prediction with)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.ids: dict[str, int] = {}
        self.last_t: float | None = None
        self.backwards = 0
        self.first_backwards: int | None = None
        self.no_usage = 0
        self.first_no_usage: int | None = None

    def duplicate(self, rid: str | None, line: int) -> bool:
        if rid is None:
            return False
        first = self.ids.setdefault(rid, line)
        if first != line:
            problems.skip(self.path, line, f"duplicate request id {rid!r} (first at line {first})")
            return True
        return False

    def time(self, t: float, line: int) -> None:
        if self.last_t is not None and t < self.last_t:
            self.backwards += 1
            self.first_backwards = self.first_backwards or line
        self.last_t = t if self.last_t is None else max(self.last_t, t)

    def usage(self, observed: Usage | None, line: int) -> None:
        if observed is None:
            self.no_usage += 1
            self.first_no_usage = line if self.first_no_usage is None else min(self.first_no_usage, line)

    def finish(self) -> None:
        if self.no_usage:
            problems.note(self.path, self.first_no_usage,
                          f"{self.no_usage} request{'s' if self.no_usage > 1 else ''} without usage "
                          "(predicted, not compared with an observation)")
        if self.backwards:
            problems.note(self.path, self.first_backwards,
                          f"{self.backwards} request{'s' if self.backwards > 1 else ''} logged out of time order "
                          "(replayed in time order)")


def scan(path: Path, request_id: RequestId, line_record: LineRecord, sizer: Sizer,
         when: LineTime, hold: bool = True) -> Iterator[tuple[int, Record]]:
    """(byte offset, Record) of each usable line, in time order (`timeorder`: what a reader fixes as
    it goes then follows the replay's order, not the file's; `when` gives a line's time); every other
    line is skipped and named (`problems.guarded`: whatever a line's values raise), and the log's
    notes (no usage, out of order) are given at the end; `hold`: as `ordered_lines`."""
    checks = LineChecks(path)
    history = History()
    where = str(path)
    index = 0
    times: list[tuple[int, float]] = []

    def one(n: int, obj: Any) -> Record | None:
        rid = request_id(obj)
        rec = line_record(obj, rid, index, where, n, sizer, history)
        # Only a line that became a request claims its id: a bad first copy leaves the next one usable.
        return None if checks.duplicate(rid, n) else rec

    for n, offset, obj in ordered_lines(path, when, hold):
        rec = problems.guarded(where, n, one, n, obj)
        if rec is None:
            continue
        times.append((n, rec.call.t))
        checks.usage(rec.observed, n)
        index += 1
        yield offset, rec
    for n, t in sorted(times):   # out of order is said of the file as written
        checks.time(t, n)
    checks.finish()
