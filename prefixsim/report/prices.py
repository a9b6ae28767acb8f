"""`prefixsim prices` as text: a model's rates, one class a line, each with its source."""
from __future__ import annotations

from prefixsim.core.price_report import PriceSheet
from prefixsim.report.layout import wrap_block
from prefixsim.report.tables import csv_text, grid


def render_prices(sheet: PriceSheet, width: int = 120, fmt: str = "table") -> str:
    """`table` (the default), `markdown` (the same rows as a table) or `csv` (the rows alone)."""
    where = f"{sheet.provider}" + (f", {sheet.endpoint} endpoint" if sheet.endpoint else "")
    title = f"{sheet.model} on {where}, {sheet.at:%Y-%m-%d %H:%M} UTC (USD per MTok)"
    rows = [{"rate": r.label, "usd_per_mtok": r.usd_per_mtok, "source": r.source} for r in sheet.rows]
    if fmt == "csv":
        return csv_text(rows, ["rate", "usd_per_mtok", "source"])
    if fmt == "markdown":
        return "\n".join([f"**{title}**", "", grid(rows, ["rate", "usd_per_mtok", "source"], markdown=True), "",
                          f"Prices: {sheet.source}", *([f"Time-of-day prices: {sheet.hours}"] if sheet.hours else [])])
    out = [wrap_block(title, width, "  ")]
    w = max(len(r.label) for r in sheet.rows)
    v = max(len(r.usd_per_mtok) for r in sheet.rows)
    for r in sheet.rows:
        out.append(wrap_block(f"{r.label:<{w}}  {r.usd_per_mtok:>{v}}  {r.source}", width, " " * (w + v + 4)))
    out.append(wrap_block(f"Prices: {sheet.source}", width, "  "))
    if sheet.hours:
        out.append(wrap_block(f"Time-of-day prices: {sheet.hours}", width, "  "))
    return "\n".join(out)
