"""`prefixsim advise`: money by token class and lost by cause, stream, breaker and volatile content,
and the changes a what-if replay of the same traffic shows would save money."""
from __future__ import annotations

import click

from ..errors import UserError


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]), default="table",
              show_default=True)
@click.option("--chart", type=click.Path(dir_okay=False), default=None,
              help="Write the waterfall from today's cost to the best combination's (.png or .svg).")
@click.option("--strict", is_flag=True, help="Stop at the first unusable line instead of skipping it.")
def advise(paths, fmt, chart, strict):
    """Where real traffic (anything `prefixsim replay` reads) loses money to the cache, and the
    changes a what-if replay of the same traffic shows would save it.

    \b
    Examples:
      prefixsim advise ~/.claude/projects/my-app/
      prefixsim advise gateway.jsonl --format markdown --chart waterfall.png
    """
    from .. import sources
    from ..advise import advise as run_advise
    from ..advise import output

    if chart is not None and not chart.endswith((".png", ".svg")):
        raise UserError("--chart must name a .png or .svg file", chart)
    if chart is not None:
        from ..fsutil import check_outputs

        check_outputs(paths, files=[chart])
    from ..sources.problems import collecting
    from .replay import _failure, _warn

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
        from ..report.tables import json_text

        click.echo(json_text(output.to_json(a)), nl=False)
    elif fmt == "csv":
        from ..report.tables import csv_text

        click.echo(csv_text(output.csv_rows(a), output.CSV_COLUMNS), nl=False)
    else:
        click.echo(output.text(a, markdown=fmt == "markdown"), nl=False)
    if chart is not None:
        from ..fsutil import write_files
        from ..report.charts import render_both

        png, svg = render_both(output.waterfall_figure(a))
        write_files({chart: png if chart.endswith(".png") else svg})
