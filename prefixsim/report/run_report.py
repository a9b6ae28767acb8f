"""`prefixsim run`'s report folder per scenario (reports/<scenario>/), checked before anything runs and
swapped in whole once the scenario has run; and what `run` prints for its machine formats."""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from prefixsim.io.fsutil import check_outputs, check_replaceable, replace_folder, slug
from prefixsim.report.build import sweep_chart
from prefixsim.report.charts import line_figure, render_both
from prefixsim.report.folders import RUN_FILES, RUN_KIND, check_distinct, scenario_inputs
from prefixsim.report.answer import answers, asks_dearest
from prefixsim.report.tables import _sweep, comparison_rows, csv_text, json_text, scenario_text
from prefixsim.scenario.results import (
    LATENCY_COLUMNS,
    REQUEST_COLUMNS,
    STORAGE_COLUMNS,
    SUMMARY_COLUMNS,
    ScenarioResult,
)


def write_run_report(res: ScenarioResult, out_dir: str | Path) -> Path:
    """reports/<scenario>/: requests.csv, summary.csv, summary.md, results.json (and chart.png/.svg for a
    charted sweep), swapped in as one set: files of an earlier run that this one does not write go."""
    d = Path(out_dir) / slug(res.name)
    rows = [{"variant": v.variant, **r} for v in res.variants for r in v.rows()]
    summary = res.comparison_rows()
    kept = list(STORAGE_COLUMNS) if any("storage_usd" in r for r in summary) else []   # Gemini explicit caches
    timed = any(v.latency is not None for v in res.variants)   # seconds to first token (scenario/critical.py)
    files: dict[str, str | bytes] = {
        "requests.csv": csv_text(rows, ["variant", *REQUEST_COLUMNS, *kept, *(["ttft_s"] if timed else [])]),
        "summary.csv": csv_text(summary, ["variant", *summary_columns([res])]),
        "summary.md": scenario_text(res, markdown=True) + "\n",
        "results.json": json_text(res.to_json())}
    chart = sweep_chart(res)   # a scenario with `sweep:` + `chart:` gets its curve drawn
    if chart is not None:
        files["chart.png"], files["chart.svg"] = render_both(line_figure(chart))
    replace_folder(d, files, RUN_KIND, RUN_FILES.__contains__)
    return d


def check_run_folders(files: Sequence[str], out_dir: str | Path) -> None:
    """Before anything runs: no two scenarios share a report folder, and no report folder is or holds
    a file the run reads (`run scenarios/ --out scenarios/` writes beside the scenarios, never over them)."""
    inputs, named = scenario_inputs(list(files))
    check_distinct(named)
    check_outputs(inputs, folders=[Path(out_dir) / n.folder for n in named])
    for n in named:
        check_replaceable(Path(out_dir) / n.folder, RUN_KIND, RUN_FILES.__contains__)


def summary_columns(results: Sequence[ScenarioResult]) -> list[str]:
    """summary.csv's columns after `variant` (and `run --format csv`'s): storage where an explicit
    cache keeps one (Gemini), seconds to first token where a variant has a latency model."""
    stored = any("storage_usd" in row for r in results for row in r.comparison_rows())
    timed = any(v.latency is not None for r in results for v in r.variants)
    return [*SUMMARY_COLUMNS, *(STORAGE_COLUMNS if stored else ()), "vs_cheapest", *(LATENCY_COLUMNS if timed else ())]


def _answered(res: ScenarioResult, when: dt.date | None) -> dict:
    """A scenario's JSON document with the answer the text prints: the design search's for a scenario
    with `optimize:` (report/best_design.py, as `run` and the report answer it), else the comparison's."""
    from prefixsim.report.best_design import best_design  # lazy: only a scenario with optimize: searches

    best = best_design(res.path, res, when)
    lines = best.answer_lines() if best is not None else answers(
        comparison_rows(res), [v.self_hosted for v in res.variants], _sweep(res), asks_dearest(res.question))
    doc = {**res.to_json(), "question": res.question, "answer": lines}
    if best is not None:
        doc["design_search"] = best.to_json()
    return doc


def runs_output(results: Sequence[ScenarioResult], fmt: str, requests: bool = False,
                when: dt.date | None = None) -> str:
    """What `prefixsim run` prints for the machine formats: `json` (every scenario's document, with
    its question and the answer `table` prints under it; for a scenario with `optimize:` the design
    search's answer, searched at `when`'s prices) or `csv`: the comparison `table` prints, one row per
    variant of every scenario (summary.csv's columns), or with `requests` (-v) every request of every
    variant."""
    if fmt == "json":
        return json_text({"scenarios": [_answered(r, when) for r in results]})
    if fmt == "csv" and requests:
        rows = [{"scenario": r.name, "variant": v.variant, **row} for r in results for v in r.variants
                for row in v.rows()]
        return csv_text(rows, ["scenario", "variant", *REQUEST_COLUMNS])
    if fmt == "csv":
        comp = [{"scenario": r.name, **row} for r in results for row in r.comparison_rows()]
        return csv_text(comp, ["scenario", "variant", *summary_columns(results)])
    raise ValueError(f"runs_output: {fmt!r} is not json or csv (scenario_text prints the tables)")
