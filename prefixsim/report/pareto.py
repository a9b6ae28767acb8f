"""A design search's output (advise/grid.py): the table of designs cheapest first with the Pareto
front marked, as terminal text (fitted to a width), Markdown, CSV or JSON, and the chart of cost
against p95 time to first token; the files go to one folder per scenario, swapped in whole."""
from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

from prefixsim.advise.grid import TTFT_STAT, Design, GridResult
from prefixsim.core.dollars import usd, usd_cell
from prefixsim.io.fsutil import check_outputs, check_replaceable, replace_folder, slug, write_files
from prefixsim.report.charts import PALETTE, _figure, render_both
from prefixsim.report.folders import scenario_inputs
from prefixsim.report.layout import DEFAULT_WIDTH, KEEP_TEXT, dropped_note, fit_dropping, min_width, wrap_block
from prefixsim.report.tables import csv_text, json_text, seconds
from prefixsim.scenario.results import usd as usd_float

#: The report folder's kind (its marker), and the folder beside the scenario's `run` report.
KIND = "design search"
SUFFIX = "-designs"
FILES = ("designs.csv", "designs.json", "designs.md", "pareto.png", "pareto.svg")
#: The latency figures (seconds) under the names `run`'s summary gives them (scenario/results.py).
LATENCY = ("ttft_p50_s", "ttft_p95_s", "wait_p50_s", "wait_p95_s")
COLUMNS = ("rank", "design", "cost_usd", "vs_cheapest", *LATENCY, "uncached_critical_path_tokens",
           "critical_path_requests", "last_start_s", "requests", "hit_rate", "pareto")
HEADERS = {"cost_usd": "cost $", "vs_cheapest": "x cheapest", "uncached_critical_path_tokens": "crit. uncached",
           "critical_path_requests": "crit. reqs", "last_start_s": "last start s", "requests": "reqs",
           "hit_rate": "hit", "pareto": "Pareto", "ttft": "TTFT p50/p95", "wait": "wait p50/p95"}
DEFINITION = ("TTFT p50/p95: the median and 95th percentile of the design's requests' times to first token (s), "
              "from the scenario's latency model; the Pareto front is of cost and p95 TTFT; wait p50/p95: the "
              "user's wait per turn along the critical path (children joined, siblings held, a compaction); "
              "crit. uncached: the prompt tokens not read from the cache (uncached input + cache writes) summed "
              "along the chain of requests that wait on each other that computes the most (crit. reqs: its "
              "requests); last start s: the last request's start on the simulated clock")


def rows(g: GridResult) -> list[dict]:
    """One row per design, cheapest first; JSON-ready values."""
    low = g.cheapest.cost_usd if g.designs else None
    out = []
    for i, d in enumerate(g.ranked(), 1):
        out.append({"rank": i, "design": d.name, **{f"dim_{k}": v for k, v in d.values},
                    "cost_usd": usd_float(d.cost_usd), "vs_cheapest": round(float(d.cost_usd / low), 4) if low else None,
                    **{k: getattr(d, k) for k in LATENCY},
                    "uncached_critical_path_tokens": d.critical_tokens, "critical_path_requests": d.critical_requests,
                    "last_start_s": round(d.last_start_s, 3), "requests": d.requests, "hit_rate": d.hit_rate,
                    "pareto": d.pareto})
    return out


def _cell(key: str, v) -> str:
    if v is None:
        return ""
    if key == "cost_usd":
        return usd_cell(v)
    if key == "vs_cheapest":
        return "" if v is None else f"{v:.2f}x"
    if key == "hit_rate":
        return f"{100 * v:.1f}%"
    if key == "pareto":
        return "*" if v else ""
    if key == "last_start_s":
        return f"{v:g}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


#: The tables show each pair of latency figures in one cell, p50/p95 (as `run`'s comparison does); the
#: terminal's leaves out the request count (the same in most grids; JSON and CSV keep all of them).
SHOWN = tuple(x for c in COLUMNS if c not in LATENCY[1::2]
              for x in [{"ttft_p50_s": "ttft", "wait_p50_s": "wait"}.get(c, c)])
TERMINAL = tuple(c for c in SHOWN if c != "requests")
#: Left out in this order, and named under the table, when it cannot fit the width otherwise.
NARROW_DROPS = ("critical_path_requests", "last_start_s", "hit_rate", "wait", "uncached_critical_path_tokens")


def pair(r: dict, key: str) -> str:
    """A row's p50/p95 of `key` (ttft, wait) in one cell, as `run`'s comparison shows them."""
    p50, p95 = r[f"{key}_p50_s"], r[f"{key}_p95_s"]
    return "" if p50 is None else f"{seconds(p50)}/{seconds(p95)}"


def _table(rs: Sequence[dict], markdown: bool, width: int = DEFAULT_WIDTH, bold: bool = False) -> str:
    """The designs' table; with `bold`, the cheapest (rank 1 and any tied with it) set in bold."""
    cols = SHOWN if markdown else TERMINAL
    if not any(r["ttft_p50_s"] is not None for r in rs):   # no latency model (an engine without a rate)
        cols = tuple(c for c in cols if c not in ("ttft", "wait"))
    head = [HEADERS.get(c, c) for c in cols]
    body = [[pair(r, c) if c in ("ttft", "wait") else _cell(c, r[c]) for c in cols] for r in rs]
    left = [c == "design" for c in cols]
    if markdown:
        def line(cells):
            return "| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |"

        sep = "|" + "|".join("---" if is_left else "---:" for is_left in left) + "|"
        return "\n".join([line(head), sep, *(line(r) for r in body)])
    drops = [cols.index(c) for c in NARROW_DROPS if c in cols]
    best = [i for i, r in enumerate(rs) if r["cost_usd"] == rs[0]["cost_usd"]] if bold and rs else []
    text, dropped = fit_dropping(head, body, [not x for x in left], width, left, drops, keep_text=KEEP_TEXT, bold=best)
    note = dropped_note(dropped, width, min_width(head, body, left, KEEP_TEXT))
    return text + ("\n" + note if note else "")


def seconds_text(x: float) -> str:
    """A bound or a time in a sentence: `3 s`, `1.64 s`."""
    return f"{x:.3g} s"


def _bound(g: GridResult) -> str:
    return f"{TTFT_STAT} ≤ {seconds_text(g.max_ttft_s)}" if g.max_ttft_s is not None else ""


def latency_text(d: Design) -> str:
    """` (TTFT p50/p95 0.96/1.64 s)` after a design's cost; nothing without a latency model."""
    return "" if d.ttft_p50_s is None else f" (TTFT p50/p95 {seconds(d.ttft_p50_s)}/{seconds(d.ttft_p95_s)} s)"


def fastest(g: GridResult) -> Design | None:
    """The design with the lowest p95 TTFT (a tie: the cheaper), when it is not the cheapest."""
    timed = [d for d in g.designs if d.ttft_p95_s is not None]
    if not timed:
        return None
    f = min(timed, key=lambda d: (d.ttft, d.cost_usd, d.critical_tokens))
    return None if f.ttft >= g.cheapest.ttft else f


def none_meet(g: GridResult) -> str:
    """The one line of a search under `--max-ttft` that no design meets."""
    low = min(g.excluded, key=lambda d: (d.ttft, d.cost_usd))
    said = f" (the lowest: {low.name}, {seconds_text(low.ttft_p95_s)})" if low.ttft_p95_s is not None else \
        " (none has a latency model)"
    return f"{g.scenario}: none of {len(g.excluded)} designs has {_bound(g)}{said}"


def _summary(g: GridResult) -> list[str]:
    c, front = g.cheapest, g.front
    top = max(d.cost_usd for d in g.designs)
    n = len(g.designs) + len(g.excluded)
    lines = [f"{g.scenario} ({g.path}): {n} designs"]
    if g.max_ttft_s is not None:
        lines.append(f"{_bound(g)}: {len(g.designs)} of {n} designs meet it, {len(g.excluded)} excluded")
    lines.append(f"cheapest: {c.name}  {usd(c.cost_usd)}{latency_text(c)}" + (
        f", {float((top - c.cost_usd) / top):.1%} below the costliest ({usd(top)})" if top > c.cost_usd else ""))
    tied = g.tied()
    if tied:
        lines.append(f"the same cost: {', '.join(d.name for d in tied[:3])}{', ...' if len(tied) > 3 else ''}")
    f = fastest(g)
    if f is not None:
        lines.append(f"lowest {TTFT_STAT}: {f.name}  {seconds_text(f.ttft_p95_s)} against "
                     f"{seconds_text(c.ttft_p95_s)}, at {usd(f.cost_usd)}")
    lines.append(f"Pareto front of cost and {TTFT_STAT}: {len(front)} design{'s' if len(front) != 1 else ''}, marked *")
    return lines


def text(g: GridResult, markdown: bool = False, width: int = DEFAULT_WIDTH, bold: bool = False) -> str:
    """The terminal (or Markdown) report of one scenario's design search; the terminal's table fitted to
    `width`, its cheapest design in bold with `bold` (a terminal's). Under a bound no design meets, one
    line that says so."""
    if not g.designs:
        line = none_meet(g)
        return f"## {g.scenario}\n\n{line}" if markdown else wrap_block(line, width, "    ")
    head = _summary(g)
    if markdown:
        return "\n".join([f"## {head[0]}", "", *(f"- {x}" for x in head[1:]), "", _table(rows(g), True), "",
                          f"_{DEFINITION}._"])

    return "\n".join([*(wrap_block(x, width, "    ") for x in head), "", _table(rows(g), False, width, bold), "",
                      wrap_block(DEFINITION, min(width, 100))])


def csv_rows(gs: Sequence[GridResult]) -> tuple[list[dict], list[str]]:
    dims = [k for g in gs for d in (g.designs or g.excluded)[:1] for k, _ in d.values]
    cols = ["scenario", "rank", "design", *dict.fromkeys(f"dim_{k}" for k in dims), *COLUMNS[2:]]
    return [{"scenario": g.scenario, **r} for g in gs for r in rows(g)], cols


def to_json(g: GridResult) -> dict:
    return {"scenario": g.scenario, "file": g.path, "cheapest": g.cheapest.name if g.designs else None,
            "pareto_front": [d.name for d in g.front], "pareto_axes": ["cost_usd", "ttft_p95_s"],
            "max_ttft_s": g.max_ttft_s, "excluded": [d.name for d in g.excluded], "definition": DEFINITION,
            "designs": [{**{k: v for k, v in r.items() if not k.startswith("dim_")},
                         "dimensions": {k[4:]: v for k, v in r.items() if k.startswith("dim_")}} for r in rows(g)]}


def title(g: GridResult) -> str:
    """The chart's title states its answer: the cheapest design and its p95 TTFT, and the design with
    the lowest p95 TTFT when it is another (what it costs more)."""
    if not g.designs:
        return f"{g.scenario}: no design meets {_bound(g)}"
    c, f = g.cheapest, fastest(g)
    at = f", {TTFT_STAT} {seconds_text(c.ttft_p95_s)}" if c.ttft_p95_s is not None else ""
    if f is None:
        return f"{c.name} is cheapest{' and fastest' if at else ''}: {usd(c.cost_usd)}{at}"
    return (f"{c.name} is cheapest ({usd(c.cost_usd)}{at}); {f.name} is fastest "
            f"({seconds_text(f.ttft_p95_s)}, {usd(f.cost_usd - c.cost_usd)} more)")


def figure(g: GridResult):
    """Cost against p95 time to first token, one point per design; the Pareto front joined and
    labelled, the cheapest design ringed, a `--max-ttft` bound drawn with the designs past it. A
    design without a latency model has no point (the note says how many). Agg canvas, never pyplot
    (charts._figure)."""
    fig = _figure((8.0, 5.2))
    ax = fig.subplots()
    timed = [d for d in g.designs if d.ttft_p95_s is not None]
    others = [d for d in timed if not d.pareto]
    front = sorted((d for d in timed if d.pareto), key=lambda d: (d.ttft, d.cost_usd))
    if others:   # a legend names only what the chart draws
        ax.scatter([d.ttft for d in others], [float(d.cost_usd) for d in others], s=28, color="#999999",
                   label="dominated design", zorder=3)
    over = [d for d in g.excluded if d.ttft_p95_s is not None]
    if over:
        ax.scatter([d.ttft for d in over], [float(d.cost_usd) for d in over], s=28, marker="x", color="#bbbbbb",
                   label=f"over the bound ({len(g.excluded)} excluded)", zorder=3)
    if g.max_ttft_s is not None:
        ax.axvline(g.max_ttft_s, color=PALETTE[2], linestyle="--", linewidth=1,
                   label=f"--max-ttft {seconds_text(g.max_ttft_s)}")
    xs, ys = [d.ttft for d in front], [float(d.cost_usd) for d in front]
    if front:
        ax.plot(xs, ys, "-", drawstyle="steps-post", color=PALETTE[0], linewidth=1.5, zorder=2)
        ax.scatter(xs, ys, s=46, color=PALETTE[0], label="Pareto front", zorder=4)
    if g.designs and g.cheapest.ttft_p95_s is not None:
        c = g.cheapest
        ax.scatter([c.ttft], [float(c.cost_usd)], s=160, facecolors="none", edgecolors=PALETTE[1],
                   linewidths=2, label="cheapest", zorder=5)
    offsets = ((8, 8), (8, -14), (8, 20), (8, -26))   # alternate so neighbouring labels do not collide
    for i, d in enumerate(front[:8]):
        ax.annotate(d.name, (d.ttft, float(d.cost_usd)), textcoords="offset points",
                    xytext=offsets[i % len(offsets)], fontsize=7.5,
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "#bbbbbb", "alpha": 0.9})
    ax.set_title("\n".join(textwrap.wrap(title(g), 80)), fontsize=10)   # a long design name stays on the canvas
    from matplotlib.ticker import FuncFormatter  # lazy: start-up: matplotlib loads only to draw

    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.2f}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"${y:,.2f}" if y >= 1 else f"${y:,.3f}"))
    ax.set_xlabel("p95 time to first token of the design's requests (seconds)")
    ax.set_ylabel("cost (USD)")
    ax.legend(loc="best", fontsize=8)
    untimed = len(g.designs) - len(timed) + len(g.excluded) - len(over)
    fig.text(0.01, 0.01, f"{len(g.designs) + len(g.excluded)} designs of {Path(g.path).name}; lower left is better "
             f"on both axes" + (f"; {untimed} without a latency model not drawn" if untimed else ""),
             fontsize=7.5, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def folder(out_dir: Path, g_name: str) -> Path:
    return out_dir / f"{slug(g_name)}{SUFFIX}"


def write(g: GridResult, out_dir: Path) -> Path:
    """out/<scenario>-designs/: the table as CSV, JSON and Markdown and the chart as PNG and SVG,
    swapped in as one set (fsutil.replace_folder; never a folder of another kind)."""
    rs, cols = csv_rows([g])
    png, svg = render_both(figure(g))
    d = folder(out_dir, g.scenario)
    replace_folder(d, {"designs.csv": csv_text(rs, cols), "designs.json": json_text(to_json(g)),
                       "designs.md": text(g, markdown=True) + "\n", "pareto.png": png, "pareto.svg": svg},
                   KIND, lambda name: False)
    return d


def output(gs: Sequence[GridResult], fmt: str = "table", width: int = DEFAULT_WIDTH, bold: bool = False) -> str:
    """What `prefixsim search` prints for `fmt` (table, markdown, csv or json), newline-terminated;
    the terminal's tables fitted to `width`, each cheapest design in bold with `bold` (table only)."""
    if fmt == "json":
        return json_text({"scenarios": [to_json(g) for g in gs]})
    if fmt == "csv":
        return csv_text(*csv_rows(gs))
    return "\n\n".join(text(g, markdown=fmt == "markdown", width=width, bold=bold and fmt == "table") for g in gs) + "\n"


def check_folders(files: Sequence[str], out_dir: Path) -> None:
    """Before anything runs: no design-search folder is or holds an input of the scenarios, nor is a
    folder of another kind."""
    inputs, named = scenario_inputs(list(files))
    folders = [folder(out_dir, n.name) for n in named]
    check_outputs(inputs, folders=folders)
    for f in folders:
        check_replaceable(f, KIND, lambda name: False)


def write_all(gs: Sequence[GridResult], out_dir: Path | None, chart: str | None = None) -> list[Path]:
    """The first grid's chart to `chart` (.png or .svg), then each grid's report folder under
    `out_dir` (none when it is None); the folders written."""
    if chart is not None:
        png, svg = render_both(figure(gs[0]))
        write_files({chart: png if chart.endswith(".png") else svg})
    return [] if out_dir is None else [write(g, out_dir) for g in gs]
