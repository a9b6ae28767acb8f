"""Results -> text: aligned terminal tables, Markdown, CSV and JSON, all deterministic."""
from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from ..results import GPU_COLUMNS, ScenarioResult

HEADERS = {"cache_read_input_tokens": "read", "cache_write_5m_tokens": "write 5m", "cache_write_1h_tokens": "write 1h",
          "input_tokens": "uncached", "output_tokens": "output", "hit_rate": "hit", "cost_usd": "cost $",
          "cache_creation_input_tokens": "write", "cost_no_cache_usd": "no-cache $",
          "savings_vs_no_cache": "saved", "vs_cheapest": "x cheapest", "requests": "reqs",
          "gpu_seconds_saved": "GPU-s saved", "gpu_seconds_spent": "GPU-s spent",
          "cache_read_input_tokens_optimistic": "read (optimistic)", "hit_rate_optimistic": "hit (optimistic)",
          "cost_usd_optimistic": "cost $ (optimistic)"}
#: Said under a variant whose retention is a range, so no figure is read as the only one.
RANGE_NOTE = ("retention is a documented range: read / hit / cost $ are the pessimistic bound, "
              "the (optimistic) columns the optimistic bound")
TERMINAL_REQUEST = ("label", "stream", "model", "cache_read_input_tokens", "cache_write_5m_tokens",
                    "cache_write_1h_tokens", "input_tokens", "output_tokens", "hit_rate", "cost_usd", "cause")
TERMINAL_SUMMARY = ("variant", "requests", "cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens",
                    "output_tokens", "hit_rate", "cost_usd", "cost_no_cache_usd", "savings_vs_no_cache",
                    "vs_cheapest")
# Engine runs write nothing at a premium (no write columns) and show prefill GPU-seconds instead.
TERMINAL_ENGINE_REQUEST = ("label", "stream", "model", "cache_read_input_tokens", "input_tokens", "output_tokens",
                           "hit_rate", *GPU_COLUMNS, "cost_usd", "cause")
TERMINAL_ENGINE_SUMMARY = ("variant", "requests", "cache_read_input_tokens", "input_tokens", "output_tokens",
                           "hit_rate", *GPU_COLUMNS, "cost_usd")


def fmt(key: str, v: Any) -> str:
    if v is None:
        return ""
    if key in ("hit_rate", "savings_vs_no_cache", "hit_rate_optimistic"):
        return f"{100 * v:.1f}%"
    if key in ("cost_usd", "cost_no_cache_usd", "cost_usd_optimistic"):
        return f"{v:.4f}"
    if key in GPU_COLUMNS:
        return f"{v:,.2f}"
    if key == "vs_cheapest":
        return f"{v:.2f}x"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def grid(rows: Sequence[dict], cols: Sequence[str], markdown: bool = False, max_cause: int = 72) -> str:
    head = [HEADERS.get(c, c) for c in cols]
    body = []
    for r in rows:
        cells = [fmt(c, r.get(c)) for c in cols]
        if "cause" in cols and not markdown:
            i = cols.index("cause")
            if len(cells[i]) > max_cause:
                cells[i] = cells[i][: max_cause - 1] + "…"
        body.append(cells)
    numeric = [c not in ("label", "stream", "model", "cause", "variant", "scenario") for c in cols]
    if markdown:
        esc = [[x.replace("|", "\\|") for x in row] for row in [head, *body]]
        line = lambda cells: "| " + " | ".join(cells) + " |"
        sep = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
        return "\n".join([line(esc[0]), sep, *(line(r) for r in esc[1:])])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(cols))]
    def line(cells):
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths]), *(line(r) for r in body)])


def scenario_text(res: ScenarioResult, markdown: bool = False, requests: bool = True) -> str:
    h = "## " if markdown else ""
    out = [f"{h}{res.name}" + ("" if markdown else f"  ({res.path})")]
    if res.description:
        out.append(res.description.strip())
    comp = res.comparison()
    for v, s in zip(res.variants, comp):
        if requests:
            out.append("")
            out.append(f"{'### ' if markdown else ''}variant: {v.variant}")
            rows = v.rows()
            cols = TERMINAL_ENGINE_REQUEST if v.self_hosted else TERMINAL_REQUEST
            if v.optimistic is not None:
                out.append(RANGE_NOTE)
                i = cols.index("cost_usd") + 1
                cols = (*cols[:i], "cache_read_input_tokens_optimistic", "cost_usd_optimistic", *cols[i:])
            total = {"label": "TOTAL", **{k: s[k] for k in cols if k in s}}
            if markdown:
                total = {k: (f"**{fmt(k, val)}**" if k != "label" else "**TOTAL**") for k, val in total.items()}
                out.append(grid(rows, cols, True) + "\n" + _md_total(total, cols))
            else:
                out.append(grid(rows + [total], cols))
    summary_cols = TERMINAL_SUMMARY
    if all(v.self_hosted for v in res.variants):
        summary_cols = TERMINAL_ENGINE_SUMMARY
    elif any(v.self_hosted for v in res.variants):  # engines next to provider APIs: both kinds of cost
        i = TERMINAL_SUMMARY.index("hit_rate") + 1
        summary_cols = (*TERMINAL_SUMMARY[:i], *GPU_COLUMNS, *TERMINAL_SUMMARY[i:])
    if any(v.optimistic is not None for v in res.variants):
        i = summary_cols.index("cost_usd") + 1
        summary_cols = (*summary_cols[:i], "hit_rate_optimistic", "cost_usd_optimistic", *summary_cols[i:])
    out.append("")
    out.append(f"{'### ' if markdown else ''}comparison of variants")
    if any(v.optimistic is not None for v in res.variants):
        out.append(RANGE_NOTE)
    out.append(grid(comp, summary_cols, markdown))
    return "\n".join(out)


def _md_total(total: dict, cols: Sequence[str]) -> str:
    return "| " + " | ".join(total.get(c, "") for c in cols) + " |"


def csv_text(rows: Sequence[dict], cols: Sequence[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(cols), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def json_text(doc: Any) -> str:
    """The one JSON encoder of reports. allow_nan=False: NaN and Infinity are not JSON, so a report
    that would hold one fails loudly here (a bug: inputs are checked finite when they are read)."""
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=False) + "\n"
