"""`prefixsim breakeven` (crossing points, CSV + PNG + SVG) and `prefixsim report` (the design-review page)."""
from __future__ import annotations

from pathlib import Path

import click

from prefixsim.commands.run import parse_price_date
from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown
from prefixsim.scenario.studyparams import STUDY_NAMES
from prefixsim.scenario.studyparams import parse_pairs as _parse_params

#: `breakeven` also answers studies priced on another provider than Anthropic (their default
#: model); they stay out of the design-review report, whose studies run on the scenarios' Claude model.
OTHER_PROVIDER = {"gemini-explicit": ("gemini", "gemini-2.5-pro")}
BREAKEVEN_STUDIES = (*STUDY_NAMES, *OTHER_PROVIDER)

class NamedChoice(click.Choice):
    """A choice whose refusal names the nearest valid value (and keeps click's shell completion)."""

    def __init__(self, choices, kind: str) -> None:
        super().__init__(choices)
        self.kind = kind

    def convert(self, value, param, ctx):
        if value in self.choices:
            return value
        self.fail(unknown(self.kind, value, self.choices), param, ctx)


def _load_sheet(path: str | None) -> dict | None:
    """A --prices sheet (YAML or JSON): every price checked here, each error at its file:line."""
    if path is None:
        return None
    from prefixsim.io.jsonfile import load_json
    from prefixsim.io.userfiles import MAX_YAML_BYTES
    from prefixsim.io.yamlfile import load_yaml
    from prefixsim.scenario.loader import input_boundary

    with input_boundary(path):
        if Path(path).suffix == ".json":
            doc = load_json(path, "price sheet", cap=MAX_YAML_BYTES)
        else:
            doc = load_yaml(path, "price sheet", needs="one model's prices")
        return _checked_sheet(path, doc)


def _checked_sheet(path: str, doc: object) -> dict:
    from prefixsim.core.pricing import PRICE_KEYS, sheet_price
    from prefixsim.scenario.loader import locate

    shape = "a price sheet maps model -> {" + ", ".join(PRICE_KEYS) + "} (USD per MTok)"
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise UserError(shape, path, 1)
    for model, row in doc.items():
        for key, value in row.items():
            try:
                sheet_price(str(model), str(key), value)
            except UserError as e:
                raise e.located(path, *locate(doc, (model, key))) from None
    return {str(m): {str(k): v for k, v in row.items()} for m, row in doc.items()}


def _steady_gaps(spec: str | None) -> list[float] | None:
    """--gaps: the steady gaps (seconds) the ttl study answers for, replacing its built-in rows."""
    import math

    if not spec:
        return None
    try:
        gaps = [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--gaps {spec!r}: a comma-separated list of seconds") from None
    if not gaps or any(not math.isfinite(g) or g < 0 or g > 365 * 24 * 3600 for g in gaps):
        raise UserError(f"--gaps {spec!r}: seconds from 0 to a year, comma-separated")
    return list(dict.fromkeys(gaps))


def _observed_gaps(from_paths: tuple[str, ...]) -> list[float] | None:
    """--gaps-from: the gaps between consecutive requests of each stream of real traffic."""
    if not from_paths:
        return None
    from prefixsim.sources import open_many

    gaps: list[float] = []
    by_stream: dict[str, list[float]] = {}
    for rec in open_many(list(from_paths)):
        by_stream.setdefault(rec.call.stream, []).append(rec.call.t)
    for times in by_stream.values():
        times.sort()
        gaps += [b - a for a, b in zip(times, times[1:])]
    if not gaps:
        raise UserError(f"--gaps-from {', '.join(from_paths)}: no stream with two requests, so no gap to study")
    return gaps


@click.command()
@click.argument("study", type=NamedChoice(BREAKEVEN_STUDIES, "study"), metavar="STUDY")
@click.option("--model", help="Model whose prices apply (default claude-sonnet-4-5; gemini-2.5-pro for gemini-explicit).")
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
@click.option("--scenario-at", "scenario_at", type=click.IntRange(0, 10_000_000), metavar="TOKENS",
              help="fork-vs-subagent: also write the designs at TOKENS of parent history as a scenario "
                   "(<out>/fork-vs-subagent.scenario.yaml) for `prefixsim run`.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def breakeven(study, model, sheet, price_date, params, gaps, gaps_from, out, fmt, scenario_at):
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
    Each is computed in closed form and checked against the scenario runner on designs the
  scenario builder makes from the same parameters (CHECK FAILED and exit 1 if they differ).

    \b
    Examples:
      prefixsim breakeven fork-vs-subagent -p children=5 -p turns=3
      prefixsim breakeven fork-vs-subagent -p children=3,4,6 -p parent_static=30000
      prefixsim breakeven ttl --gaps 120,900 --gaps-from ~/.claude/projects/my-project/
    """
    from prefixsim.analysis.common import prices_for
    from prefixsim.analysis.studies import check_line, run_study, shown
    from prefixsim.io.fsutil import check_outputs, write_files
    from prefixsim.providers.tables import anthropic_min_tokens
    from prefixsim.report.charts import line_figure, render_both
    from prefixsim.report.layout import wrap_block
    from prefixsim.report.tables import DEFAULT_WIDTH, csv_text, grid, json_text

    base = Path(out) / study
    written = [base.with_suffix(".csv"), base.with_suffix(".png"), base.with_suffix(".svg")]
    if scenario_at is not None:
        if study != "fork-vs-subagent":
            raise UserError(f"--scenario-at belongs to the fork-vs-subagent study, not {study}")
        written.append(base.with_suffix(".scenario.yaml"))
    check_outputs([*([sheet] if sheet else []), *gaps_from], files=written)
    f, lists = _parse_params(study, params)
    provider, default_model = OTHER_PROVIDER.get(study, ("anthropic", "claude-sonnet-4-5"))
    model = model or default_model
    try:
        if provider == "anthropic":
            anthropic_min_tokens(model)
    except UserError as e:
        raise UserError(f"{e.message}; the studies model Anthropic's rules, so name a Claude model and "
                        "override its prices with --prices if yours differ") from None
    sheet_doc, when = _load_sheet(sheet), parse_price_date(price_date)
    p, _ = prices_for(model, sheet_doc, when, provider=provider, sheet_source=f"price sheet {sheet}")
    if (gaps or gaps_from) and study != "ttl":
        raise UserError(f"--gaps and --gaps-from belong to the ttl study, not {study}")
    s, check = run_study(study, p, f, lists, sheet_doc, when, steady=_steady_gaps(gaps),
                         observed=_observed_gaps(gaps_from))
    cols = list(dict.fromkeys(k for row in s.curve for k in row))
    png, svg = render_both(line_figure(s.chart))
    files = [csv_text(s.curve, cols), png, svg]
    if scenario_at is not None:
        from prefixsim.analysis.check_designs import fork_scenario_text
        from prefixsim.analysis.studies import design_labels
        files.append(fork_scenario_text(model, *design_labels(f, lists), scenario_at, sheet_doc))
    write_files(dict(zip(written, files)))
    if fmt == "json":
        click.echo(json_text({"study": study, "model": model, "prices": p.source, "params": s.params,
                              "reading": s.reading, "crossings": s.table, "tables": s.tables, "check": check,
                              "curve": s.curve}), nl=False)
    else:
        click.echo(f"{s.title} — {model}")
        click.echo(wrap_block(f"prices: {p.source}", DEFAULT_WIDTH, "  "))
        for title, rows in s.tables:
            if len(s.tables) > 1:
                click.echo(f"\n{title}")
            click.echo(grid(shown(rows), list(dict.fromkeys(k for row in rows for k in row))))
        click.echo("")
        click.echo(wrap_block(s.reading, DEFAULT_WIDTH))
        click.echo(wrap_block(check_line(check), DEFAULT_WIDTH))
    click.echo(f"wrote {', '.join(map(str, written))}", err=True)
    if not check["ok"]:
        click.echo(check_line(check), err=True)
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
    from prefixsim.analysis.verify import CheckFailed
    from prefixsim.commands.run import Progress
    from prefixsim.report.build import build_report

    bar = Progress(0)   # a bar on stderr once the report has taken more than a second (terminals only)

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
