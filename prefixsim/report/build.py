"""Assembles the design-review report: each scenario's comparison and chart, then the break-even
studies for the scenarios' model, each with its plain-language reading."""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Callable, Sequence

from prefixsim.advise import advise
from prefixsim.analysis.applies import not_applying, study_provider
from prefixsim.analysis.common import prices_for
from prefixsim.analysis.studies import check_line, run_study, shown as money_shown
from prefixsim.analysis.verify import CheckFailed
from prefixsim.errors import UserError
from prefixsim.io.fsutil import Folder, check_outputs, check_replaceable, slug, write_files
from prefixsim.providers.tables import ANTHROPIC_MIN_TOKENS, anthropic_min_tokens, canonical_model
from prefixsim.report.advice import report_section
from prefixsim.report.answer import answers, asks_dearest
from prefixsim.report.best_design import BestDesign, best_design, summary_answer
from prefixsim.report.study_plan import study_designs
from prefixsim.report.study_sizes import scenario_sizes, serving_sizes
from prefixsim.report.charts import line_figure, render_both
from prefixsim.report.scenario_charts import cost_parts, gpu_parts, least_title, scenario_figures, sweep_chart  # noqa: F401 (the report's names)
from prefixsim.report.folders import check_distinct, scenario_inputs
from prefixsim.report.html import Figure, Section, markdown, page
from prefixsim.report.tables import _sweep, comparison_rows, shown_rows, summary_columns, with_latency
from prefixsim.scenario.loader import scenario_files, load_runs
from prefixsim.scenario.parallel import run_files
from prefixsim.scenario.results import ScenarioResult
from prefixsim.scenario.studynames import SERVING_STUDIES
from prefixsim.sources import open_many

#: The kind of folder the page's PNGs go to (x_files/); one written before folders carried their
#: marker holds only PNGs.
IMAGES = "report's image folder"
#: The design search's table on the page (the search's own columns, report/pareto.py).
BEST_COLUMNS = ("design", "cost_usd", "vs_cheapest", "ttft", "wait", "uncached_critical_path_tokens", "hit_rate",
                "pareto")
COMPARISON = ("variant", "requests", "cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens",
              "output_tokens", "hit_rate", "cost_usd", "cost_no_cache_usd", "savings_vs_no_cache", "vs_cheapest")


def scenario_summary(res: ScenarioResult, best: BestDesign | None = None) -> dict[str, str]:
    """The report's opening row for a scenario: its question (`question:`, else the description's
    first sentence) and the answer with its margin: the best design its `optimize:` search finds, else
    the comparison of its variants as `prefixsim run` prints it."""
    question = res.question or (res.description or "").strip().split(". ")[0].rstrip(".") or res.name
    if best is not None:
        return {"scenario": res.name, "question": question, "answer": summary_answer(best)}
    lines = answers(comparison_rows(res), [v.self_hosted for v in res.variants], _sweep(res), asks_dearest(res.question))
    return {"scenario": res.name, "question": question, "answer": lines[-1] if _sweep(res) else "; ".join(lines)}


def report_paths(output: str | os.PathLike) -> tuple[Path, Path, Path]:
    """Where `-o` puts the page, its Markdown twin and the twin's PNGs: a folder (an existing one, or a
    path ending in /) gets report.html, report.md and report_files/; x.html or x.md (or plain x) gives
    x.html, x.md and x_files/ — two formats never share one name."""
    raw = os.fspath(output)
    out = Path(raw)
    if raw.endswith(("/", os.sep)) or out.is_dir():
        html = out / "report.html"
    elif out.suffix.lower() in (".html", ".htm"):
        html = out
    elif out.suffix.lower() in (".md", ".markdown"):
        html = out.with_suffix(".html")
    elif not out.suffix:
        html = out.with_name(out.name + ".html")
    else:
        raise UserError(f"-o names the HTML page (.html), its Markdown twin (.md) or a folder (ending in /), "
                        f"not a {out.suffix} file", raw)
    return html, html.with_suffix(".md"), html.with_name(html.stem + "_files")


def build_report(paths: list[str], output: str | os.PathLike, model: str | None = None,
                 title: str = "Prompt-cache design review", when: dt.date | None = None,
                 params: tuple[str, ...] | list[str] = (),
                 progress: Callable[[int, int, str], None] | None = None,
                 traffic: Sequence[str] = ()) -> tuple[Path, Path]:
    """Run the scenarios in `paths` and write the page, its Markdown twin and PNGs (see report_paths);
    returns the page's and the twin's paths. Nothing is written if an output is one of the inputs.
    `traffic` (paths `prefixsim advise` reads) adds the section "What to change"."""
    tell = progress or (lambda done, total, label: None)
    tell(0, 0, "reading the scenarios")   # said at once: the checks below read every scenario file
    files = scenario_files(list(paths))
    inputs, named = scenario_inputs(files)
    inputs = [*inputs, *traffic]
    check_outputs(inputs, files=[output], nodes=False)   # `report s.yaml -o s.yaml`: refused, whatever the suffix
    html_path, md_path, img_dir = report_paths(output)
    check_outputs(inputs, files=[html_path, md_path], folders=[img_dir])
    check_replaceable(img_dir, IMAGES, _png)
    check_distinct(named)   # one folder name per scenario: figure files and page anchors are named by it
    asked = when   # the scenarios keep their own `price_date:` unless --price-date names one, as in `run`
    when = when or dt.datetime.now(dt.UTC).date()
    designs = study_designs(files, params)   # -p checked before any scenario runs
    # and --model: which studies apply to it, and their prices, before the scenarios run
    skipped = _study_model(model, {d[0] for d in designs}, when) if model is not None else {}

    searched = [f for f in files if any(r.scenario.optimize is not None for r in load_runs(f)[:1])]
    # each step is named as it starts: run each scenario, search each optimize: one, chart each, each
    # study, the page; so a terminal shows what the report is doing through all of its 15-60 s
    steps = 2 * len(files) + len(searched) + len(designs) + 1
    results = []
    tell(0, steps, f"running {Path(files[0]).name}" if files else "")
    for i, res in enumerate(run_files(files, asked, 1, "local", None, None)):
        if isinstance(res, UserError):
            raise res
        results.append(res)
        tell(i + 1, steps, f"running {Path(files[i + 1]).name}" if i + 1 < len(files) else "charts")
    done = len(files)
    sections: list[Section] = []
    assumptions: list[tuple[str, str]] = []
    # a scenario with `optimize:` leads with the best design its search finds (report/best_design.py)
    bests = []
    for f, res in zip(files, results):
        if f in searched:
            tell(done, steps, f"design search: {Path(f).name}")
            done += 1
        bests.append(best_design(f, res, asked) if f in searched else None)
    # the studies no scenario names run at the design scenario's sizes: the first with `optimize:`,
    # else the report's only scenario (report/study_sizes.py)
    sizer = next((i for i, b in enumerate(bests) if b is not None), 0 if len(results) == 1 else None)
    runs = [load_runs(f)[0] for f in files]
    sized = None if sizer is None else (results[sizer].name, scenario_sizes(results[sizer], runs[sizer]))
    # a scenario naming api-vs-selfhosted: its own sizes where its `studies:` leaves a parameter out
    named = [(res, run) for res, run in zip(results, runs) if any(n in SERVING_STUDIES for n in run.scenario.studies or {})]
    serving_runs = {res.name: run for res, run in named}
    serving = {res.name: serving_sizes(res, run) for res, run in named}
    if sized is not None or serving:
        designs = study_designs(files, params, sized, serving)
    for res, best in zip(results, bests):
        tell(done, steps, f"charts: {res.name}")
        done += 1
        for v in res.variants:
            for k, val in v.assumptions.items():
                if k.startswith(("prices", "time-of-day prices", "clock start")) and (k, val) not in assumptions:
                    assumptions.append((k, val))

        summary = comparison_rows(res)
        reading = " ".join(a[:1].upper() + a[1:] + "." for a in answers(
            summary, [v.self_hosted for v in res.variants], _sweep(res), asks_dearest(res.question)))
        shown = shown_rows(summary, _sweep(res) is not None)   # with TTFT and wait beside the cost, as `run`'s
        tables = [("comparison of variants", shown, with_latency(summary_columns(res, summary, True), shown)),
                  ("assumptions", scenario_assumptions(res), ("what", "value", "for"))]
        figures = scenario_figures(res)
        if best is not None:
            lead = best.sentence()
            reading = f"{lead[:1].upper()}{lead[1:]}. As written: {reading}"
            tables.insert(0, (f"design search: the cheapest and the Pareto front of {len(best.grid.designs)} designs",
                              best.rows(), BEST_COLUMNS))
            figures.insert(0, best.figure())
        sections.append(Section(f"Scenario: {res.name}", res.description or "", reading, tables, figures,
                                anchor=f"scenario-{slug(res.name)}"))
    if traffic:
        sections.append(report_section(advise(open_many(list(traffic))), traffic))
    model = model or _first_model(results) or "claude-sonnet-4-5"
    designs = [d for d in designs if d[0] not in skipped]
    if skipped:   # a study that does not apply to --model says why, in one line, where it would be
        sections.append(Section(f"Break-even studies for {model}", "", f"Not run for {model}, each for its reason: "
                                + "; ".join(skipped.values()) + ".", anchor="breakeven-not-applying"))
    p = prices_for(model, when=when, provider=study_provider(designs[0][0], model))[0] if designs else None
    if p is not None:
        assumptions.append(("break-even studies priced with", p.source))
    failed = []
    for name, label, f, lists, caption in designs:
        tell(done, steps, f"break-even: {name}")
        done += 1
        s, check = run_study(name, p, f, lists, when=when,
                             latency=_scenario_latency(serving_runs.get(label), p.model) if name in SERVING_STUDIES else None)
        if not check["ok"]:
            failed.append(f"{name} ({label})")
        anchor = f"breakeven-{name}" + (f"-{slug(label)}" if label else "")
        sections.append(Section(f"Break-even: {s.title}" + (f" — {label}" if label else ""), "",
                                f"{s.reading} {check_line(check)}",
                                [(t, money_shown(rows), list(dict.fromkeys(k for row in rows for k in row)))
                                 for t, rows in s.tables],
                                [Figure(s.chart.title, render_both(line_figure(s.chart))[0], anchor, caption)],
                                anchor=anchor))
    # The page, its twin and the twin's PNGs as one set (an earlier report's PNGs that this one does
    # not draw go): a kill never leaves a page beside another run's images.
    tell(done, steps, "writing the page")
    summary_rows = [scenario_summary(res, best) for res, best in zip(results, bests)]
    write_files({html_path: page(title, sections, assumptions, when, summary_rows),
                 md_path: markdown(title, sections, assumptions, when, img_dir.name, summary_rows),
                 img_dir: Folder({f"{f.name}.png": f.png for s in sections for f in s.figures}, IMAGES, _png)})
    if failed:
        raise CheckFailed(f"wrote {html_path}, but the closed form disagrees with the scenario runner for "
                          f"{', '.join(failed)}: CHECK FAILED, do not use those figures")
    return html_path, md_path


def scenario_assumptions(res: ScenarioResult) -> list[dict]:
    """Each rule and setting once, one row per distinct value: a value every variant shares is one
    row; where variants differ, each value names the designs it applies to (sweep values folded, and
    the longest group said as "the others")."""
    values: dict[str, dict[str, list[str]]] = {}
    for v in res.variants:
        for k, val in v.assumptions.items():
            names = values.setdefault(k, {}).setdefault(val, [])
            if v.base_variant not in names:
                names.append(v.base_variant)
    rows = []
    for k, by_value in values.items():
        if len(by_value) == 1:
            rows.append({"what": k, "value": next(iter(by_value)), "for": "all"})
            continue
        most = max(by_value.values(), key=len)
        for val, vs in by_value.items():
            who = "the others" if vs is most and len(vs) > 2 else ", ".join(vs)
            rows.append({"what": k, "value": val, "for": who})
    return rows


def _study_model(model: str, studies, when: dt.date) -> dict[str, str]:
    """--model: the studies that do not apply to it, each with why (analysis/applies.py), and the
    price of the model for the rest; a model no provider's family names is refused."""
    try:
        skipped = not_applying(sorted(studies), model)
        runs = sorted(set(studies) - set(skipped))
        if runs:   # the rest run on Anthropic's tables and the model's price, on the platform its id names
            provider = study_provider(runs[0], model)
            anthropic_min_tokens(model, provider)
            prices_for(model, when=when, provider=provider)
    except UserError as e:
        raise UserError(f"--model: {e.message}") from None
    return skipped


def _first_model(results: list[ScenarioResult]) -> str | None:
    """The first Claude model the scenarios use: the break-even studies model Anthropic's rules
    (breakpoints, 5m/1h writes), so a DeepSeek or OpenAI scenario does not pick their prices."""
    for res in results:
        for v in res.variants:
            for o in v.outcomes:
                if canonical_model(o.call.request.model) in ANTHROPIC_MIN_TOKENS:
                    return o.call.request.model
    return None


def _png(name: str) -> bool:
    return name.endswith(".png")


def _scenario_latency(run, model: str):
    """The latency model a scenario naming a serving study (`run`, its Run) sets for `model` (its
    `latency:` section), or None where it sets none (the study takes the model's default) or its fitted
    file has no such model."""
    from prefixsim.scenario.latency_book import latency_book   # lazy: only a serving study asks

    if run is None or run.settings.latency is None:
        return None
    book = latency_book(run.settings.latency, run.path)
    try:
        return None if book is None else book.for_model(model)
    except UserError:
        return None
    return None
