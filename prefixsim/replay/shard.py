"""Replay at scale: traffic split into shards that share no cache, replayed by local processes
(joblib) or a dask.distributed cluster, merged into exactly the serial result.

Caches never cross namespaces: a prefix's digest chain starts from H(provider, model, workspace,
cache salt) (store.namespace_digest), so requests of two namespaces never read each other's entries.
What else a replay keeps is per stream (the stream's previous request, its fork children, the naive
baseline's last request). So the traffic splits into the connected parts of one graph: a request
links its stream, the stream it forks from and its namespace (under the recorded design and under a
what-if's, since both replays use the same shards); each connected part is replayed whole, in one
shard. This process reads the traffic and builds the requests once (a transcript's calibration
runs over all its calls in order); the shards get their requests, in walk order, with what a
replay derives from the whole traffic (the price clock, whether output is priced; which streams
wrote 1h is per stream), and each row gets back its index in the whole walk, so the merged rows are
the serial rows.

Traffic with one namespace and streams that all meet in it is one part: it cannot be sharded and is
replayed in one process.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator, Sequence

from prefixsim._perf.cluster import dask_client
from prefixsim._perf.cores import processes
from prefixsim.core.invariants import replay_adds_up
from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError
from prefixsim.providers.tables import canonical_model
from prefixsim.replay.run import STEPPED_UNSEEN, Facts, ReplayResult, _summarize, named_accounts, replay
from prefixsim.replay.whatif import WhatIf
from prefixsim.sources.record import Record
from prefixsim.sources.traffic import Traffic

#: Requests below which a replay is not sharded locally: a worker's start-up (imports, its requests
#: unpickled) costs ~1-2 s, what ~5,000 requests take to replay.
MIN_SHARDED = 5_000


@dataclass(frozen=True)
class Plan:
    """Which shard replays each request, and the requests of each shard as (index in the
    time-ordered walk, record)."""

    shard: tuple[int, ...]
    shards: list[list[tuple[int, Record]]]
    parts: int   # connected parts found (shards hold one or more)

    def over(self, traffic: Traffic) -> Plan:
        """The same split of another walk of the same requests, e.g. rewritten (advise/rewrite.py,
        in their order): each request to the shard it had, as the records that walk gives."""
        groups: list[list[tuple[int, Record]]] = [[] for _ in self.shards]
        for i, (k, rec) in enumerate(zip(self.shard, traffic, strict=True)):
            groups[k].append((i, rec))
        return Plan(self.shard, groups, self.parts)


def plan(traffic: Traffic, shards: int, variants: Sequence[WhatIf] = (WhatIf(),)) -> Plan:
    """Walks the traffic once and splits its connected parts (see the module doc) into at most
    `shards` shards of about equal request counts: the largest parts first, each to the shard with
    the fewest requests. The records are kept for the shards (built once, by this walk)."""
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

    records: list[Record] = []
    for rec in traffic:
        call, req = rec.call, rec.call.request
        node = ("stream", call.stream)
        records.append(rec)
        if call.parent:
            union(node, ("stream", call.parent))
        for v in variants:
            provider = rec.provider if v.provider == "observed" else v.provider
            union(node, ("ns", provider, canonical_model(v.model or req.model), req.workspace, req.cache_salt))
    roots = [find(("stream", r.call.stream)) for r in records]
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
    shard = tuple(where[r] for r in roots)
    groups: list[list[tuple[int, Record]]] = [[] for _ in load]
    for i, (k, rec) in enumerate(zip(shard, records)):
        groups[k].append((i, rec))
    return Plan(shard, groups, len(sizes))


def _replay_shard(indexed: list[tuple[int, Record]], variant: WhatIf, top: int, clock: tuple,
                  output_in_cost: bool) -> ReplayResult | ShardFailure:
    """One shard's rows, in a worker, with what the serial replay derives from the whole traffic:
    the price clock (`clock`: the first request's date and instant), whether output is priced, and
    each request's index in the whole walk. A UserError comes back as data (pickling an exception
    keeps only its message; the CLI needs its file and line)."""
    try:
        res = replay(Traffic.of(shard_records(indexed, output_in_cost)), variant,
                     PriceBook(when=clock[0], start=clock[1]), top)
    except UserError as e:
        return shard_error(indexed, e)
    return indexed_as_whole(res, indexed)


def indexed_as_whole(res: ReplayResult, indexed: list[tuple[int, Record]]) -> ReplayResult:
    """A shard's result with each row's index in the whole walk."""
    return ReplayResult(tuple(replace(row, index=indexed[row.index][0]) for row in res.rows), res.summary)


def merge(results: Sequence[ReplayResult], variant: WhatIf, top: int) -> ReplayResult:
    """The serial result from the shards' results: rows in walk order, summary over all of them."""
    rows = sorted((r for res in results for r in res.rows), key=lambda r: r.index)
    sources = {s for res in results for s in res.summary.price_sources}
    output_in_cost = all(res.summary.output_in_cost for res in results)
    why = {(m, p): w for res in results for m, p, _, w in res.summary.unpriced}
    summary = _summarize(rows, variant, sources, output_in_cost, top, why)
    # what the rows do not show: calls stepped into the cache with no row of their own
    summary = replace(summary, **{k: sum(getattr(res.summary, k) for res in results)
                                  for k in STEPPED_UNSEEN},
                      accounts=named_accounts({a for res in results for a in res.summary.accounts}))
    replay_adds_up(rows, summary.cost_predicted_usd, summary.streams, summary.causes)
    return ReplayResult(tuple(rows), summary)


def _mapper(workers: int, executor: str, scheduler: str | None,
            fn: Callable | None = None) -> Callable[[list], Iterator]:
    """A function running `fn` (a module-level function a worker imports; `_replay_shard` by default)
    over jobs (argument tuples), giving the results in the jobs' order."""
    run = fn or _replay_shard
    Client = dask_client(executor, scheduler)
    if Client is not None:
        def on_dask(jobs: list) -> Iterator:
            with Client(scheduler) as client:
                yield from client.gather([client.submit(run, *job, pure=False) for job in jobs])
        return on_dask

    def on_joblib(jobs: list) -> Iterator:
        from joblib import Parallel, delayed  # lazy: start-up: joblib loads only for a parallel run

        return Parallel(n_jobs=min(workers, len(jobs)))(delayed(run)(*job) for job in jobs)
    return on_joblib


def whole(traffic: Traffic) -> tuple[tuple, bool]:
    """What a replay derives from the whole traffic, which every shard must be given: the price clock
    (the first request's date and instant) and whether output is priced (every count final)."""
    f = Facts.of(traffic)
    return (f.date, f.start), f.output_in_cost


def shard_records(indexed: list[tuple[int, Record]], output_in_cost: bool) -> list[Record]:
    """A shard's records as its worker replays them (no output priced if some other shard's is not final)."""
    records = [r for _, r in indexed]
    return records if output_in_cost else [replace(r, output_final=False) for r in records]


@dataclass(frozen=True)
class ShardFailure:
    """A worker's UserError as data (pickling an exception keeps only its message; the CLI needs its
    file and line), with the index in the whole walk of the request it names."""

    at: int
    message: str
    path: str | None
    line: int | None
    col: int | None


def shard_error(indexed: list[tuple[int, Record]], e: UserError) -> ShardFailure:
    at = next((i for i, r in indexed if (r.path, r.line) == (e.path, e.line)), -1)
    return ShardFailure(at, e.message, e.path, e.line, e.col)


def raise_earliest(done: list) -> None:
    """The error of the earliest request any shard failed at, where the serial replay stops."""
    failures = [res for res in done if isinstance(res, ShardFailure)]
    if failures:
        f = min(failures, key=lambda x: x.at)
        raise UserError(f.message, f.path, f.line, f.col)


def shard_count(workers: int, executor: str, requests: int) -> int:
    """Shards worth making: none locally for small traffic or one worker (0 or -1: one per core that
    is free, `_perf.cores.processes`); on a cluster, `workers` shards (0 or -1: 64, split among the cluster's workers)."""
    n = processes(workers)   # refuses a count below -1 whatever the executor
    if executor == "dask":
        return 64 if workers in (0, -1) else workers
    return 1 if requests < MIN_SHARDED else n


def sharding(traffic: Traffic, variants: Sequence[WhatIf], workers: int = 1, executor: str = "local") -> Plan | None:
    """The plan a sharded replay would follow, or None when it would replay in this process: small
    traffic or one worker (`shard_count`), one namespace named by every request's head (no walk
    needed to know it is one part), or one part found by the walk."""
    n = shard_count(workers, executor, len(traffic))
    if n < 2 or _one_namespace(traffic):
        return None
    p = plan(traffic, n, variants)
    return p if len(p.shards) > 1 else None


def _one_namespace(traffic: Traffic) -> bool:
    """Whether every request's head names the same namespace (then so does every what-if of them:
    a variant maps one namespace to one)."""
    names = {h.ns for part in traffic.parts for h in part.heads}
    return len(names) == 1 and None not in names


def replay_sharded(traffic: Traffic, variants: Sequence[WhatIf], top: int = 5, workers: int = 1,
                   executor: str = "local", scheduler: str | None = None, planned: Plan | None = None) -> list[ReplayResult]:
    """One ReplayResult per variant, identical to `replay(traffic, v, top=top)` for each, the shards
    replayed by `workers` local processes or on the dask cluster at `scheduler`. This process reads
    the traffic and builds its requests once; each shard gets its requests (pickled: a request's
    blocks are shared with its stream's other requests, so a shard costs its distinct blocks).
    `planned`: a plan already made (`sharding`) for these variants or a superset of them."""
    mapper = _mapper(workers, executor, scheduler)
    p = planned if planned is not None else sharding(traffic, variants, workers, executor)
    if p is None:   # one namespace, or not worth a worker: this process replays it
        return [replay(traffic, v, top=top) for v in variants]
    clock, output_in_cost = whole(traffic)
    jobs = [(group, v, top, clock, output_in_cost) for v in variants for group in p.shards]
    done = list(mapper(jobs))
    raise_earliest(done)
    k = len(p.shards)
    return [merge(done[j * k:(j + 1) * k], v, top) for j, v in enumerate(variants)]
