"""One traffic replayed under the design it was sent with and, when one is asked for, under a what-if
variant: serially in this process, or in shards that share no cache (shard.py), with the garbage
collector held back meanwhile (_perf/gc.py). What `prefixsim replay` prints is made from these two
(and, for its money, from the losses against the oracle: `replay_with_losses` walks all three in one
pass over the traffic)."""
from __future__ import annotations

from decimal import Decimal

from prefixsim._perf.gc import few_collections
from prefixsim.errors import UserError
from prefixsim.replay.compare import Comparison, compare
from prefixsim.replay.run import ReplayResult, Walk, replay
from prefixsim.replay.whatif import WhatIf
from prefixsim.sources.traffic import Traffic


def _designs(variant: WhatIf | None) -> list[WhatIf]:
    return [WhatIf(), *([variant] if variant is not None and variant != WhatIf() else [])]


def replay_traffic(traffic: Traffic, variant: WhatIf | None = None, top: int = 5, workers: int = 1,
                   executor: str = "local", scheduler: str | None = None) -> tuple[ReplayResult, Comparison | None]:
    """(each request under the rules of the provider it was sent to, its comparison with `variant`,
    None when the variant is the recorded design). `workers` other than 1, or a dask `executor`,
    replay in shards; the result is the serial one."""
    designs = _designs(variant)
    with few_collections():
        if workers == 1 and executor == "local" and not scheduler:
            results = [replay(traffic, v, top=top) for v in designs]
        else:
            # lazy: sharding loads joblib / dask and the scenario runner's pool; a serial replay needs neither
            from prefixsim.replay.shard import replay_sharded

            results = replay_sharded(traffic, designs, top, workers, executor, scheduler)
    return results[0], compare(results[0], results[1]) if len(results) > 1 else None


def replay_with_losses(traffic: Traffic, variant: WhatIf | None = None,
                       top: int = 5) -> tuple[ReplayResult, Comparison | None, list[Decimal]]:
    """`replay_traffic` in this process, and each request's money lost to the cache (what
    advise.attribution.losses gives), in one pass over the traffic: the recorded design, the what-if
    and the oracle are stepped request by request, so a transcript is read and calibrated once, not
    once per replay (a third of a large folder's replay). The results are those of the separate
    replays; an error is the one they would raise first (the recorded design's, the what-if's, then
    the oracle's)."""
    # lazy: the oracle and attribution belong to advise/; a replay printed as JSON needs neither
    from prefixsim.advise.attribution import Attributing
    from prefixsim.advise.rewrite import Rewritten, timeless

    designs = _designs(variant)
    walks = [Walk(traffic, v) for v in designs]
    oracle = Walk(Rewritten(traffic, timeless), WhatIf(), ranges=False)
    acc = Attributing(traffic)
    at0 = timeless()
    failed: list[UserError | None] = [None] * len(walks)   # the what-if's and the oracle's, raised at the end
    base, rest = walks[0], list(enumerate(walks[1:], 1))
    with few_collections():
        for i, rec in enumerate(traffic):
            row = base.step(i, rec)   # the recorded design's error stops everything, as it did first
            for k, w in rest:
                if failed[k - 1] is None:
                    try:
                        w.step(i, rec)
                    except UserError as e:
                        failed[k - 1] = e
            if not any(failed):   # the oracle replayed only after the designs
                try:
                    acc.add(rec, row, oracle.step(i, at0(rec)))
                except UserError as e:
                    failed[-1] = e
    if any(failed):
        raise next(e for e in failed if e is not None)
    results = [w.result(top) for w in walks]
    first = results[0]
    lost = [] if not first.rows or all(r.audit for r in first.rows) else list(acc.result().lost)
    return first, compare(first, results[1]) if len(results) > 1 else None, lost
