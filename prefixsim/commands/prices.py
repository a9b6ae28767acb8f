"""`prefixsim prices MODEL`: every rate prefixsim would use for a model, with the source of each."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import click

from prefixsim.commands.common import format_option, output_width, width_option
from prefixsim.errors import UserError


@click.command()
@click.argument("model")
@click.option("--provider", help="anthropic, bedrock, vertex, openai, deepseek or gemini (default: from the model id).")
@click.option("--endpoint", help="Vertex / Bedrock: global, regional or multi-region (default: global on Vertex, "
                                 "the model id's on Bedrock).")
@click.option("--date", "date", help="Price date (YYYY-MM-DD; default today); rates at 07:00 UTC that day.")
@format_option
@width_option
def prices(model, provider, endpoint, date, fmt, width):
    """Every rate prefixsim would use for MODEL (input, output, cache read, 5m and 1h writes), with the
    source of each: genai-prices' bundled data, a prefixsim overlay row, or a documented multiplier.

    \b
    Examples:
      prefixsim prices claude-opus-4-1 --provider vertex
      prefixsim prices deepseek-chat --date 2026-06-10
      prefixsim prices claude-sonnet-4-5 --provider vertex --endpoint regional
    """
    from prefixsim.core.price_report import price_sheet, sheet_json
    from prefixsim.providers.registry import PROVIDERS, priced_provider
    from prefixsim.report.prices import render_prices

    import datetime as dt

    try:
        when = dt.date.fromisoformat(date) if date else None
    except ValueError:
        raise UserError(f"--date {date!r} is not YYYY-MM-DD") from None
    if provider is not None and provider not in PROVIDERS:
        raise UserError(f"unknown provider {provider!r} (valid: {', '.join(PROVIDERS)})")
    sheet = price_sheet(model, provider or priced_provider(model), endpoint, when)
    if fmt == "json":
        import json

        click.echo(json.dumps(sheet_json(sheet), indent=2))
    else:
        click.echo(render_prices(sheet, output_width(width), fmt), nl=fmt != "csv")
