"""`prefixsim breakeven` (crossing points, CSV + PNG + SVG) and `prefixsim report` (the design-review page)."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import sys

import click

from prefixsim.commands.common import Progress, TokenSize, format_option, output_width, parse_price_date
from prefixsim.io.suggest import unknown
from prefixsim.scenario.studynames import BREAKEVEN_STUDIES


class NamedChoice(click.Choice):
    """A choice whose refusal names the nearest valid value (and keeps click's shell completion)."""

    def __init__(self, choices, kind: str) -> None:
        super().__init__(choices)
        self.kind = kind

    def convert(self, value, param, ctx):
        if value in self.choices:
            return value
        self.fail(unknown(self.kind, value, self.choices), param, ctx)


@click.command()
@click.argument("study", type=NamedChoice(BREAKEVEN_STUDIES, "study"), metavar="STUDY")
@click.option("--model", help="Model whose prices apply (default claude-sonnet-4-5; for gemini-explicit the first of "
                                   "gemini-2.5-pro, gemini-3.1-pro-preview live on the price date).")
@click.option("--prices", "sheet", type=click.Path(dir_okay=False), help="Price sheet (YAML/JSON, USD per MTok).")
@click.option("--price-date", help="genai-prices rates in force on this date (YYYY-MM-DD; default today).")
@click.option("-p", "--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Study parameter, e.g. -p children=5 -p turns=3 (see the list below).")
@click.option("--gaps", help="ttl: steady gaps to answer for (seconds, comma-separated); replaces the "
                              "built-in 60, 600, 1800, 5400.")
@click.option("--gaps-from", multiple=True, type=click.Path(exists=True),
              help="ttl: real traffic (transcripts or API logs) whose gaps are summarized and drawn on the chart.")
@click.option("--out", default="reports/breakeven", show_default=True, type=click.Path(file_okay=False),
              help="Folder for <study>.csv, .png and .svg.")
@click.option("--scenario-at", "scenario_at", type=TokenSize(0, 10_000_000), metavar="TOKENS",
              help="fork-vs-subagent: also write the designs at TOKENS of parent history as a scenario "
                   "(<out>/fork-vs-subagent.scenario.yaml) for `prefixsim run`.")
@click.option("--gpus", "gpus", type=click.Path(dir_okay=False), metavar="FILE",
              help="api-vs-selfhosted: your own GPU rows (YAML/JSON: name -> bf16_tflops, fp8_tflops, hbm_gb, "
                   "hbm_tb_s, usd_per_hour, source), on top of the catalogue.")
@click.option("--width", type=int, metavar="COLUMNS",
              help="Fit the text to this width (default: the terminal's, or 120 when not a terminal).")
@format_option
def breakeven(study, model, sheet, price_date, params, gaps, gaps_from, out, fmt, scenario_at, gpus, width):
    """Crossing points of a design choice, with the curve behind them (CSV + PNG + SVG).

    \b
    Studies and their parameters (-p KEY=VALUE):
      fork-vs-subagent  children turns parent_static sub_static task directive call growth
                        stagger ttft ttl   (any of them as a list to compare: -p children=3,4,6)
      ttl               prefix                  (plus --gaps / --gaps-from)
      stagger           children shared task ttft ttl
      invalidation      tools system growth turns ttl
      minimum           prefix requests ttl
      gemini-explicit   prefix reads ttl_s     (Gemini CachedContent vs implicit and no caching)
      api-vs-selfhosted static growth turns output rate pace ttl open_model gpu engine dtype
                        gpu_hour_usd compute_efficiency memory_efficiency max_batch
                        (the API vs GPUs: the request rate from which self-hosting is cheaper;
                        plus --gpus FILE)
    Each is computed in closed form and checked against the scenario runner on designs the
  scenario builder makes from the same parameters (CHECK FAILED and exit 1 if they differ).

    \b
    Examples:
      prefixsim breakeven fork-vs-subagent -p children=5 -p turns=3
      prefixsim breakeven fork-vs-subagent -p children=3,4,6 -p parent_static=30000
      prefixsim breakeven ttl --gaps 120,900 --gaps-from ~/.claude/projects/my-project/
      prefixsim breakeven api-vs-selfhosted -p rate=2 -p gpu=h200
    """
    from prefixsim.report.breakeven import run_breakeven  # lazy: the studies load only when one runs
    from prefixsim.report.tables import json_text

    # a width asked for (--width, a terminal's) fits the tables; a pipe gets the same bytes as ever
    cols = output_width(width) if width is not None or sys.stdout.isatty() else None
    b = run_breakeven(study, out, model, sheet, parse_price_date(price_date), params, gaps, gaps_from, scenario_at,
                      gpus)
    click.echo(json_text(b.to_json()) if fmt == "json" else b.csv() if fmt == "csv" else
               b.text(cols, fmt == "markdown"), nl=False)
    click.echo(f"wrote {', '.join(map(str, b.written))}", err=True)
    if not b.check["ok"]:
        click.echo(b.check_line(), err=True)
        raise SystemExit(1)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", default="reports/report.html", show_default=True, type=click.Path(),
              help="The HTML page (x.html; x.md and the PNGs in x_files/ go beside it), or a folder "
                   "(ending in / or existing) for report.html, report.md and report_files/.")
@click.option("--model", help="Model for the break-even studies (default: the first scenario's).")
@click.option("--title", default="Prompt-cache design review", show_default=True)
@click.option("--price-date", help="genai-prices rates in force on this date (YYYY-MM-DD; default today).")
@click.option("-p", "--param", "params", multiple=True, metavar="[STUDY.]KEY=VALUE",
              help="Break-even study parameter over the scenarios' `studies:` and the defaults, e.g. "
                   "-p children=4 or -p fork-vs-subagent.turns=2,5.")
@click.option("--advise", "traffic", multiple=True, type=click.Path(exists=True),
              help="Real traffic (anything `prefixsim advise` reads) for a \"What to change\" section.")
def report(paths, output, model, title, price_date, params, traffic):
    """One self-contained HTML page for a design review (and report.md with PNGs beside it).

    \b
    Examples:
      prefixsim report scenarios/ -o reports/report.html
      prefixsim report scenarios/ -o reports/review/
      prefixsim report scenarios/ --advise ~/.claude/projects/my-app/
    """
    # lazy: the report's scenarios, studies and charts load only when it is built
    from prefixsim.analysis.verify import CheckFailed
    from prefixsim.report.build import build_report

    # a bar on stderr from the start (terminals only): a report takes 15 s or more, each step named
    bar = Progress(0, delay=0.0)

    def progress(done: int, total: int, label: str) -> None:
        bar.total = total
        bar(done, label)

    try:
        out = build_report(list(paths), output, model=model, title=title, when=parse_price_date(price_date),
                           params=params, progress=progress, traffic=traffic)
    except CheckFailed as e:
        click.echo(f"prefixsim: {e}", err=True)
        raise SystemExit(1) from None
    finally:
        bar.close()
    click.echo(f"wrote {out[0]} and {out[1]}", err=True)
