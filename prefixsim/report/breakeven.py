"""`prefixsim breakeven STUDY`: a study's options checked and read (price sheet, gaps), the study run
and checked against the scenario runner, its curve written as CSV, PNG and SVG (and, for
fork-vs-subagent, its designs as a scenario), and what the command prints (`Breakeven.text`,
`Breakeven.to_json`)."""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from prefixsim.analysis.applies import study_provider
from prefixsim.analysis.common import prices_for
from prefixsim.analysis.studies import check_line, design_labels, run_study, shown
from prefixsim.core.pricing import PRICE_KEYS, PriceBook, sheet_price
from prefixsim.errors import UserError
from prefixsim.io.fsutil import check_outputs, write_files
from prefixsim.io.jsonfile import load_json
from prefixsim.io.userfiles import MAX_YAML_BYTES
from prefixsim.io.yamlfile import load_yaml
from prefixsim.providers.gemini_explicit import default_study_model
from prefixsim.providers.tables import CLAUDE_PLATFORMS, anthropic_min_tokens
from prefixsim.report.charts import line_figure, render_both
from prefixsim.report.layout import dropped_note, fit_dropping, min_width, wrap_block
from prefixsim.report.tables import DEFAULT_WIDTH, HEADERS, csv_text, fmt, grid
from prefixsim.scenario.loader import input_boundary, locate
from prefixsim.scenario.studycheck import parse_pairs
from prefixsim.scenario.studyparams import BREAKEVEN_STUDIES, OTHER_PROVIDER, STUDY_NAMES  # noqa: F401
from prefixsim.scenario.studynames import SERVING_STUDIES


def load_sheet(path: str | None) -> dict | None:
    """A --prices sheet (YAML or JSON): every price checked here, each error at its file:line."""
    if path is None:
        return None


    with input_boundary(path):
        return _checked_sheet(path, _document(path, "price sheet", "one model's prices"))


def _document(path: str, what: str, needs: str) -> object:
    """A user's YAML or JSON file (by its suffix), read under the caps every input file has."""
    if Path(path).suffix == ".json":
        return load_json(path, what, cap=MAX_YAML_BYTES)
    return load_yaml(path, what, needs=needs)


def _checked_sheet(path: str, doc: object) -> dict:

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


def steady_gaps(spec: str | None) -> list[float] | None:
    """--gaps: the steady gaps (seconds) the ttl study answers for, replacing its built-in rows."""
    if not spec:
        return None
    try:
        gaps = [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--gaps {spec!r}: a comma-separated list of seconds") from None
    if not gaps or any(not math.isfinite(g) or g < 0 or g > 365 * 24 * 3600 for g in gaps):
        raise UserError(f"--gaps {spec!r}: seconds from 0 to a year, comma-separated")
    return list(dict.fromkeys(gaps))


def observed_gaps(from_paths: Sequence[str]) -> list[float] | None:
    """--gaps-from: the gaps between consecutive requests of each stream of real traffic."""
    if not from_paths:
        return None
    from prefixsim.sources import open_many  # lazy: the traffic readers load only for --gaps-from

    gaps: list[float] = []
    by_stream: dict[str, list[float]] = {}
    for rec in open_many(list(from_paths)):
        by_stream.setdefault(rec.call.stream, []).append(rec.call.t)
    for times in by_stream.values():
        times.sort()
        gaps += [b - a for a, b in pairwise(times)]
    if not gaps:
        raise UserError(f"--gaps-from {', '.join(from_paths)}: no stream with two requests, so no gap to study")
    return gaps


def _fitted(rows: list[dict], cols: list[str], width: int, asked: bool) -> str:
    """The table as `grid` aligns it, or fitted, its text cells wrapping at spaces: when it holds no
    number (a table of figures in words, read left-aligned), or is wider than a width `asked` for
    (--width, a terminal's)."""
    numeric = [all(isinstance(r.get(c), (int, float)) for r in rows) for c in cols]
    text = grid(rows, cols)
    if any(numeric) and (not asked or max(map(len, text.splitlines()), default=0) <= width):
        return text
    body = [[fmt(c, r.get(c)) for c in cols] for r in rows]
    # a header wraps at spaces only: `fork_at_0_history_usd` reads `fork at 0 history $` where it must wrap
    head = [HEADERS.get(c, c.replace("_usd", " $").replace("_", " ")) for c in cols]
    table, dropped = fit_dropping(head, body, numeric, width, [not n for n in numeric])
    note = dropped_note(dropped, width, min_width(head, body, [not n for n in numeric]))
    return table + ("\n" + note if note else "")


def load_gpus(path: str | None) -> dict | None:
    """--gpus FILE (YAML or JSON): GPU name -> figures (serving/gpus.py: ROW_KEYS), each checked, a bad
    value at its file:line; the catalogue with the file's rows on top."""
    if path is None:
        return None
    from prefixsim.serving.gpus import GpuRowError, catalogue   # lazy: the serving layer only for its study

    with input_boundary(path):
        doc = _document(path, "GPU rows", "one GPU's figures")
        if not isinstance(doc, dict):
            raise UserError("a GPU file maps a GPU name to its figures, e.g. h100-sxm: {usd_per_hour: 2.0}", path, 1)
        for name in doc:
            try:
                catalogue({name: doc[name]}, where="--gpus")
            except GpuRowError as e:
                raise e.located(path, *locate(doc, (name, e.key) if e.key else (name,))) from None
        return catalogue(doc, where="--gpus")


@dataclass
class Breakeven:
    """A study as `prefixsim breakeven` ran it: its figures, the check and the files written."""

    study: str
    model: str
    prices: Any       # analysis.common.Prices
    result: Any       # analysis.study.Study
    check: dict
    written: list[Path]

    def to_json(self) -> dict:
        s = self.result
        return {"study": self.study, "model": self.model, "prices": self.prices.source, "params": s.params,
                "reading": s.reading, "crossings": s.table, "tables": s.tables, "check": self.check,
                "curve": s.curve}

    def text(self, width: int | None = None, markdown: bool = False) -> str:
        """The terminal report (or in Markdown): the title, the prices, each table, the reading and
        the check, its text in `width` columns (None: DEFAULT_WIDTH; a table wider than a width given
        wraps its text cells, `_fitted`)."""

        s = self.result
        asked, width = width is not None, width or DEFAULT_WIDTH
        wrap = (lambda t, *_: t) if markdown else wrap_block
        lines = [f"{'## ' if markdown else ''}{s.title} — {self.model}",
                 *([""] if markdown else []), wrap(f"prices: {self.prices.source}", width, "  ")]
        for title, rows in s.tables:
            if len(s.tables) > 1 or markdown:
                lines.append(f"\n{'### ' if markdown else ''}{title}" + ("\n" if markdown else ""))
            cols = list(dict.fromkeys(k for row in rows for k in row))
            lines.append(grid(shown(rows), cols, markdown) if markdown else _fitted(shown(rows), cols, width, asked))
        lines += ["", wrap(s.reading, width), *([""] if markdown else []), wrap(check_line(self.check), width)]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """`--format csv`: the study's table(s) as the terminal shows them, one row each (a `table`
        column names which where a study has several); the curve behind them is <study>.csv."""
        tables = self.result.tables
        rows = [{**({"table": title} if len(tables) > 1 else {}), **row} for title, rows in tables for row in rows]
        return csv_text(rows, list(dict.fromkeys(k for row in rows for k in row)))

    @property
    def curve(self):
        """The curve behind the crossing points as a pandas DataFrame (the CSV the command writes)."""
        import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

        rows = self.result.curve
        return pd.DataFrame(rows, columns=list(dict.fromkeys(k for row in rows for k in row)))

    def __repr__(self) -> str:
        return f"<Breakeven {self.study!r} on {self.model}: {self.result.reading[:120]}>"

    def check_line(self) -> str:

        return check_line(self.check)


def run_breakeven(study: str, out: str | Path | None = "reports/breakeven", model: str | None = None,
                  sheet: str | None = None, price_date: dt.date | None = None, params: Sequence[str] = (),
                  gaps: str | None = None, gaps_from: Sequence[str] = (),
                  scenario_at: int | None = None, gpus: str | None = None) -> Breakeven:
    """Run `study` (-p `params` as KEY=VALUE) on `model`'s prices (a `sheet` file's, else genai-prices'
    at `price_date`), check it against the scenario runner and write <out>/<study>.csv, .png and .svg
    (and .scenario.yaml with `scenario_at`); `out` None writes nothing (the library's breakeven).
    `gpus`: a file of GPU rows for api-vs-selfhosted. Every option is checked before anything is written."""


    base = Path(out or ".") / study
    written = [base.with_suffix(".csv"), base.with_suffix(".png"), base.with_suffix(".svg")]
    if scenario_at is not None:
        if study != "fork-vs-subagent":
            raise UserError(f"--scenario-at belongs to the fork-vs-subagent study, not {study}")
        written.append(base.with_suffix(".scenario.yaml"))
    if out is None:
        written = []
    if gpus is not None and study not in SERVING_STUDIES:
        raise UserError(f"--gpus belongs to the {', '.join(SERVING_STUDIES)} study, not {study}")
    check_outputs([*([sheet] if sheet else []), *([gpus] if gpus else []), *gaps_from], files=written)
    if model is None and OTHER_PROVIDER.get(study) == "gemini":
        model = default_study_model(PriceBook(when=price_date, designs=True))
    model = model or "claude-sonnet-4-5"
    # the provider the model's id names, or one line saying why the study does not run for it
    provider = study_provider(study, model)
    if provider in CLAUDE_PLATFORMS:
        anthropic_min_tokens(model, provider)   # a misspelt Claude id: did-you-mean, before any parameter
    rows = load_gpus(gpus)
    extra = {"gpu": tuple(rows)} if rows else None   # a --gpus file's own GPUs are choices too
    f, lists = parse_pairs(study, tuple(params), model, choices=extra)   # every bound, before any work
    sheet_doc = load_sheet(sheet)
    p, _ = prices_for(model, sheet_doc, price_date, provider=provider, sheet_source=f"price sheet {sheet}")
    if (gaps or gaps_from) and study != "ttl":
        raise UserError(f"--gaps and --gaps-from belong to the ttl study, not {study}")
    s, check = run_study(study, p, f, lists, sheet_doc, price_date, steady=steady_gaps(gaps),
                         observed=observed_gaps(gaps_from), gpus=rows)
    if written:
        cols = list(dict.fromkeys(k for row in s.curve for k in row))
        png, svg = render_both(line_figure(s.chart))
        files: list[str | bytes] = [csv_text(s.curve, cols), png, svg]
        if scenario_at is not None:
            from prefixsim.analysis.check_designs import fork_scenario_text  # lazy: only with scenario_at

            files.append(fork_scenario_text(model, *design_labels(f, lists), scenario_at, sheet_doc))
        write_files(dict(zip(written, files)))
    return Breakeven(study, model, p, s, check, written)
