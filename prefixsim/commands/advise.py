"""`prefixsim advise`: money by miss cause and replay-verified recommendations."""
from __future__ import annotations

import click

from ..errors import UserError


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def advise(paths, fmt):
    """Where real traffic (anything `prefixsim replay` reads) loses money to the cache, and the
    changes a what-if replay of the same traffic shows would save it."""
    from .. import sources
    from ..advise import advise as run_advise

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
