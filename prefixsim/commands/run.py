"""`prefixsim run`, `validate` and `schema`: scenario files in, tables and report files out."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import json

import click

from prefixsim.commands.common import Progress, emphasis, format_option, output_width, parse_price_date, parse_start_option
from prefixsim.errors import UserError


def example_paths(paths: tuple[str, ...], examples: bool) -> list[str]:
    """The paths given, plus the example scenarios shipped inside the package with --examples."""
    out = list(paths)
    if examples:
        from prefixsim.examples import examples_dir  # lazy: only with --examples

        out.append(str(examples_dir()))
    if not out:
        raise click.UsageError("give scenario files or folders, or --examples for the shipped ones")
    return out


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--examples", is_flag=True, help="Also run the example scenarios shipped with prefixsim.")
@click.option("-v", "--requests", "show_requests", is_flag=True,
              help="Table/markdown: also print every request of every variant (with the cause of each miss).")
@click.option("--by-stream", is_flag=True,
              help="Table/markdown: also split each variant's cost by stream (main, fork1, sub1, ...).")
@click.option("--width", type=int, metavar="COLUMNS",
              help="Fit tables to this width (default: the terminal's, or 120 when not a terminal).")
@format_option
@click.option("--out", "out", type=click.Path(file_okay=False), default="reports", show_default=True,
              help="Folder for the report files (one subfolder per scenario).")
@click.option("--no-write", is_flag=True, help="Print only; write no report files.")
@click.option("--price-date", help="Use genai-prices rates in force on this date (YYYY-MM-DD; default today).")
@click.option("--start", "start", metavar="DATETIME",
              help="When t = 0 falls (ISO 8601, UTC unless an offset is given, e.g. 2026-11-24T16:30:00Z): each "
                   "request is priced at start + t, for time-of-day prices such as DeepSeek's off-peak hours. "
                   "Default: the scenario's `start:`, else 07:00 UTC on the price date (peak for DeepSeek).")
@click.option("--summary-only", is_flag=True, hidden=True, help="The default now; kept so older scripts run.")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Run variants and sweep values in this many local processes (0: one per core).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="dask: send runs to a dask.distributed cluster (pip install 'prefixsim[dask]').")
@click.option("--scheduler", metavar="ADDRESS", help="The dask scheduler, e.g. tcp://10.0.0.5:8786.")
def run(paths, examples, show_requests, by_stream, width, fmt, out, no_write, price_date, start, summary_only,
        workers, executor, scheduler):
    """Run scenario files (or every *.yaml in folders): per scenario, the comparison of its variants
    and a one-line answer (which design is cheapest, and by how much).

    \b
    Examples:
      prefixsim run scenarios/
      prefixsim run --examples                    # the scenarios shipped with prefixsim
      prefixsim run scenarios/ttl-expiry.yaml -v  # every request, with the cause of each miss
      prefixsim run scenarios/seed-fork-economics.yaml --format json --out /tmp/r
      prefixsim run scenarios/ --workers 0
      prefixsim run my-deepseek.yaml --start 2026-11-24T16:30:00Z   # off-peak
    """
    # lazy: the scenario runner and the report tables load only when `run` runs (`prefixsim --help` loads neither)
    from prefixsim.report.run_report import check_run_folders, runs_output
    from prefixsim.report.tables import scenario_text
    from prefixsim.scenario.loader import scenario_files

    when, at, cols = parse_price_date(price_date), parse_start_option(start), output_width(width)
    files = scenario_files(example_paths(paths, examples))
    if not no_write:
        check_run_folders(files, out)
    results, failures = _run_files(files, when, workers, executor, scheduler, at, None if no_write else out)
    if fmt in ("json", "csv"):
        click.echo(runs_output(results, fmt, show_requests and not summary_only, when), nl=False)
    elif results:
        searched = _search_answers(results, when)
        click.echo("\n\n".join(scenario_text(r, markdown=fmt == "markdown", requests=show_requests and not summary_only,
                                              width=cols, by_stream=by_stream, bold=fmt == "table" and emphasis(),
                                              answer=searched.get(r.path)) for r in results))
        if not no_write and fmt == "table":
            click.echo(f"reports written to {out.rstrip('/') or '/'}/", err=True)
    if failures:
        names = ", ".join(f.path or "?" for f in failures)
        raise UserError(f"{len(failures)} of {len(files)} scenario files failed: {names}")


def _run_files(files, when, workers, executor, scheduler, at, out: str | None):
    """(results, failures) of running each file, each failure named on stderr as it comes and each
    result's report folder written under `out` (unless None), with the progress bar meanwhile."""
    from prefixsim.report.run_report import write_run_report  # lazy, as in `run`
    from prefixsim.scenario.parallel import run_files

    progress = Progress(len(files))
    results, failures = [], []
    for i, (f, res) in enumerate(zip(files, run_files(files, when, workers, executor, scheduler, at))):
        if isinstance(res, UserError):
            failures.append(res.located(f))
            click.echo(str(res.located(f)), err=True)
            continue
        results.append(res)
        if out is not None:
            write_run_report(res, out)
        progress(i + 1, res.name)
    progress.close()
    return results, failures


def _search_answers(results, when) -> dict[str, list[str]]:
    """The answer of each scenario declaring `optimize:`, by path: its question is which design, so
    the design search answers it (report/best_design.py, as the report leads), not the one design
    the tables show as written ("default: $0.9239" answered nothing)."""
    from prefixsim.report.best_design import best_design  # lazy: only a scenario with optimize: searches
    from prefixsim.scenario.parallel import scenario_runs  # lazy, as in `run`

    out = {}
    for r in results:
        if scenario_runs(r.path)[0].scenario.optimize is not None:
            b = best_design(r.path, r, when)
            if b is not None:
                out[r.path] = b.answer_lines()   # "best of N designs: ...": the search answers, said so
    return out


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--price-date", help="Check prices as `run --price-date` would (YYYY-MM-DD; default today).")
@click.option("--start", "start", metavar="DATETIME", help="Check the clock as `run --start` would.")
def validate(paths, price_date, start):
    """Check scenario files as `run` does, writing nothing: every check `run` makes, each mistake at its
    line (the timeline is played and simulated; only the tables and reports are left out).

    \b
    Example:
      prefixsim validate scenarios/
    """
    # lazy: the scenario model loads only when `validate` runs (`prefixsim --help` loads none of it)
    from prefixsim.io.fsutil import slug
    from prefixsim.report.folders import Named, check_distinct
    from prefixsim.scenario.loader import scenario_files
    from prefixsim.scenario.parallel import run_files, scenario_runs

    when, at = parse_price_date(price_date), parse_start_option(start)
    failures = 0
    named = []
    files = scenario_files(list(paths))
    for f, res in zip(files, run_files(files, when, start=at)):   # what `run` runs, in the same code
        try:
            if isinstance(res, UserError):
                raise res
            runs = scenario_runs(f)
            if runs and runs[0].scenario.optimize is not None:   # its designs, checked as `advise` makes them
                from prefixsim.scenario.grid import design_runs  # lazy: only for a scenario with optimize:
                design_runs(f)
            click.echo(f"{f}: ok ({len(runs)} run{'s' if len(runs) != 1 else ''})")
            if runs:
                named.append(Named(f, runs[0].scenario.name, slug(runs[0].scenario.name)))
        except UserError as e:
            failures += 1
            click.echo(str(e.located(f)), err=True)
    try:   # as `run` would: two scenarios may not share a report folder
        check_distinct(named)
    except UserError as e:
        failures += 1
        click.echo(str(e), err=True)
    if failures:
        raise UserError(f"{failures} scenario file(s) have errors")


@click.command()
@click.option("--keys", is_flag=True, help="A readable view instead: each key, its type, default, one line, example.")
@click.argument("section", required=False)
def schema(keys, section):
    """Print the JSON Schema of scenario files (for editor completion).

    With --keys, the same keys as a page to read; SECTION narrows it to one part (scenario, steps,
    fork, subagent, base, engine, sweep, ...).

    \b
    Examples:
      prefixsim schema > scenario.schema.json
      prefixsim schema --keys fork
    """
    from prefixsim.scenario.schema import Scenario  # lazy: the scenario model loads only for `schema`

    if section is not None and not keys:
        raise click.UsageError("a SECTION is shown by --keys (prefixsim schema --keys fork)")
    doc = Scenario.model_json_schema()
    if keys:
        from prefixsim.report.layout import wrap_block
        from prefixsim.scenario.keysview import render

        cols = output_width(None)   # the terminal's width (120 for a pipe)
        click.echo(render(doc, section, lambda text, first, rest: wrap_block(text, cols, rest, first=first)), nl=False)
        return
    click.echo(json.dumps(doc, indent=2))
