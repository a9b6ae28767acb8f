"""Scale-out of scenario runs: every run (a variant at a sweep value) is an independent simulation, so
runs go to local processes (joblib) or to a dask.distributed cluster and come back in serial order.

Results are identical to a serial run: each run seeds its own text generator and builds its own
simulator, and results are put back in the order the serial loop would produce them.
"""
from __future__ import annotations

import datetime as dt
import os
import statistics
import time
from functools import lru_cache
from typing import Callable, Iterable, Iterator

from prefixsim._perf.cluster import dask_client
from prefixsim._perf.cores import processes
from prefixsim.errors import UserError
from prefixsim.scenario.grid import design_runs
from prefixsim.scenario.loader import load_runs
from prefixsim.scenario.results import ScenarioResult, VariantResult
from prefixsim.scenario.simulate import simulate, collect



def _runs(path: str, designs: bool = False) -> list:
    """A file's runs (or with `designs`, the runs of its `optimize:` grid), loaded once per process
    while the file is unchanged."""
    try:
        st = os.stat(path)
    except OSError:
        return _load(path, None, designs)   # load_runs reports the missing file
    return _load(path, (st.st_mtime_ns, st.st_size), designs)


@lru_cache(maxsize=256)   # `run` looks at every file (report folders) before running them: load each once
def _load(path: str, version: tuple[int, int] | None, designs: bool = False) -> list:
    return design_runs(path) if designs else load_runs(path)


def _simulate(path: str, index: int, price_date: dt.date | None, start: dt.datetime | None = None,
              designs: bool = False):
    """Run `index` of a scenario file, in a worker. Tasks name the file, not the Run: a Run holds
    schema classes built at load time, which pickle only by value and slowly; each worker loads a
    file once (so a cluster's workers must see the files at the same paths). A UserError comes back
    as data: pickling an exception keeps only its message, and the CLI needs its file and line."""
    try:
        return simulate(_runs(path, designs)[index], price_date, start)
    except UserError as e:
        return (type(e), e.message, e.path, e.line, e.col)


def _simulate_runs(path: str, first: int, stop: int, price_date: dt.date | None,
                   start: dt.datetime | None = None, designs: bool = False) -> list:
    """Runs first..stop-1 of a scenario file, in one worker (`_simulate` for each)."""
    return [_simulate(path, i, price_date, start, designs) for i in range(first, stop)]


#: Seconds a local pool costs before its first result: process start, imports, the tokenizer and the
#: scenario files loaded again in each worker (loky; 2-6 s on a loaded 2-core machine, bench/scaleout.py;
#: `run scenarios/ --workers 2` measured 3.8 s of it at load 2-3 on 2026-12-08).
POOL_COST = 4.0


def _mapper(workers: int, executor: str, scheduler: str | None) -> Callable[[list, tuple], Iterator]:
    """A function running `_simulate` over (path, index) tasks, yielding results in the tasks' order."""
    Client = dask_client(executor, scheduler)
    if Client is not None:
        def on_dask(tasks: list, clock: tuple) -> Iterator:
            with Client(scheduler) as client:
                futures = client.map(_simulate, *zip(*tasks), price_date=clock[0], start=clock[1],
                                     designs=clock[2], pure=False) if tasks else []
                yield from client.gather(futures)
        return on_dask
    if workers == 1:
        return lambda tasks, clock: (_simulate(p, i, *clock) for p, i in tasks)
    return lambda tasks, clock: _local(tasks, workers, clock)


#: Runs timed before the pool is considered: one run's time says little of the next (a scenario's
#: runs took 0.001-0.75 s in scenarios/).
MIN_TIMED = 3


def _local(tasks: list, workers: int, clock: tuple) -> Iterator:
    """`tasks`' results in order, serially until the pool pays: after each run, once MIN_TIMED runs
    are timed, the runs so far predict the rest, and the pool starts only when the rest, shared by
    `workers` processes, would end sooner even after paying POOL_COST. A file's first run pays its
    own loads (its texts generated and counted: 0.02-0.75 s in scenarios/, its later runs 0.001-0.05
    s), so first runs predict the files not yet started and later runs the later runs left (each
    class by its median; the very first run is left out: it pays this process's one-time loads,
    which the workers pay in POOL_COST). Each worker then takes whole files (or, when fewer files
    than workers are left, contiguous slices of their runs): a file is loaded once per worker."""
    files: list[list] = []   # [path, first index, stop]
    for p, i in tasks:
        if files and files[-1][0] == p and files[-1][2] == i:
            files[-1][2] += 1
        else:
            files.append([p, i, i + 1])
    firsts: list[float] = []   # seconds of each file's first run, the very first left out
    laters: list[float] = []   # ... and of its later runs
    for k, (path, first, stop) in enumerate(files):
        for i in range(first, stop):
            if len(firsts) + len(laters) >= MIN_TIMED:
                unstarted = files[k + 1:]
                later = (stop - i - (i == first)) + sum(b - a - 1 for _, a, b in unstarted)
                starts = len(unstarted) + (i == first)
                f, g = (statistics.median(x or y) for x, y in ((firsts, laters), (laters, firsts)))
                rest = f * starts + g * later
                if starts + later > 1 and rest > POOL_COST + rest / workers:
                    yield from _pool([[path, i, stop], *unstarted], workers, clock)
                    return
            began = time.perf_counter()
            out = _simulate(path, i, *clock)
            if k or i > first:
                (firsts if i == first else laters).append(time.perf_counter() - began)
            yield out


def _pool(files: list[list], workers: int, clock: tuple) -> Iterator:
    from joblib import Parallel, delayed  # lazy: start-up: joblib loads only for a parallel run

    parts = max(1, -(-workers // len(files)))   # slices per file, so that every worker has one
    chunks = []
    for path, first, stop in files:
        size = -(-(stop - first) // parts)
        chunks += [(path, a, min(a + size, stop)) for a in range(first, stop, size)]
    for out in Parallel(n_jobs=min(workers, len(chunks)), return_as="generator")(
            delayed(_simulate_runs)(p, a, b, *clock) for p, a, b in chunks):
        yield from out


def local_workers(asked: int, tasks: int) -> int:
    """Processes worth starting: never more than the tasks (_perf.cores.processes: nor the cores; 0 or
    -1 one per core no other process keeps busy)."""
    return processes(asked, tasks)


def run_files(files: Iterable[str], price_date: dt.date | None = None, workers: int = 1, executor: str = "local",
              scheduler: str | None = None, start: dt.datetime | None = None,
              designs: bool = False) -> Iterator[ScenarioResult | UserError]:
    """Each scenario file's result (or the first UserError of its load or runs), in file order.

    `workers`: local processes (1: this one; 0 or -1: one per core), at most one per task and per
    core (`local_workers`), started only when the work left pays for them (`_local`). With `executor="dask"` runs go to
    the dask.distributed scheduler at `scheduler`, sharded by run (one scenario variant's sessions).
    `designs`: each file's `optimize:` grid (scenario/optimize.py) instead of its variants.
    """
    processes(workers)   # a count below -1 is refused before any file is loaded
    files = list(files)
    loaded: list[list | UserError] = []
    for f in files:
        try:
            loaded.append(_runs(f, designs))
        except UserError as e:
            loaded.append(e.located(f))
    tasks = [(f, i) for f, x in zip(files, loaded) if not isinstance(x, UserError) for i in range(len(x))]
    results = _mapper(local_workers(workers, len(tasks)), executor, scheduler)(tasks, (price_date, start, designs))
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


def scenario_runs(path: str) -> list:
    """A scenario file's runs from the same per-process cache `run_files` loads from (a UserError if
    the file is bad), so a command can look at the scenarios before running them at no extra cost."""
    return _runs(path)


def scenario_designs(path: str) -> list:
    """A scenario file's `optimize:` designs, from the same cache (`scenario_runs` for its variants)."""
    return _runs(path, True)
