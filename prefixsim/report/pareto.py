"""A design search's output (advise/grid.py): the table of designs cheapest first with the Pareto
front marked, as terminal text, Markdown, CSV or JSON, and the chart of cost against uncached
critical-path tokens; the files go to one folder per scenario, swapped in whole."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefixsim.advise.grid import GridResult
from prefixsim.core.dollars import usd, usd_cell
from prefixsim.io.fsutil import check_outputs, check_replaceable, replace_folder, slug, write_files
from prefixsim.report.charts import PALETTE, _figure, render_both
from prefixsim.report.layout import DEFAULT_WIDTH, KEEP_TEXT, dropped_note, fit_dropping, min_width, wrap_block
from prefixsim.report.folders import scenario_inputs
from prefixsim.report.tables import csv_text, json_text
from prefixsim.scenario.results import usd as usd_float

#: The report folder's kind (its marker), and the folder beside the scenario's `run` report.
KIND = "design search"
SUFFIX = "-designs"
FILES = ("designs.csv", "designs.json", "designs.md", "pareto.png", "pareto.svg")
COLUMNS = ("rank", "design", "cost_usd", "vs_cheapest", "uncached_critical_path_tokens", "critical_path_requests",
           "last_start_s", "requests", "hit_rate", "pareto")
HEADERS = {"cost_usd": "cost $", "vs_cheapest": "x cheapest", "uncached_critical_path_tokens": "crit. uncached",
           "critical_path_requests": "crit. reqs", "last_start_s": "last start s", "requests": "reqs",
           "hit_rate": "hit", "pareto": "Pareto"}
DEFINITION = ("crit. uncached: uncached critical-path tokens, a latency proxy: the prompt tokens not read from the "
              "cache (uncached input + cache writes) summed along the chain of requests that wait on each other "
              "that computes the most (crit. reqs: its requests); last start s: the last request's start on the "
              "simulated clock")


def rows(g: GridResult) -> list[dict]:
    """One row per design, cheapest first; JSON-ready values."""
    low = g.cheapest.cost_usd
    out = []
    for i, d in enumerate(g.ranked(), 1):
        out.append({"rank": i, "design": d.name, **{f"dim_{k}": v for k, v in d.values},
                    "cost_usd": usd_float(d.cost_usd), "vs_cheapest": round(float(d.cost_usd / low), 4) if low else None,
                    "uncached_critical_path_tokens": d.critical_tokens, "critical_path_requests": d.critical_requests,
                    "last_start_s": round(d.last_start_s, 3), "requests": d.requests, "hit_rate": d.hit_rate,
                    "pareto": d.pareto})
    return out


def _cell(key: str, v) -> str:
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


#: The terminal table leaves out the request count (the same in most grids; JSON and CSV keep it).
TERMINAL = tuple(c for c in COLUMNS if c != "requests")


#: What a narrow terminal leaves out first, named under the table: the design's name and cost stay.
NARROW_DROPS = ("last_start_s", "critical_path_requests", "hit_rate", "vs_cheapest")


def _table(rs: Sequence[dict], markdown: bool, width: int = DEFAULT_WIDTH) -> str:
    cols = COLUMNS if markdown else TERMINAL
    head = [HEADERS.get(c, c) for c in cols]
    body = [[_cell(c, r[c]) for c in cols] for r in rs]
    left = [c == "design" for c in cols]
    if markdown:
        def line(cells):
            return "| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |"

        sep = "|" + "|".join("---" if is_left else "---:" for is_left in left) + "|"
        return "\n".join([line(head), sep, *(line(r) for r in body)])
    # fitted as `run`'s comparison is (report/layout.py): a design's name on one line, else two, the
    # columns the answer does not rest on left out first and named under the table
    drops = [cols.index(c) for c in NARROW_DROPS if c in cols]
    table, dropped = fit_dropping(head, body, [not x for x in left], width, left, drops, keep_text=KEEP_TEXT)
    note = dropped_note(dropped, width, min_width(head, body, left, KEEP_TEXT))
    return table + ("\n" + note if note else "")


def _summary(g: GridResult) -> list[str]:
    c, front = g.cheapest, g.front
    top = max(d.cost_usd for d in g.designs)
    lines = [f"{g.scenario} ({g.path}): {len(g.designs)} designs",
             f"cheapest: {c.name}  {usd(c.cost_usd)}" + (f", {float((top - c.cost_usd) / top):.1%} below the costliest "
                                                         f"({usd(top)})" if top > c.cost_usd else "")]
    tied = g.tied()
    if tied:
        lines.append(f"the same cost: {', '.join(d.name for d in tied[:3])}{', ...' if len(tied) > 3 else ''}")
    lines.append(f"Pareto front of cost and uncached critical-path tokens: {len(front)} "
                 f"design{'s' if len(front) != 1 else ''}, marked *")
    return lines


def text(g: GridResult, markdown: bool = False, width: int = DEFAULT_WIDTH) -> str:
    """The terminal (or Markdown) report of one scenario's design search."""
    head = _summary(g)
    if markdown:
        return "\n".join([f"## {head[0]}", "", *(f"- {x}" for x in head[1:]), "", _table(rows(g), True), "",
                          f"_{DEFINITION}._"])

    return "\n".join([*(wrap_block(x, width, "    ") for x in head), "", _table(rows(g), False, width), "",
                      wrap_block(DEFINITION, min(width, 100))])


def csv_rows(gs: Sequence[GridResult]) -> tuple[list[dict], list[str]]:
    dims = [k for g in gs for d in g.designs[:1] for k, _ in d.values]
    cols = ["scenario", "rank", "design", *dict.fromkeys(f"dim_{k}" for k in dims), *COLUMNS[2:]]
    return [{"scenario": g.scenario, **r} for g in gs for r in rows(g)], cols


def to_json(g: GridResult) -> dict:
    return {"scenario": g.scenario, "file": g.path, "cheapest": g.cheapest.name,
            "pareto_front": [d.name for d in g.front], "definition": DEFINITION,
            "designs": [{**{k: v for k, v in r.items() if not k.startswith("dim_")},
                         "dimensions": {k[4:]: v for k, v in r.items() if k.startswith("dim_")}} for r in rows(g)]}


def figure(g: GridResult):
    """Cost against uncached critical-path tokens, one point per design; the Pareto front joined
    and labelled, the cheapest design ringed. Agg canvas, never pyplot (charts._figure)."""
    fig = _figure((8.0, 5.2))
    ax = fig.subplots()
    others = [d for d in g.designs if not d.pareto]
    front = list(g.front)
    ax.scatter([d.critical_tokens for d in others], [float(d.cost_usd) for d in others], s=28, color="#999999",
               label="dominated design", zorder=3)
    xs = [d.critical_tokens for d in sorted(front, key=lambda d: (d.critical_tokens, d.cost_usd))]
    ys = [float(d.cost_usd) for d in sorted(front, key=lambda d: (d.critical_tokens, d.cost_usd))]
    ax.plot(xs, ys, "-", drawstyle="steps-post", color=PALETTE[0], linewidth=1.5, zorder=2)
    ax.scatter(xs, ys, s=46, color=PALETTE[0], label="Pareto front", zorder=4)
    c = g.cheapest
    ax.scatter([c.critical_tokens], [float(c.cost_usd)], s=160, facecolors="none", edgecolors=PALETTE[1],
               linewidths=2, label="cheapest", zorder=5)
    offsets = ((8, 8), (8, -14), (8, 20), (8, -26))   # alternate so neighbouring labels do not collide
    for i, d in enumerate(front[:8]):
        ax.annotate(d.name, (d.critical_tokens, float(d.cost_usd)), textcoords="offset points",
                    xytext=offsets[i % len(offsets)], fontsize=7.5,
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "#bbbbbb", "alpha": 0.9})
    ax.set_title(f"Cost vs uncached critical-path tokens: {g.scenario}")
    from matplotlib.ticker import FuncFormatter  # lazy: start-up: matplotlib loads only to draw

    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"${y:,.2f}" if y >= 1 else f"${y:,.3f}"))
    ax.set_xlabel("prompt tokens computed uncached on the critical path (tokens)")
    ax.set_ylabel("cost (USD)")
    ax.legend(loc="best", fontsize=8)
    fig.text(0.01, 0.01, f"{len(g.designs)} designs of {Path(g.path).name}; lower left is better on both axes",
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


def output(gs: Sequence[GridResult], fmt: str = "table", width: int = DEFAULT_WIDTH) -> str:
    """What `prefixsim search` prints for `fmt` (table, markdown, csv or json), newline-terminated."""
    if fmt == "json":
        return json_text({"scenarios": [to_json(g) for g in gs]})
    if fmt == "csv":
        return csv_text(*csv_rows(gs))
    return "\n\n".join(text(g, fmt == "markdown", width) for g in gs) + "\n"


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
