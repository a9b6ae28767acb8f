"""`prefixsim search SCENARIO...`: the design search of scenarios that declare `optimize:`
(advise/grid.py), printed and written as report files (report/pareto.py). `prefixsim advise` given
scenarios runs it too."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

from pathlib import Path

import click

from prefixsim.commands.common import Seconds, emphasis, format_option, output_width, parse_price_date, parse_start_option
from prefixsim.errors import UserError
from prefixsim.io.fsutil import check_outputs



def check_chart(chart: str | None, paths) -> None:
    """--chart names a .png or .svg file that is none of the inputs."""
    if chart is not None and not chart.endswith((".png", ".svg")):
        raise UserError("--chart must name a .png or .svg file", chart)
    if chart is not None:
        check_outputs(paths, files=[chart])


def run_search(targets, fmt: str, out: str, no_write: bool, price_date, start, workers: int, executor: str,
               scheduler, chart: str | None = None, width: int | None = None, max_ttft: float | None = None) -> None:
    """Search the designs of `targets` (advise.grid.Targets), print them in `fmt` (a terminal table
    fitted to `width`, None: output_width's), only those whose p95 TTFT is at most `max_ttft`
    seconds when it is given, then write the chart (the first scenario's) and the report folders
    (unless `no_write`)."""
    # lazy: the scenario runner and the charts load only when a search runs (`prefixsim --help` loads neither)
    from prefixsim.advise.grid import search
    from prefixsim.report import pareto

    if targets.skipped:
        n = len(targets.skipped)
        click.echo(f"prefixsim: skipped {n} scenario{'s' if n > 1 else ''} without `optimize:` "
                   f"({', '.join(targets.skipped)}); `prefixsim run` simulates {'them' if n > 1 else 'it'} as written",
                   err=True)
    files = list(targets.searched)
    when, at, cols = parse_price_date(price_date), parse_start_option(start), output_width(width)
    if not no_write:   # before anything runs: never a report folder over an input, nor over another kind
        pareto.check_folders(files, Path(out))
    grids = [g.within(max_ttft) for g in search(files, when, workers, executor, scheduler, at)]
    click.echo(pareto.output(grids, fmt, cols, bold=emphasis()), nl=False)
    pareto.write_all(grids, None if no_write else Path(out), chart)
    if not no_write and fmt == "table":
        click.echo(f"\nreports written to {out.rstrip('/') or '/'}/", err=True)


#: What --max-ttft bounds, said in both commands' help (advise/grid.py: TTFT_STAT).
MAX_TTFT_HELP = ("rank only the designs whose p95 time to first token (the 95th percentile of their requests' "
                 "times under the scenario's latency model) is at most this: 3, 3s, 3000ms; the others are "
                 "counted as excluded.")


def search_options(prefix: str = ""):
    """The options of a design search (shared by `search` and `advise`, whose help says `prefix` first)."""
    def h(text: str) -> str:
        return prefix + text if prefix else text[0].upper() + text[1:]

    options = [
        click.option("--out", default="reports", show_default=True, type=click.Path(file_okay=False),
                     help=h("folder for the report files (one <scenario>-designs/ folder each).")),
        click.option("--no-write", is_flag=True, help=h("print only; write no report files.")),
        click.option("--price-date", help=h("genai-prices rates in force on this date (YYYY-MM-DD).")),
        click.option("--start", metavar="DATETIME", help=h("when t = 0 falls (as `run --start`).")),
        click.option("--workers", type=int, default=1, show_default=True,
                     help=h("simulate designs in this many local processes (0: one per core).")),
        click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True),
        click.option("--scheduler", metavar="ADDRESS", help="The dask scheduler, e.g. tcp://10.0.0.5:8786."),
        click.option("--max-ttft", type=Seconds(), metavar="SECONDS", help=h(MAX_TTFT_HELP)),
        click.option("--width", type=int, metavar="COLUMNS",
                     help=h("fit tables to this width (default: the terminal's, or 120 when not a terminal).")),
    ]

    def add(f):
        for option in reversed(options):
            f = option(f)
        return f

    return add


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@format_option
@click.option("--chart", type=click.Path(dir_okay=False), default=None,
              help="Also write the first scenario's Pareto chart here (.png or .svg).")
@search_options()
def search(paths, fmt, chart, out, no_write, price_date, start, workers, executor, scheduler, max_ttft, width):
    """Design search: every combination of the values a scenario lists under `optimize:`, each
    design's cost beside its time to first token (p50/p95 per request, and the wait per turn), the
    cheapest design and the Pareto front of cost and p95 TTFT (docs/design-search.md). PATHS:
    scenario files, or folders (their scenarios without `optimize:` are skipped).

    \b
    Examples:
      prefixsim search scenarios/agent-design-space.yaml
      prefixsim search scenarios/agent-design-space.yaml --max-ttft 3s
      prefixsim search scenarios/ --workers 0 --format markdown
    """
    from prefixsim.advise.grid import design_targets  # lazy: the scenario model loads only when a search runs

    check_chart(chart, paths)
    run_search(design_targets(paths, traffic=False), fmt, out, no_write, price_date, start, workers, executor,
               scheduler, chart, width, max_ttft)
