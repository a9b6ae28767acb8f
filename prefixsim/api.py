"""The library entry points notebooks use; the CLI is a thin layer over these.

    >>> from prefixsim.api import run_scenario
    >>> res = run_scenario("scenarios/seed-fork-economics.yaml")
    >>> res.summary          # one row per variant (pandas DataFrame)
    >>> res.requests         # one row per request
"""
from __future__ import annotations

import datetime as dt
from typing import Callable, Iterable

from prefixsim.errors import UserError
from prefixsim.scenario.loader import load_runs, scenario_files
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
    from prefixsim.scenario.parallel import run_files

    out = []
    for res in run_files(scenario_files(list(paths)), price_date, workers, executor, scheduler, start):
        if isinstance(res, UserError):
            raise res
        out.append(res)
    return out


__all__ = ["collect", "run_file", "run_paths", "run_scenario", "simulate"]
