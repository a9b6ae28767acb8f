"""One traffic replayed under the design it was sent with and, when one is asked for, under a what-if
variant: serially in this process, or in shards that share no cache (shard.py), with the garbage
collector held back meanwhile (_perf/gc.py). What `prefixsim replay` prints is made from these two
(and, for its money, from the losses against the oracle: advise.one_pass walks all three in one
pass over the traffic)."""
from __future__ import annotations

from prefixsim._perf.gc import few_collections
from prefixsim.replay.compare import Comparison, compare
from prefixsim.replay.run import ReplayResult, replay
from prefixsim.replay.whatif import WhatIf
from prefixsim.sources.traffic import Traffic


def designs_of(variant: WhatIf | None) -> list[WhatIf]:
    """The designs a replay with `variant` walks: the recorded one, then the variant if it differs."""
    return [WhatIf(), *([variant] if variant is not None and variant != WhatIf() else [])]


def replay_traffic(traffic: Traffic, variant: WhatIf | None = None, top: int = 5, workers: int = 1,
                   executor: str = "local", scheduler: str | None = None,
                   planned=None) -> tuple[ReplayResult, Comparison | None]:
    """(each request under the rules of the provider it was sent to, its comparison with `variant`,
    None when the variant is the recorded design). `workers` other than 1, or a dask `executor`,
    replay in shards (`planned`: shard.sharding's plan, when made already); the result is the serial one."""
    designs = designs_of(variant)
    with few_collections():
        if workers == 1 and executor == "local" and not scheduler:
            results = [replay(traffic, v, top=top) for v in designs]
        else:
            # lazy: sharding loads joblib or dask.distributed when it runs; a serial replay needs neither
            from prefixsim.replay.shard import replay_sharded

            results = replay_sharded(traffic, designs, top, workers, executor, scheduler, planned)
    return results[0], compare(results[0], results[1]) if len(results) > 1 else None
