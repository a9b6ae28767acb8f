"""`prefixsim advise` as tables (terminal, Markdown), one JSON document, one long CSV, a report
section and the waterfall chart (today's cost to the best combination's, one bar per change)."""
from __future__ import annotations

import textwrap
from collections.abc import Sequence
from decimal import Decimal

from prefixsim.advise import Advice, Recommendation
from prefixsim.core.dollars import usd
from prefixsim.io.fsutil import write_files
from prefixsim.report.charts import PALETTE, _figure, render_both, title_lines
from prefixsim.replay.money import short_keys
from prefixsim.report.layout import dropped_note, fit_dropping, min_width, wrap_block
from prefixsim.report.tables import DEFAULT_WIDTH, csv_text, json_text


def money(d: Decimal | None) -> float | None:
    """Money in JSON and CSV: dollars to 6 decimals (exact in the core, rounded only here)."""
    return None if d is None else float(round(d, 6))


def _rec(r: Recommendation) -> dict:
    return {"change": r.change, "saved_usd": money(r.saved_usd), "percent": round(r.percent, 2),
            "rebuilds_avoided": r.rebuilds_avoided, "cost_usd": money(r.cost_usd), "evidence": r.evidence}


def fix(a: Advice, path: str, requests: tuple[int, ...]) -> str:
    """The change that mends a breaker: the most saving recommendation whose replay changes every
    request that parted there; else why this data cannot test one; else nothing."""
    for r in a.recommendations:
        if set(requests) <= set(r.requests):
            return r.change
    return next((f"not testable: {c}" for c, _ in a.untestable if c.endswith(f" {path}")), "")


def tables(a: Advice) -> list[tuple[str, str, list[dict], tuple[str, ...]]]:
    """(JSON key, title, rows, columns) of every table, in the order they print."""
    at = a.attribution
    out: list[tuple[str, str, list[dict], tuple[str, ...]]] = []
    if at is not None:
        out.append(("by_token_class", "cost by token class", [{"class": k, "tokens": n, "cost_usd": money(c)} for k, n, c in at.by_class],
                    ("class", "tokens", "cost_usd")))
        out.append(("lost_by_cause", "money lost by cause (against reading every earlier-written prefix the rules allow)",
                    [{"cause": k, "requests": n, "cost_usd": money(c), "lost_usd": money(lost)}
                     for k, n, c, lost in at.lost_by_cause], ("cause", "requests", "cost_usd", "lost_usd")))
        out.append(("lost_by_stream", "money lost by stream", [{"stream": k, "requests": n, "cost_usd": money(c), "lost_usd": money(lost)}
                                             for k, n, c, lost in at.lost_by_stream if lost],
                    ("stream", "requests", "cost_usd", "lost_usd")))
        out.append(("breakers", "breakers (where prefixes part)",
                    [{"layer": b.layer, "path": b.path, "requests": len(b.requests), "lost_usd": money(b.lost_usd),
                      "before": b.before, "after": b.after, "fix": fix(a, b.path, b.requests)} for b in at.breakers],
                    ("layer", "path", "requests", "lost_usd", "before", "after", "fix")))
    out.append(("volatile", "volatile content", [{"path": s.path, "kind": s.kind, "changed": f"{s.changes} of {s.compared}",
                                      "lost_usd": money(s.lost_usd), "before": s.before, "after": s.after}
                                     for s in a.volatile], ("path", "kind", "changed", "lost_usd", "before", "after")))
    cols = ("change", "saved_usd", "percent", "rebuilds_avoided", "evidence")
    out.append(("recommendations", "what to change (each saving is a replay of the same traffic)", [_rec(r) for r in a.recommendations],
                cols))
    if a.best is not None and a.best not in a.recommendations:   # changes together, not one alone
        out.append(("best", "best combination", [_rec(a.best)], cols))
    out.append(("rejected", "replayed and not recommended (no saving)",
                [{"change": r.change, "saved_usd": money(r.saved_usd), "rebuilds_avoided": r.rebuilds_avoided,
                  "evidence": r.evidence} for r in a.rejected], ("change", "saved_usd", "rebuilds_avoided", "evidence")))
    out.append(("not_testable", "not testable from this data", [{"change": c, "reason": why} for c, why in a.untestable],
                ("change", "reason")))
    return out


def to_json(a: Advice) -> dict:
    at = a.attribution
    doc: dict = {"predicted_cost_usd": money(a.total_usd),
                 "lost_usd": money(at.lost_usd) if at is not None else None,
                 "by_cause": [{"cause": k, "requests": n, "cost_usd": money(c)} for k, n, c in a.by_cause]}
    for key, _, rows, _ in tables(a):
        if key != "best":
            doc[key] = rows
    doc["best"] = None if a.best is None else _rec(a.best)
    for r, rec in zip(doc["recommendations"], a.recommendations):
        r["requests"] = list(rec.requests)
    for r, b in zip(doc.get("breakers", ()), at.breakers if at is not None else ()):
        r["requests"] = list(b.requests)   # the table counts them; JSON lists them
    for r, sp in zip(doc["volatile"], a.volatile):
        del r["changed"]
        r.update(changes=sp.changes, compared=sp.compared, requests=list(sp.requests))
    if a.best is not None:
        doc["best"]["requests"] = list(a.best.requests)
    doc["waterfall"] = [{"change": "today", "cost_usd": money(a.total_usd)}] + \
        [{"change": c, "cost_usd": money(v)} for c, v in a.waterfall]
    return doc


def _cell(c: str, v) -> str:
    if v is None:
        return ""
    if c.endswith("_usd"):
        return f"{v:.4f}"
    if c == "percent":
        return f"{v:.1f}%"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v).replace("\n", "\\n")


def _grid(rows: Sequence[dict], cols: Sequence[str], markdown: bool, width: int = DEFAULT_WIDTH) -> str:
    head = [c.replace("_usd", " $").replace("_", " ") for c in cols]
    if not markdown and "stream" in cols:   # a terminal shows streams as replay does (JSON keeps whole keys):
        names = short_keys([str(r.get("stream")) for r in rows])   # a path no space breaks would split mid-word
        rows = [{**r, "stream": names[str(r.get("stream"))]} for r in rows]
    body = [[_cell(c, r.get(c)) for c in cols] for r in rows]
    numeric = [c.endswith("_usd") or c in ("tokens", "requests", "percent", "rebuilds_avoided") for c in cols]
    if markdown:
        def line(cells):
            return "| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |"
        return "\n".join([line(head), "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
                          *(line(r) for r in body)])

    # text columns wrap so the table fits the width (120 in a pipe or a file: the same bytes whoever runs
    # it); on a narrow terminal the evidence columns go first, named under the table, before a text
    # is squeezed to a word a line (layout.fit_dropping)
    text = [not n for n in numeric]
    drops = [list(cols).index(c) for c in NARROW_DROPS if c in cols]
    table, dropped = fit_dropping(head, body, numeric, width, text, drops, keep_text=NARROW_TEXT)
    note = dropped_note(dropped, width, min_width(head, body, text, NARROW_TEXT))
    return table + ("\n" + note if note else "")


#: The columns a narrow terminal leaves out first (the bytes before and after a break are evidence,
#: the JSON keeps them), and the width a text column keeps before that happens.
NARROW_DROPS = ("after", "before", "rebuilds_avoided", "percent", "requests")
NARROW_TEXT = 24


def text(a: Advice, markdown: bool = False, width: int = DEFAULT_WIDTH) -> str:
    at = a.attribution
    lost = f", of which {usd(at.lost_usd)} lost to the cache" if at is not None else ""
    parts = [f"predicted cost {usd(a.total_usd)}{lost}"]
    for _, title, rows, cols in tables(a):
        if not rows:
            if title.startswith("what to change"):
                parts.append(("## " if markdown else "") + title + ("\n\n" if markdown else "\n")
                             + "no change the replay shows saving money")
            continue
        parts.append((f"## {title}\n\n" if markdown else wrap_block(title, width) + "\n") + _grid(rows, cols, markdown, width))
    if a.waterfall:
        steps = " -> ".join(f"{usd(c)}" for _, c in a.waterfall)
        line = f"today {usd(a.total_usd)} -> {steps} (the best combination, one replay per step)"
        parts.append(line if markdown else wrap_block(line, width, "    "))
    return "\n\n".join(parts) + "\n"


CSV_COLUMNS = ("table", "item", "detail", "requests", "cost_usd", "amount_usd", "percent", "rebuilds_avoided",
               "evidence")


def csv_rows(a: Advice) -> list[dict]:
    """Every table as rows of one CSV: `amount_usd` is money lost (attribution) or saved (changes)."""
    out: list[dict] = []
    for _, title, rows, _ in tables(a):
        table = title.split(" (")[0]
        for r in rows:
            item = r.get("change") or r.get("cause") or r.get("stream") or r.get("class") or r.get("path", "")
            detail = r.get("reason") or r.get("kind") or r.get("layer") or ""
            if "before" in r:
                detail = f"{detail}: {r['before']!r} -> {r['after']!r}"
            out.append({"table": table, "item": item, "detail": detail,
                        "requests": r.get("requests") if isinstance(r.get("requests"), int) else r.get("tokens", ""),
                        "cost_usd": r.get("cost_usd", ""), "amount_usd": r.get("saved_usd", r.get("lost_usd", "")),
                        "percent": r.get("percent", ""), "rebuilds_avoided": r.get("rebuilds_avoided", ""),
                        "evidence": r.get("evidence", "")})
    return out


def render(a: Advice, fmt: str = "table", width: int = DEFAULT_WIDTH) -> str:
    """What `prefixsim advise` prints for `fmt` (table, markdown, csv or json), newline-terminated."""
    if fmt == "json":
        return json_text(to_json(a))
    if fmt == "csv":
        return csv_text(csv_rows(a), CSV_COLUMNS)
    return text(a, markdown=fmt == "markdown", width=width)


def write_chart(a: Advice, path: str) -> None:
    """The waterfall as a .png or .svg file (by `path`'s suffix)."""
    png, svg = render_both(waterfall_figure(a))
    write_files({path: png if path.endswith(".png") else svg})


def waterfall_title(a: Advice) -> str:
    """The waterfall's answer: what the best combination costs against today."""
    today, best = float(a.total_usd), float(a.waterfall[-1][1]) if a.waterfall else float(a.total_usd)
    return (f"The best combination costs {usd(best)}, {1 - best / today:.0%} below today's {usd(today)}" if today
            else f"The best combination costs {usd(best)}")


def waterfall_figure(a: Advice):
    """Today's cost, one falling bar per change of the best combination (each the replay of the
    changes so far), and the best combination's cost (a matplotlib Figure on the Agg canvas)."""
    labels = ["today", *(c for c, _ in a.waterfall), "best combination"]
    costs = [float(a.total_usd), *(float(c) for _, c in a.waterfall)]
    fig = _figure((8.0, 4.8))
    ax = fig.subplots()
    xs = list(range(len(labels)))
    ax.bar(0, costs[0], color=PALETTE[0], width=0.6)
    for k in range(1, len(costs)):
        lo, hi = sorted((costs[k - 1], costs[k]))
        ax.bar(k, hi - lo, bottom=lo, color=PALETTE[2] if costs[k] <= costs[k - 1] else PALETTE[1], width=0.6)
        ax.text(k, hi, f"-{usd(costs[k - 1] - costs[k])}", ha="center", va="bottom", fontsize=8)
    ax.bar(len(labels) - 1, costs[-1], color=PALETTE[0], width=0.6)
    for x, c in ((0, costs[0]), (len(labels) - 1, costs[-1])):
        ax.text(x, c, f"{usd(c)}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xticklabels([textwrap.fill(x, 24) for x in labels], fontsize=7)
    ax.set_ylabel("cost of the traffic (USD)")
    ax.set_title(title_lines(waterfall_title(a)))
    ax.grid(axis="x", visible=False)
    fig.text(0.01, 0.01, "From today's cost to the best combination, each step a replay of the changes so far",
             fontsize=7.5, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig
