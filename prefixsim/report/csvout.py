"""The one CSV writer of every command (run, replay, breakeven, advise, search, prices): the columns
given, a dollar column at a fixed precision (core/dollars.py: csv_cell), so the same figure reads the
same in every file. Kept apart from report/tables.py: a replay writes CSV without the scenario tables."""
from __future__ import annotations

import csv
import io
from typing import Any, Sequence

from prefixsim.core.dollars import csv_cell


def csv_text(rows: Sequence[dict[str, Any]], cols: Sequence[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(cols), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: csv_cell(k, v) for k, v in r.items()})
    return buf.getvalue()
