"""`prefixsim breakeven` (crossing points, CSV + PNG + SVG) and `prefixsim report` (the design-review page)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from ..errors import UserError
from .run import parse_price_date

STUDY_NAMES = ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum", "gemini-explicit")
#: Studies priced on another provider than Anthropic, and their default model.
OTHER_PROVIDER = {"gemini-explicit": ("gemini", "gemini-2.5-pro")}


def _params_class(study: str):
    from ..analysis import fork_vs_subagent, gemini_explicit, invalidation, minimum, stagger, ttl

    return {"fork-vs-subagent": fork_vs_subagent.ForkParams, "ttl": ttl.TTLParams,
            "stagger": stagger.StaggerParams, "invalidation": invalidation.InvalidationParams,
            "minimum": minimum.MinimumParams, "gemini-explicit": gemini_explicit.ExplicitParams}[study]


#: Study parameters that count requests or agents; every other whole-number parameter is a size in
#: tokens and every fractional one a time in seconds. Each has a scenario's limit (schema.py); and as a
#: study simulates its designs at several sample points, children x turns is held to STUDY_REQUESTS
#: (measured: 1,000 children x 10 turns verify in about 5 s of CPU; 10,000 x 20 took 96 s).
COUNT_PARAMS = ("children", "turns", "requests")
STUDY_REQUESTS = 10_000


def _parse_params(study: str, pairs: tuple[str, ...]):
    import math

    from ..scenario.schema import MAX_COUNT, MAX_SECONDS, MAX_TOKENS

    cls = _params_class(study)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in fields:
            raise UserError(f"--param {pair!r}: {study} takes KEY=VALUE with KEY one of {', '.join(fields)}")
        default = fields[key].default
        try:
            values[key] = type(default)(raw) if not isinstance(default, str) else raw
        except ValueError:
            raise UserError(f"--param {key}: {raw!r} is not a {type(default).__name__}") from None
        v = values[key]
        if isinstance(v, (int, float)):
            if not math.isfinite(v) or v < 0:
                raise UserError(f"--param {key}: {raw!r} must be a finite number, not negative")
            limit, unit = ((MAX_COUNT, "") if key in COUNT_PARAMS else (MAX_SECONDS, " seconds")
                           if isinstance(v, float) else (MAX_TOKENS, " tokens"))
            if v > limit:
                raise UserError(f"--param {key}: {raw} is too large (at most {limit:,}{unit}; more is a typo, "
                                "not a design)")
    if values.get("ttl", "5m") not in ("5m", "1h"):
        raise UserError("--param ttl: 5m or 1h")
    f = cls(**values)
    requests = getattr(f, "children", 1) * getattr(f, "turns", 1)
    if requests > STUDY_REQUESTS:
        raise UserError(f"--param children x turns = {requests:,} requests per simulated design (at most "
                        f"{STUDY_REQUESTS:,}); lower children or turns")
    return f


def _load_sheet(path: str | None) -> dict | None:
    """A --prices sheet (YAML or JSON): every price checked here, each error at its file:line."""
    if path is None:
        return None
    from ..jsonfile import load_json
    from ..scenario.loader import input_boundary
    from ..userfiles import MAX_YAML_BYTES
    from ..yamlfile import load_yaml

    with input_boundary(path):
        if Path(path).suffix == ".json":
            doc = load_json(path, "price sheet", cap=MAX_YAML_BYTES)
        else:
            doc = load_yaml(path, "price sheet", needs="one model's prices")
        return _checked_sheet(path, doc)


def _checked_sheet(path: str, doc: object) -> dict:
    from ..pricing import PRICE_KEYS, sheet_price
    from ..scenario.loader import locate

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


def _gaps(spec: str | None, from_paths: tuple[str, ...]) -> list[float] | None:
    gaps: list[float] = []
    if spec:
        try:
            gaps += [float(x) for x in spec.split(",") if x.strip()]
        except ValueError:
            raise UserError(f"--gaps {spec!r}: a comma-separated list of seconds") from None
    if from_paths:
        from ..sources import open_many

        by_stream: dict[str, list[float]] = {}
        for rec in open_many(list(from_paths)):
            by_stream.setdefault(rec.call.stream, []).append(rec.call.t)
        for times in by_stream.values():
            times.sort()
            gaps += [b - a for a, b in zip(times, times[1:])]
    return gaps or None


@click.command()
@click.argument("study", type=click.Choice(STUDY_NAMES))
@click.option("--model", help="Model whose prices apply (default claude-sonnet-4-5; gemini-2.5-pro for gemini-explicit).")
@click.option("--prices", "sheet", type=click.Path(dir_okay=False), help="Price sheet (YAML/JSON, USD per MTok).")
@click.option("--price-date", help="genai-prices rates in force on this date (YYYY-MM-DD; default today).")
@click.option("-p", "--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Study parameter, e.g. -p children=5 -p turns=3 (see the list below).")
@click.option("--gaps", help="ttl: observed gaps between requests, seconds, comma-separated.")
@click.option("--gaps-from", multiple=True, type=click.Path(exists=True),
              help="ttl: take the gaps from real traffic (transcripts or API logs).")
@click.option("--out", default="reports/breakeven", show_default=True, type=click.Path(file_okay=False),
              help="Folder for <study>.csv, .png and .svg.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def breakeven(study, model, sheet, price_date, params, gaps, gaps_from, out, fmt):
    """Crossing points of a design choice, with the curve behind them (CSV + PNG + SVG).

    \b
    Studies and their parameters (-p KEY=VALUE):
      fork-vs-subagent  children turns parent_static sub_static task directive call growth ttl
      ttl               prefix                  (plus --gaps / --gaps-from)
      stagger           children shared task ttft ttl
      invalidation      tools system growth turns ttl
      minimum           prefix requests ttl
      gemini-explicit   prefix reads ttl_s     (Gemini CachedContent vs implicit and no caching)
    Each is computed in closed form and checked against a simulation through the provider rules.

    \b
    Examples:
      prefixsim breakeven fork-vs-subagent -p children=5 -p turns=3
      prefixsim breakeven ttl --gaps-from ~/.claude/projects/my-project/
    """
    from ..analysis import studies
    from ..analysis.common import prices_for
    from ..analysis.verify import verify
    from ..fsutil import check_outputs, write_files
    from ..providers.tables import anthropic_min_tokens
    from ..report.charts import line_figure, render_both
    from ..report.tables import csv_text, grid, json_text

    base = Path(out) / study
    written = [base.with_suffix(".csv"), base.with_suffix(".png"), base.with_suffix(".svg")]
    check_outputs([*([sheet] if sheet else []), *gaps_from], files=written)
    f = _parse_params(study, params)
    provider, default_model = OTHER_PROVIDER.get(study, ("anthropic", "claude-sonnet-4-5"))
    model = model or default_model
    try:
        if provider == "anthropic":
            anthropic_min_tokens(model)
    except UserError as e:
        raise UserError(f"{e.message}; the studies model Anthropic's rules, so name a Claude model and "
                        "override its prices with --prices if yours differ") from None
    p, book = prices_for(model, _load_sheet(sheet), parse_price_date(price_date), provider=provider,
                         sheet_source=f"price sheet {sheet}")
    kwargs = {"gaps": _gaps(gaps, gaps_from)} if study == "ttl" else {"book": book} if provider == "gemini" else {}
    # gemini-explicit stays out of STUDIES: the design-review report runs those on a Claude model
    from ..analysis import gemini_explicit
    s = (gemini_explicit.study if study == "gemini-explicit" else studies.STUDIES[study])(p, f, **kwargs)
    check = verify(study, p, book, f)
    cols = list(dict.fromkeys(k for row in s.curve for k in row))
    png, svg = render_both(line_figure(s.chart))
    write_files(dict(zip(written, (csv_text(s.curve, cols), png, svg))))
    if fmt == "json":
        click.echo(json_text({"study": study, "model": model, "prices": p.source, "params": s.params,
                              "reading": s.reading, "crossings": s.table, "check": check, "curve": s.curve}), nl=False)
        return
    click.echo(f"{s.title} — {model}")
    click.echo(f"prices: {p.source}")
    tcols = list(dict.fromkeys(k for row in s.table for k in row))
    click.echo(grid(s.table, tcols))
    click.echo("")
    click.echo(s.reading)
    click.echo(f"closed form vs simulation: {check['points']} points, largest difference ${check['max_abs_diff_usd']:.9f}")
    click.echo(f"wrote {written[0]}, {written[1]}, {written[2]}", err=True)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", default="reports/report.html", show_default=True, type=click.Path(),
              help="The HTML page (x.html; x.md and the PNGs in x_files/ go beside it), or a folder "
                   "(ending in / or existing) for report.html, report.md and report_files/.")
@click.option("--model", help="Model for the break-even studies (default: the first scenario's).")
@click.option("--title", default="Prompt-cache design review", show_default=True)
@click.option("--price-date", help="genai-prices rates in force on this date (YYYY-MM-DD; default today).")
def report(paths, output, model, title, price_date):
    """One self-contained HTML page for a design review (and report.md with PNGs beside it).

    \b
    Examples:
      prefixsim report scenarios/ -o reports/report.html
      prefixsim report scenarios/ -o reports/review/
    """
    from ..report.build import build_report

    out = build_report(list(paths), output, model=model, title=title, when=parse_price_date(price_date))
    click.echo(f"wrote {out[0]} and {out[1]}", err=True)
