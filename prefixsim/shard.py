"""Replay at scale: traffic split into shards that share no cache, replayed by local processes
(joblib) or a dask.distributed cluster, merged into exactly the serial result.

Caches never cross namespaces: a prefix's digest chain starts from H(provider, model, workspace,
cache salt) (store.namespace_digest), so requests of two namespaces never read each other's entries.
What else a replay keeps is per stream (the stream's previous request, its fork children, the naive
baseline's last request). So the traffic splits into the connected parts of one graph: a request
links its stream, the stream it forks from and its namespace (under the recorded design and under a
what-if's, since both replays use the same shards); each connected part is replayed whole, in one
shard. Everything a replay derives from the whole traffic (the clock, the price date, which streams
wrote 1h, whether output is priced) is derived by every shard from the whole traffic, and each row
keeps its index in the time-ordered walk, so the merged rows are the serial rows.

Traffic with one namespace and streams that all meet in it is one part: it cannot be sharded and is
replayed in one process.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from .errors import UserError
from .providers.tables import canonical_model
from .replay import ReplayResult, Variant, _summarize, replay
from .invariants import replay_adds_up
from .sources.traffic import Traffic

EXECUTORS = ("local", "dask")
#: Requests below which a replay is not sharded locally: a worker's start-up (imports, reading the
#: paths again) costs ~1-2 s, what ~5,000 requests take to replay.
MIN_SHARDED = 5_000


@dataclass(frozen=True)
class Plan:
    """Which shard replays each request (by index in the time-ordered walk)."""

    shard: tuple[int, ...]
    shards: int
    parts: int   # connected parts found (shards hold one or more)


def plan(traffic: Traffic, shards: int, variants: Sequence[Variant] = (Variant(),)) -> Plan:
    """Splits the traffic's connected parts (see the module doc) into at most `shards` shards of about
    equal request counts: the largest parts first, each to the shard with the fewest requests."""
    parent: dict[object, object] = {}

    def find(x: object) -> object:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:   # path compression
            parent[x], x = root, parent[x]
        return root

    def union(a: object, b: object) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    streams: list[str] = []
    for rec in traffic:
        call, req = rec.call, rec.call.request
        node = ("stream", call.stream)
        streams.append(call.stream)
        if call.parent:
            union(node, ("stream", call.parent))
        for v in variants:
            provider = rec.provider if v.provider == "observed" else v.provider
            union(node, ("ns", provider, canonical_model(v.model or req.model), req.workspace, req.cache_salt))
    roots = [find(("stream", s)) for s in streams]
    sizes: dict[object, int] = {}
    first: dict[object, int] = {}
    for i, r in enumerate(roots):
        sizes[r] = sizes.get(r, 0) + 1
        first.setdefault(r, i)
    load = [0] * max(1, min(shards, len(sizes)))
    where: dict[object, int] = {}
    for r in sorted(sizes, key=lambda r: (-sizes[r], first[r])):
        k = min(range(len(load)), key=lambda j: (load[j], j))
        where[r] = k
        load[k] += sizes[r]
    return Plan(tuple(where[r] for r in roots), len(load), len(sizes))


def _replay_shard(paths: Sequence[str], source: str | None, variant: Variant, top: int, shard: Sequence[int],
                  mine: int) -> ReplayResult | tuple:
    """One shard's rows, in a worker: the paths are read again there (a cluster's workers must see
    them at the same paths), and the whole traffic is walked so that indices and clock are global.
    A UserError comes back as data (pickling an exception keeps only its message; the CLI needs its
    file and line). Skipped lines were reported by the process that read the paths first."""
    from . import sources
    from .sources.problems import collecting

    try:
        with collecting(False):
            traffic = sources.open_many(paths, source, errors=[])
        return replay(traffic, variant, top=top, keep=lambda i: shard[i] == mine)
    except UserError as e:
        return (e.message, e.path, e.line, e.col)


def merge(results: Sequence[ReplayResult], variant: Variant, top: int) -> ReplayResult:
    """The serial result from the shards' results: rows in walk order, summary over all of them."""
    rows = sorted((r for res in results for r in res.rows), key=lambda r: r.index)
    sources = {s for res in results for s in res.summary.price_source.split("; ") if s}
    output_in_cost = all(res.summary.output_in_cost for res in results)
    summary = _summarize(rows, variant, sources, output_in_cost, top)
    replay_adds_up(rows, summary.cost_predicted_usd, summary.streams, summary.causes)
    return ReplayResult(tuple(rows), summary)


def _mapper(workers: int, executor: str, scheduler: str | None) -> Callable[[list], Iterator[ReplayResult]]:
    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (valid: {', '.join(EXECUTORS)})")
    if executor == "dask":
        if not scheduler:
            raise UserError("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
        try:
            from distributed import Client
        except ImportError:
            raise UserError("--executor dask needs dask.distributed: pip install 'prefixsim[dask]'") from None

        def on_dask(jobs: list) -> Iterator[ReplayResult]:
            with Client(scheduler) as client:
                yield from client.gather([client.submit(_replay_shard, *job, pure=False) for job in jobs])
        return on_dask
    if scheduler:
        raise UserError("--scheduler applies to --executor dask only")

    def on_joblib(jobs: list) -> Iterator[ReplayResult]:
        from joblib import Parallel, delayed

        return Parallel(n_jobs=min(workers, len(jobs)))(delayed(_replay_shard)(*job) for job in jobs)
    return on_joblib


def shard_count(workers: int, executor: str, requests: int) -> int:
    """Shards worth making: none locally for small traffic or one worker (0 or -1: one per core);
    on a cluster, `workers` shards (0 or -1: 64, split among the cluster's workers)."""
    import os

    if workers < -1:
        raise UserError(f"--workers must be a count of processes, 0 or -1 for every core; got {workers}")
    if executor == "dask":
        return 64 if workers in (0, -1) else workers
    if requests < MIN_SHARDED:
        return 1
    cores = os.cpu_count() or 1
    return max(1, min(cores if workers in (0, -1) else workers, cores))


def replay_sharded(traffic: Traffic, paths: Sequence[str], source: str | None, variants: Sequence[Variant],
                   top: int = 5, workers: int = 1, executor: str = "local",
                   scheduler: str | None = None) -> list[ReplayResult]:
    """One ReplayResult per variant, identical to `replay(traffic, v, top=top)` for each, the shards
    replayed by `workers` local processes or on the dask cluster at `scheduler`. `traffic` is
    `sources.open_many(paths, source)` (what every shard reads again)."""
    mapper = _mapper(workers, executor, scheduler)
    n = shard_count(workers, executor, len(traffic))
    p = plan(traffic, n, variants) if n > 1 else None
    if p is None or p.shards < 2:   # one namespace, or not worth a worker: this process replays it
        return [replay(traffic, v, top=top) for v in variants]
    jobs = [(list(paths), source, v, top, p.shard, k) for v in variants for k in range(p.shards)]
    done = list(mapper(jobs))
    for res in done:
        if isinstance(res, tuple):   # the first failing shard's error, as the serial replay raises it
            raise UserError(*res)
    return [merge(done[j * p.shards:(j + 1) * p.shards], v, top) for j, v in enumerate(variants)]
