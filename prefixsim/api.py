"""The library entry points notebooks use; the CLI is a thin layer over these.

    >>> from prefixsim.api import run_scenario
    >>> res = run_scenario("scenarios/seed-fork-economics.yaml")
    >>> res.summary          # one row per variant (pandas DataFrame)
    >>> res.requests         # one row per request

Everything a command prints comes from here too: `write_run_report` (a scenario's report folder, as
`run` writes it), `replay_traffic` with `replay_table` (given `replay_losses`) / `replay_csv` / `replay_json_chunks`
(what `replay` prints), `advice_text` (what `advise` prints) and `search_designs` with `designs_text` /
`write_design_reports` (what `search` prints and writes). Each is its package's own function.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

from prefixsim.advise.attribution import losses as replay_losses
from prefixsim.advise.grid import search as search_designs
from prefixsim.core.price_report import PriceSheet, price_sheet, sheet_json
from prefixsim.advise.output import render as advice_text
from prefixsim.errors import UserError
from prefixsim.replay.paired import replay_traffic
from prefixsim.replay.output import json_chunks as replay_json_chunks
from prefixsim.report.replay import csv_text as replay_csv
from prefixsim.report.replay import short_streams
from prefixsim.report.replay import table_text as replay_table
from prefixsim.providers.registry import PROVIDERS
from prefixsim.report.pareto import output as designs_text
from prefixsim.report.prices import render_prices
from prefixsim.report.pareto import write_all as write_design_reports
from prefixsim.report.run_report import runs_output, write_run_report
from prefixsim.scenario.loader import load_runs, scenario_files
from prefixsim.scenario.parallel import run_files
from prefixsim.scenario.results import ScenarioResult
from prefixsim.scenario.simulate import collect, simulate


def run_file(path: str, price_date: dt.date | None = None,
             progress: Callable[[int, int], None] | None = None, start: dt.datetime | None = None) -> ScenarioResult:
    """Load and run every variant (and sweep value) of one scenario file."""
    runs = load_runs(path)
    results = []
    for i, r in enumerate(runs):
        results.append(simulate(r, price_date, start))
        if progress:
            progress(i + 1, len(runs))
    return collect(path, runs, results)


def run_scenario(path: str, price_date: dt.date | None = None, start: dt.datetime | None = None) -> ScenarioResult:
    """Run one scenario file; `.summary` and `.requests` are pandas DataFrames."""
    return run_file(path, price_date, start=start)


def run_paths(paths: Iterable[str], price_date: dt.date | None = None, workers: int = 1, executor: str = "local",
              scheduler: str | None = None, start: dt.datetime | None = None) -> list[ScenarioResult]:
    """Every scenario file in `paths` (files or folders); the first failing file raises its error.

    Runs go to `workers` local processes (0: one per core), or with `executor="dask"` to the
    dask.distributed scheduler at `scheduler`; results are identical to a serial run."""
    out = []
    for res in run_files(scenario_files(list(paths)), price_date, workers, executor, scheduler, start):
        if isinstance(res, UserError):
            raise res
        out.append(res)
    return out


__all__ = ["advice_text", "collect", "designs_text", "replay_csv", "replay_json_chunks", "replay_losses", "replay_table",
           "replay_traffic", "run_file", "run_paths", "run_scenario", "runs_output", "search_designs", "short_streams",
           "simulate", "write_design_reports", "write_run_report"]


def model_prices(model: str, provider: str | None = None, endpoint: str | None = None,
                 when: dt.date | None = None) -> PriceSheet:
    """Every rate prefixsim would use for `model` on `provider` (default: from the model id) at 07:00
    UTC on `when` (default today), with the source of each (`prefixsim prices`)."""
    if provider is not None and provider not in PROVIDERS:
        raise UserError(f"unknown provider {provider!r} (valid: {', '.join(PROVIDERS)})")
    return price_sheet(model, provider, endpoint, when)


def prices_text(model: str, provider: str | None = None, endpoint: str | None = None,
                when: dt.date | None = None) -> str:
    return render_prices(model_prices(model, provider, endpoint, when))


def price_rows(model: str, provider: str | None = None, endpoint: str | None = None,
               when: dt.date | None = None) -> dict:
    """`prefixsim prices --format json`: the sheet as plain data."""
    return sheet_json(model_prices(model, provider, endpoint, when))
