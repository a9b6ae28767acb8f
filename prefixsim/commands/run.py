"""`prefixsim run`, `validate` and `schema`: scenario files in, tables and report files out."""
from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path

import click

from prefixsim.errors import UserError


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only after a second."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.shown = False

    def __call__(self, done: int, label: str = "") -> None:
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        width = 30
        fill = int(width * done / max(self.total, 1))
        sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} {label[:40]:<40}")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def parse_price_date(value: str | None) -> dt.date | None:
    """--price-date YYYY-MM-DD (None: today's genai-prices rates)."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UserError(f"--price-date {value!r} is not YYYY-MM-DD") from None


def parse_start_option(value: str | None) -> dt.datetime | None:
    """--start DATETIME (None: the scenario's own, else the default clock start)."""
    if value is None:
        return None
    from prefixsim.scenario.checks import parse_start

    try:
        return parse_start(value)
    except ValueError:
        raise UserError(f"--start {value!r} is not a date and time (ISO 8601, e.g. 2026-11-24T16:30:00Z)") from None


def write_reports(res, out_dir: Path) -> Path:
    """reports/<scenario>/: requests.csv, summary.csv, summary.md, results.json (and chart.png/.svg for a
    charted sweep), swapped in as one set: files of an earlier run that this one does not write go."""
    from prefixsim.io.fsutil import replace_folder, slug
    from prefixsim.report.build import sweep_chart  # a scenario with `sweep:` + `chart:` gets its curve drawn
    from prefixsim.report.folders import RUN_FILES, RUN_KIND
    from prefixsim.report.tables import csv_text, json_text, scenario_text
    from prefixsim.scenario.results import REQUEST_COLUMNS, STORAGE_COLUMNS, SUMMARY_COLUMNS

    d = out_dir / slug(res.name)
    rows = [{"variant": v.variant, **r} for v in res.variants for r in v.rows()]
    summary = res.comparison_rows()
    kept = list(STORAGE_COLUMNS) if any("storage_usd" in r for r in summary) else []   # Gemini explicit caches
    files: dict[str, str | bytes] = {
        "requests.csv": csv_text(rows, ["variant", *REQUEST_COLUMNS, *kept]),
        "summary.csv": csv_text(summary, ["variant", *SUMMARY_COLUMNS, *kept, "vs_cheapest"]),
        "summary.md": scenario_text(res, markdown=True) + "\n",
        "results.json": json_text(res.to_json())}
    chart = sweep_chart(res)
    if chart is not None:
        from prefixsim.report.charts import line_figure, render_both

        files["chart.png"], files["chart.svg"] = render_both(line_figure(chart))
    replace_folder(d, files, RUN_KIND, RUN_FILES.__contains__)
    return d


def check_report_folders(files: list[str], out_dir: Path) -> None:
    """Before anything runs: no two scenarios share a report folder, and no report folder is or holds
    a file the run reads (`run scenarios/ --out scenarios/` writes beside the scenarios, never over them)."""
    from prefixsim.io.fsutil import check_outputs, check_replaceable
    from prefixsim.report.folders import RUN_FILES, RUN_KIND, check_distinct, scenario_inputs

    inputs, named = scenario_inputs(files)
    check_distinct(named)
    check_outputs(inputs, folders=[out_dir / n.folder for n in named])
    for n in named:
        check_replaceable(out_dir / n.folder, RUN_KIND, RUN_FILES.__contains__)


def output_width(width: int | None) -> int:
    """--width, else the terminal's width on a terminal, else DEFAULT_WIDTH (pipes and files get the
    same bytes whoever runs the command)."""
    import shutil

    from prefixsim.report.tables import DEFAULT_WIDTH

    if width is not None:
        if width < 40:
            raise UserError(f"--width {width} is too narrow (at least 40 columns)")
        return width
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, 40)
    return DEFAULT_WIDTH


def example_paths(paths: tuple[str, ...], examples: bool) -> list[str]:
    """The paths given, plus the example scenarios shipped inside the package with --examples."""
    out = list(paths)
    if examples:
        from prefixsim.examples import examples_dir

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
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]), default="table",
              show_default=True, help="What to print on stdout.")
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
    from prefixsim.report.tables import csv_text, json_text, scenario_text
    from prefixsim.scenario.loader import scenario_files
    from prefixsim.scenario.parallel import run_files
    from prefixsim.scenario.results import REQUEST_COLUMNS

    when = parse_price_date(price_date)
    at = parse_start_option(start)
    cols = output_width(width)
    files = scenario_files(example_paths(paths, examples))
    if not no_write:
        check_report_folders(files, Path(out))
    progress = Progress(len(files))
    results, failures = [], []
    for i, (f, res) in enumerate(zip(files, run_files(files, when, workers, executor, scheduler, at))):
        if isinstance(res, UserError):
            failures.append(res.located(f))
            click.echo(str(res.located(f)), err=True)
            continue
        results.append(res)
        if not no_write:
            write_reports(res, Path(out))
        progress(i + 1, res.name)
    progress.close()
    _optimize_hint(results)
    if fmt == "json":
        click.echo(json_text({"scenarios": [r.to_json() for r in results]}), nl=False)
    elif fmt == "csv":
        rows = [{"scenario": r.name, "variant": v.variant, **row} for r in results for v in r.variants
                for row in v.rows()]
        click.echo(csv_text(rows, ["scenario", "variant", *REQUEST_COLUMNS]), nl=False)
    elif results:
        click.echo("\n\n".join(scenario_text(r, markdown=fmt == "markdown", requests=show_requests and not summary_only,
                                              width=cols, by_stream=by_stream) for r in results))
        if not no_write and fmt == "table":
            click.echo(f"\nreports written to {out.rstrip('/') or '/'}/", err=True)
    if failures:
        names = ", ".join(f.path or "?" for f in failures)
        raise UserError(f"{len(failures)} of {len(files)} scenario files failed: {names}")


def _optimize_hint(results) -> None:
    """A scenario declaring `optimize:` is run as written; say where its designs are searched."""
    from prefixsim.scenario.parallel import scenario_runs

    for r in results:
        if scenario_runs(r.path)[0].scenario.optimize is not None:
            click.echo(f"{r.name}: run as written; `prefixsim advise` searches its optimize: designs", err=True)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def validate(paths):
    """Check scenario files without running them.

    \b
    Example:
      prefixsim validate scenarios/
    """
    from prefixsim.io.fsutil import slug
    from prefixsim.report.folders import Named, check_distinct
    from prefixsim.scenario.loader import load_runs, scenario_files

    failures = 0
    named = []
    for f in scenario_files(list(paths)):
        try:
            runs = load_runs(f)
            if runs and runs[0].scenario.optimize is not None:   # its designs, checked as `advise` makes them
                from prefixsim.scenario.grid import design_runs
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
def schema():
    """Print the JSON Schema of scenario files (for editor completion).

    \b
    Example:
      prefixsim schema > scenario.schema.json
    """
    from prefixsim.scenario.schema import Scenario

    click.echo(json.dumps(Scenario.model_json_schema(), indent=2))
