"""What a break-even study gives the CLI and the report: its tables, the curve behind them, a chart
and one plain-language reading."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prefixsim.report.charts import LineChart


@dataclass
class Study:
    name: str
    title: str
    table: list[dict]
    curve: list[dict]
    chart: LineChart
    reading: str
    params: dict[str, Any] = field(default_factory=dict)
    tables: list[tuple[str, list[dict]]] = field(default_factory=list)   # one per question asked

    def __post_init__(self) -> None:
        if not self.tables:
            self.tables = [("crossing points", self.table)]


def k_tokens(tokens: float) -> str:
    """A token count as a reading says it: 1,500 -> '1.5 K'."""
    return f"{tokens / 1000:,.1f} K" if tokens >= 1000 else f"{tokens:,.0f}"
