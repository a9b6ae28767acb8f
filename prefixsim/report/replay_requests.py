"""`prefixsim replay --requests`: every request observed vs predicted with the cause of each miss,
and the requests whose predicted read is furthest from the observed one."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prefixsim.report.replay_grid import _footnotes, _n, footnoted, grid

if TYPE_CHECKING:
    from prefixsim.replay.run import ReplayResult


def requests_table(result: ReplayResult, name: dict[str, str], markdown: bool, width: int) -> list[str]:
    """--requests: every request, observed vs predicted, with the cause of each miss (a cause too
    long for its column in a footnote under the table, as `run -v` does)."""
    head = ["#", "stream", "model", "read obs", "read pred", "write obs", "write pred", "uncached obs",
            "uncached pred", "cause"]
    rows = []
    for r in result.rows:
        o, p = r.observed, r.predicted
        pred = (lambda v: "n/a") if r.audit else _n   # no prompt recorded: nothing was predicted
        rows.append([str(r.index), name[r.stream], r.model, _n(o and o.cache_read), pred(p.cache_read),
                     _n(o and o.cache_creation), pred(p.cache_creation), _n(o and o.input_tokens),
                     pred(p.input_tokens), (f"audit: {r.cause}" if r.cause.kind else "audit: no prompt")
                     if r.audit else str(r.cause)])
    models = {r.model for r in result.rows}
    above = []
    if len(models) == 1 and not markdown:   # one model throughout: named once, above the table
        above = [f"model: {next(iter(models))}\n"]
        head, rows = head[:2] + head[3:], [r[:2] + r[3:] for r in rows]
    notes: list[str] = []
    if not markdown:
        rows, notes = footnoted(rows, len(head) - 1, width)
    # a narrow terminal: the model, the uncached and write columns, then the stream go first
    drops = tuple(head.index(h) for h in ("model", "uncached pred", "uncached obs", "write pred", "write obs",
                                          "stream") if h in head)
    return [*above, grid(head, rows, markdown, width, drops), *_footnotes(notes, width)]


def mismatches(result: ReplayResult, name: dict[str, str], markdown: bool, width: int) -> list[str]:
    """The requests whose predicted read is furthest from the observed one (--top of them)."""
    s = result.summary
    if not s.largest_mismatches:
        return []
    # a mismatch has an observation (read_error is None without one)
    rows = [[str(r.index), name[r.stream], _n(r.observed and r.observed.cache_read), _n(r.predicted.cache_read),
             f"{r.read_error:+,}", str(r.cause)] for r in s.largest_mismatches]
    notes: list[str] = []
    if not markdown:
        rows, notes = footnoted(rows, 5, width)
    return ["\nLargest mismatches of cache_read (predicted - observed):\n",
            grid(["#", "stream", "observed", "predicted", "error", "cause"], rows, markdown, width, drops=(1,)),
            *_footnotes(notes, width)]
