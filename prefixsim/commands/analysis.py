"""`prefixsim breakeven` (crossing points, CSV + PNG + SVG) and `prefixsim report` (the design-review page)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from ..errors import UserError
from .run import parse_price_date

STUDY_NAMES = ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum")


def _params_class(study: str):
    from ..analysis import fork_vs_subagent, invalidation, minimum, stagger, ttl

    return {"fork-vs-subagent": fork_vs_subagent.ForkParams, "ttl": ttl.TTLParams,
            "stagger": stagger.StaggerParams, "invalidation": invalidation.InvalidationParams,
            "minimum": minimum.MinimumParams}[study]


#: Study parameters that count requests or agents; every other whole-number parameter is a size in
#: tokens and every fractional one a time in seconds. Each has a scenario's limit (schema.py); and as a
#: study simulates its designs at several sample points, children x turns is held to STUDY_REQUESTS
#: (measured: 1,000 children x 10 turns verify in about 5 s of CPU; 10,000 x 20 took 96 s).
COUNT_PARAMS = ("children", "turns", "requests")
STUDY_REQUESTS = 10_000


#: Studies that compare designs: a parameter may take a list of values (-p children=3,4,6).
LIST_STUDIES = ("fork-vs-subagent",)


def _parse_params(study: str, pairs: tuple[str, ...]):
    """-p KEY=VALUE (or KEY=V1,V2,... to compare) -> (params, {key: values listed})."""
    cls = _params_class(study)
    fields = {f.name for f in dataclasses.fields(cls)}
    raw: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in fields:
            raise UserError(f"--param {pair!r}: {study} takes KEY=VALUE with KEY one of {', '.join(sorted(fields))}")
        if key in raw:
            raise UserError(f"--param {key} is given twice; to compare values list them: -p {key}=A,B")
        raw[key] = [v.strip() for v in value.split(",")] if "," in value else [value.strip()]
    return study_params(study, raw)


def study_params(study: str, values: dict[str, list], where: str = "--param"):
    """Checked study parameters from strings (-p) or a scenario's `studies:` values: (params, lists),
    where `lists` holds every key given, with its values in order (one or more)."""
    import math

    from ..analysis.fork_vs_subagent import PACE
    from ..scenario.schema import MAX_COUNT, MAX_SECONDS, MAX_TOKENS

    cls = _params_class(study)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    lists: dict[str, list] = {}
    for key, raws in values.items():
        if key not in fields:
            raise UserError(f"{where} {key}: {study} takes one of {', '.join(sorted(fields))}")
        if len(raws) > 1 and study not in LIST_STUDIES:
            raise UserError(f"{where} {key}: {study} takes one value (a list compares designs in "
                            f"{', '.join(LIST_STUDIES)} only)")
        if not raws or len(raws) > 50:
            raise UserError(f"{where} {key}: give 1 to 50 values")
        default = fields[key].default
        out = []
        for raw in raws:
            try:
                if isinstance(default, str):
                    v = str(raw)
                elif isinstance(raw, bool):
                    raise ValueError
                elif isinstance(default, int):
                    v = int(raw) if not isinstance(raw, float) or raw.is_integer() else int("x")
                else:
                    v = float(raw)
            except (ValueError, TypeError):
                raise UserError(f"{where} {key}: {raw!r} is not a{'n' if isinstance(default, int) else ''} "
                                f"{type(default).__name__}") from None
            if isinstance(v, (int, float)):
                if not math.isfinite(v) or v < 0:
                    raise UserError(f"{where} {key}: {raw!r} must be a finite number, not negative")
                if key in COUNT_PARAMS and v < 1:
                    raise UserError(f"{where} {key}: at least 1")
                limit, unit = ((MAX_COUNT, "") if key in COUNT_PARAMS else (MAX_SECONDS, " seconds")
                               if isinstance(v, float) else (MAX_TOKENS, " tokens"))
                if v > limit:
                    raise UserError(f"{where} {key}: {raw} is too large (at most {limit:,}{unit}; more is a typo, "
                                    "not a design)")
            if key == "ttl" and v not in ("5m", "1h"):
                raise UserError(f"{where} ttl: 5m or 1h")
            out.append(v)
        if len(set(out)) != len(out):
            raise UserError(f"{where} {key}: a value is listed twice")
        lists[key] = out
    f = cls(**{k: vs[0] for k, vs in lists.items()})
    for k, vs in lists.items():
        for v in vs:
            g = dataclasses.replace(f, **{k: v})
            requests = getattr(g, "children", 1) * getattr(g, "turns", 1)
            if requests > STUDY_REQUESTS:
                raise UserError(f"{where} children x turns = {requests:,} requests per simulated design (at most "
                                f"{STUDY_REQUESTS:,}); lower children or turns")
    if study == "fork-vs-subagent":
        for v in lists.get("ttft", [f.ttft]):
            if v > PACE:
                raise UserError(f"{where} ttft: at most {PACE:g} s (each child's next request comes {PACE:g} s later "
                                "and reads this one's write)")
        for v in lists.get("stagger", [f.stagger]):
            if v > 60:
                raise UserError(f"{where} stagger: at most 60 s between sibling launches")
    return f, lists


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
    from ..sources import open_many

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
@click.argument("study", type=click.Choice(STUDY_NAMES))
@click.option("--model", default="claude-sonnet-4-5", show_default=True, help="Model whose prices apply.")
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
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def breakeven(study, model, sheet, price_date, params, gaps, gaps_from, out, fmt):
    """Crossing points of a design choice, with the curve behind them (CSV + PNG + SVG).

    \b
    Studies and their parameters (-p KEY=VALUE):
      fork-vs-subagent  children turns parent_static sub_static task directive call growth
                        stagger ttft ttl   (any of them as a list to compare: -p children=3,4,6)
      ttl               prefix                  (plus --gaps / --gaps-from)
      stagger           children shared task ttft ttl
      invalidation      tools system growth turns ttl
      minimum           prefix requests ttl
    Each is computed in closed form and checked against a simulation through the provider rules.

    \b
    Examples:
      prefixsim breakeven fork-vs-subagent -p children=5 -p turns=3
      prefixsim breakeven fork-vs-subagent -p children=3,4,6 -p parent_static=30000
      prefixsim breakeven ttl --gaps 120,900 --gaps-from ~/.claude/projects/my-project/
    """
    from ..analysis.common import prices_for
    from ..analysis.studies import shown
    from ..fsutil import check_outputs, write_files
    from ..providers.tables import anthropic_min_tokens
    from ..report.charts import line_figure, render_both
    from ..report.tables import csv_text, grid, json_text

    base = Path(out) / study
    written = [base.with_suffix(".csv"), base.with_suffix(".png"), base.with_suffix(".svg")]
    check_outputs([*([sheet] if sheet else []), *gaps_from], files=written)
    f, lists = _parse_params(study, params)
    try:
        anthropic_min_tokens(model)
    except UserError as e:
        raise UserError(f"{e.message}; the studies model Anthropic's rules, so name a Claude model and "
                        "override its prices with --prices if yours differ") from None
    sheet_doc, when = _load_sheet(sheet), parse_price_date(price_date)
    p, _ = prices_for(model, sheet_doc, when, sheet_source=f"price sheet {sheet}")
    if (gaps or gaps_from) and study != "ttl":
        raise UserError(f"--gaps and --gaps-from belong to the ttl study, not {study}")
    s, check = run_study(study, p, f, lists, sheet_doc, when, steady=_steady_gaps(gaps),
                         observed=_observed_gaps(gaps_from))
    cols = list(dict.fromkeys(k for row in s.curve for k in row))
    png, svg = render_both(line_figure(s.chart))
    write_files(dict(zip(written, (csv_text(s.curve, cols), png, svg))))
    if fmt == "json":
        click.echo(json_text({"study": study, "model": model, "prices": p.source, "params": s.params,
                              "reading": s.reading, "crossings": s.table, "tables": s.tables, "check": check,
                              "curve": s.curve}), nl=False)
    else:
        click.echo(f"{s.title} — {model}")
        click.echo(f"prices: {p.source}")
        for title, rows in s.tables:
            if len(s.tables) > 1:
                click.echo(f"\n{title}")
            click.echo(grid(shown(rows), list(dict.fromkeys(k for row in rows for k in row))))
        click.echo("")
        click.echo(s.reading)
        click.echo(check_line(check))
    click.echo(f"wrote {written[0]}, {written[1]}, {written[2]}", err=True)
    if not check["ok"]:
        click.echo(check_line(check), err=True)
        raise SystemExit(1)


def check_line(check: dict) -> str:
    verdict = "agree" if check["ok"] else "DISAGREE — CHECK FAILED, do not use these figures"
    return (f"closed form vs {check['against']}: {check['points']} points, largest difference "
            f"${check['max_abs_diff_usd']:.9f} (tolerance ${check['tolerance_usd']:.6f}): {verdict}")


def run_study(study: str, p, f, lists: dict, sheet_doc=None, when=None, steady=None, observed=None):
    """(Study, check) for one study's parameters, as `breakeven` and `report` show it."""
    from ..analysis import studies
    from ..analysis.fork_vs_subagent import DEFAULT_CHILDREN
    from ..analysis.verify import verify

    if study == "fork-vs-subagent":
        lists = lists if "children" in lists else {"children": list(DEFAULT_CHILDREN), **lists}
        s = studies.fork_vs_subagent(p, f, lists)
        check = verify(study, p, f, sheet_doc, when, studies.fork_designs(f, lists))
    else:
        kwargs = {"gaps": observed, "steady": steady} if study == "ttl" else {}
        s = studies.STUDIES[study](p, f, **kwargs)
        check = verify(study, p, f, sheet_doc, when)
    return s, check


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
