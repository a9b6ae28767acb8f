"""`prefixsim advise`: money by token class and lost by cause, stream, breaker and volatile content,
and the changes a what-if replay of the same traffic shows would save money."""
from __future__ import annotations

import click

from prefixsim.errors import UserError


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]), default="table",
              show_default=True)
@click.option("--chart", type=click.Path(dir_okay=False), default=None,
              help="Write the waterfall from today's cost to the best combination's (.png or .svg).")
@click.option("--strict", is_flag=True, help="Stop at the first unusable line instead of skipping it.")
@click.option("--out", default="reports", show_default=True, type=click.Path(file_okay=False),
              help="Design search: folder for the report files (one <scenario>-designs/ folder each).")
@click.option("--no-write", is_flag=True, help="Design search: print only; write no report files.")
@click.option("--price-date", help="Design search: genai-prices rates in force on this date (YYYY-MM-DD).")
@click.option("--start", metavar="DATETIME", help="Design search: when t = 0 falls (as `run --start`).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Design search: simulate designs in this many local processes (0: one per core).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option("--scheduler", metavar="ADDRESS", help="The dask scheduler, e.g. tcp://10.0.0.5:8786.")
def advise(paths, fmt, chart, strict, out, no_write, price_date, start, workers, executor, scheduler):
    """Where real traffic (anything `prefixsim replay` reads) loses money to the cache, and the
    changes a what-if replay of the same traffic shows would save it.

    Given scenario files that declare `optimize:`, a design search instead: every combination of
    the listed values, each design's cost and uncached critical-path tokens, the cheapest design and
    the Pareto front (docs/design-search.md).

    \b
    Examples:
      prefixsim advise ~/.claude/projects/my-app/
      prefixsim advise gateway.jsonl --format markdown --chart waterfall.png
      prefixsim advise scenarios/agent-design-space.yaml --workers 0
    """
    from prefixsim import sources
    from prefixsim.advise import advise as run_advise
    from prefixsim.advise import output

    if chart is not None and not chart.endswith((".png", ".svg")):
        raise UserError("--chart must name a .png or .svg file", chart)
    if chart is not None:
        from prefixsim.io.fsutil import check_outputs

        check_outputs(paths, files=[chart])
    from prefixsim.commands.search import run_search, searches

    if searches(paths):
        return run_search(paths, fmt, out, no_write, price_date, start, workers, executor, scheduler, chart)
    from prefixsim.commands.common import failure as _failure
    from prefixsim.commands.common import warn_problems as _warn
    from prefixsim.sources.problems import collecting

    failed: list[UserError] = []
    with collecting(strict) as found:   # skipped lines named on stderr, as `replay` does
        traffic = sources.open_many(paths, None, errors=failed)
    if not len(traffic) and len(failed) == len(paths) == 1:
        _warn(found, [])
        raise failed[0]
    _warn(found, failed)
    if failed:   # advice on part of the traffic would be advice on other traffic
        raise _failure(failed, paths)
    if not len(traffic):
        raise UserError("no requests found", str(paths[0]))
    a = run_advise(traffic)
    if fmt == "json":
        from prefixsim.report.tables import json_text

        click.echo(json_text(output.to_json(a)), nl=False)
    elif fmt == "csv":
        from prefixsim.report.tables import csv_text

        click.echo(csv_text(output.csv_rows(a), output.CSV_COLUMNS), nl=False)
    else:
        click.echo(output.text(a, markdown=fmt == "markdown"), nl=False)
    if chart is not None:
        from prefixsim.io.fsutil import write_files
        from prefixsim.report.charts import render_both

        png, svg = render_both(output.waterfall_figure(a))
        write_files({chart: png if chart.endswith(".png") else svg})
