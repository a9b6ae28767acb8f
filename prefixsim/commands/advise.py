"""`prefixsim advise`: money by miss cause and replay-verified recommendations."""
from __future__ import annotations

import click

from ..errors import UserError


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]), default="table",
              show_default=True)
@click.option("--out", default="reports", show_default=True, type=click.Path(file_okay=False),
              help="Design search: folder for the report files (one <scenario>-designs/ folder each).")
@click.option("--no-write", is_flag=True, help="Design search: print only; write no report files.")
@click.option("--price-date", help="Design search: genai-prices rates in force on this date (YYYY-MM-DD).")
@click.option("--start", metavar="DATETIME", help="Design search: when t = 0 falls (as `run --start`).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Design search: simulate designs in this many local processes (0: one per core).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option("--scheduler", metavar="ADDRESS", help="The dask scheduler, e.g. tcp://10.0.0.5:8786.")
def advise(paths, fmt, out, no_write, price_date, start, workers, executor, scheduler):
    """Where real traffic (anything `prefixsim replay` reads) loses money to the cache, and the
    changes a what-if replay of the same traffic shows would save it.

    Given scenario files that declare `optimize:`, a design search instead: every combination of
    the listed values, each design's cost and uncached critical-path tokens, the cheapest design and
    the Pareto front (docs/design-search.md).

    \b
    Example:
      prefixsim advise scenarios/agent-design-space.yaml --workers 0
    """
    from .. import sources
    from ..advise import advise as run_advise
    from .designs import run_search, searches

    if searches(paths):
        return run_search(paths, fmt, out, no_write, price_date, start, workers, executor, scheduler)
    if fmt in ("csv", "markdown"):
        raise UserError(f"--format {fmt} is for a design search (scenario files with `optimize:`); "
                        "traffic takes table or json")

    traffic = sources.open_many(paths, None, errors=[])
    if not len(traffic):
        raise UserError("no requests found", str(paths[0]))
    a = run_advise(traffic)
    if fmt == "json":
        import json

        click.echo(json.dumps({
            "predicted_cost_usd": float(a.total_usd),
            "by_cause": [{"cause": k, "requests": n, "cost_usd": float(c)} for k, n, c in a.by_cause],
            "recommendations": [{"change": r.change, "saved_usd": float(r.saved_usd), "percent": r.percent,
                                 "rebuilds_avoided": r.rebuilds_avoided, "streams": r.evidence}
                                for r in a.recommendations]}, indent=2))
        return
    click.echo(f"predicted cost ${a.total_usd:.2f}")
    click.echo(f"{'cause':<24}{'requests':>10}{'cost $':>12}")
    for cause, n, c in a.by_cause:
        click.echo(f"{cause:<24}{n:>10}{c:>12.2f}")
    if not a.recommendations:
        click.echo("no change the replay shows saving money")
    for r in a.recommendations:
        click.echo(f"{r.change:<28} saves ${r.saved_usd:.2f} ({r.percent:.1f}%), "
                   f"{r.rebuilds_avoided} rebuilds avoided; streams: {r.evidence}")
