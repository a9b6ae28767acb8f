"""Scale-out of scenario runs: every run (a variant at a sweep value) is an independent simulation, so
runs go to local processes (joblib) or to a dask.distributed cluster and come back in serial order.

Results are identical to a serial run: each run seeds its own text generator and builds its own
simulator, and results are put back in the order the serial loop would produce them.
"""
from __future__ import annotations

import datetime as dt
from typing import Callable, Iterable, Iterator

from .errors import UserError
from .results import ScenarioResult, VariantResult

EXECUTORS = ("local", "dask")


def _simulate(run, price_date: dt.date | None):
    """One run in a worker. A UserError comes back as data: pickling an exception keeps only its
    message, and the CLI needs its file and line."""
    from .api import simulate

    try:
        return simulate(run, price_date)
    except UserError as e:
        return (type(e), e.message, e.path, e.line, e.col)


def _mapper(workers: int, executor: str, scheduler: str | None) -> Callable[[list, dt.date | None], Iterator]:
    """A function running `_simulate` over runs, yielding results in the runs' order."""
    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (valid: {', '.join(EXECUTORS)})")
    if executor == "dask":
        if not scheduler:
            raise UserError("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
        try:
            from distributed import Client
        except ImportError:
            raise UserError("--executor dask needs dask.distributed: pip install 'prefixsim[dask]'") from None

        def on_dask(runs: list, price_date: dt.date | None) -> Iterator:
            with Client(scheduler) as client:
                futures = client.map(_simulate, runs, price_date=price_date, pure=False)
                yield from client.gather(futures)
        return on_dask
    if scheduler:
        raise UserError("--scheduler applies to --executor dask only")
    if workers == 1:
        return lambda runs, price_date: (_simulate(r, price_date) for r in runs)

    def on_joblib(runs: list, price_date: dt.date | None) -> Iterator:
        from joblib import Parallel, delayed

        return Parallel(n_jobs=workers, return_as="generator")(delayed(_simulate)(r, price_date) for r in runs)
    return on_joblib


def run_files(files: Iterable[str], price_date: dt.date | None = None, workers: int = 1, executor: str = "local",
              scheduler: str | None = None) -> Iterator[ScenarioResult | UserError]:
    """Each scenario file's result (or the first UserError of its load or runs), in file order.

    `workers`: local processes (1: this one; 0 or -1: one per core). With `executor="dask"` runs go to
    the dask.distributed scheduler at `scheduler`, sharded by run (one scenario variant's sessions).
    """
    from .api import collect
    from .scenario.loader import load_runs

    if workers < -1:
        raise UserError(f"--workers must be a count of processes, 0 or -1 for every core; got {workers}")
    mapper = _mapper(-1 if workers == 0 else workers, executor, scheduler)
    files = list(files)
    loaded: list[list | UserError] = []
    for f in files:
        try:
            loaded.append(load_runs(f))
        except UserError as e:
            loaded.append(e.located(f))
    runs = [r for x in loaded if not isinstance(x, UserError) for r in x]
    results = mapper(runs, price_date)
    for f, x in zip(files, loaded):
        if isinstance(x, UserError):
            yield x
            continue
        variants: list[VariantResult] = []
        error: UserError | None = None
        for _ in x:
            res = next(results)
            if error is None and isinstance(res, tuple):
                cls, message, path, line, col = res
                error = cls(message, path, line, col).located(f)
            elif error is None:
                variants.append(res)
        if error is not None:
            yield error
            continue
        yield collect(f, x, variants)
