"""The replay `prefixsim replay` prints its money from, in one pass: the traffic as recorded, a what-if
and the oracle that measures what each request lost to the cache (attribution.py), stepped request by
request (replay.run.Walk). Each pass over a transcript re-reads and re-calibrates its calls: three
separate replays did that three times, a third of a large projects folder's replay."""
from __future__ import annotations

from decimal import Decimal

from prefixsim._perf.gc import few_collections
from prefixsim.advise.attribution import Attributing, usage_only
from prefixsim.advise.rewrite import Rewritten, timeless
from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError
from prefixsim.replay.compare import Comparison, compare
from prefixsim.replay.paired import designs_of
from prefixsim.replay.run import Facts, ReplayResult, Walk
from prefixsim.replay.unpriced import lenient
from prefixsim.replay.whatif import WhatIf
from prefixsim.sources.traffic import Traffic


def replay_with_losses(traffic: Traffic, variant: WhatIf | None = None,
                       top: int = 5) -> tuple[ReplayResult, Comparison | None, list[Decimal]]:
    """`replay_traffic` in this process, and each request's money lost to the cache (what
    advise.attribution.losses gives), in one pass over the traffic: the recorded design, the what-if
    and the oracle are stepped request by request, so a transcript is read and calibrated once, not
    once per replay (a third of a large folder's replay). The results are those of the separate
    replays; an error is the one they would raise first (the recorded design's, the what-if's, then
    the oracle's)."""
    results, lost = _walk_all(traffic, designs_of(variant), top)
    return _answer(results, lost)


def _answer(results: list[ReplayResult], lost: list[Decimal]):
    first = results[0]
    if usage_only(first.rows):
        lost = []
    return first, compare(first, results[1]) if len(results) > 1 else None, lost


def _walk_all(traffic: Traffic, designs: list[WhatIf], top: int,
              prices: PriceBook | None = None) -> tuple[list[ReplayResult], list[Decimal]]:
    """Each design's result and each request's loss, in one pass (`prices`: the book of the whole
    traffic, when `traffic` is a shard of it). What the heads say and the price book are made once for
    every walk (each walk wraps the book in its own Lenient: replay/unpriced.py)."""
    facts = Facts.of(traffic)
    book = prices if prices is not None else PriceBook(when=facts.date, start=facts.start)
    base, *what_ifs = (Walk(traffic, v, book, facts=facts) for v in designs)
    # the oracle's rows are read once, by the attribution: none is kept
    oracle = Walk(Rewritten(traffic, timeless), WhatIf(), book, ranges=False, keep=False, facts=facts)
    acc = Attributing(traffic, lenient(book))
    at0 = timeless()
    # a what-if that fails stops, the others go on; the oracle runs only while every design does
    # (the separate replays ran it last); the errors are raised in that order at the end
    what_if_failed: list[UserError | None] = [None] * len(what_ifs)
    oracle_failed: UserError | None = None
    with few_collections():
        for i, rec in enumerate(traffic):
            row = base.step(i, rec)   # the recorded design's error stops everything, as it did first
            for k, w in enumerate(what_ifs):
                if what_if_failed[k] is None:
                    try:
                        w.step(i, rec)
                    except UserError as e:
                        what_if_failed[k] = e
            if oracle_failed is None and not any(what_if_failed):
                try:
                    acc.add(rec, row, oracle.step(i, at0(rec)))
                except UserError as e:
                    oracle_failed = e
    for e in (*what_if_failed, oracle_failed):
        if e is not None:
            raise e
    return [w.result(top) for w in (base, *what_ifs)], list(acc.result().lost)


def replay_sharded_with_losses(traffic: Traffic, variant: WhatIf | None, top: int, workers: int, executor: str,
                               scheduler: str | None, planned) -> tuple[ReplayResult, Comparison | None,
                                                                              list[Decimal]]:
    """`replay_with_losses` with the shards of `planned` each walked once by a worker: the designs, the
    oracle and the losses of its requests (a loss is its stream's alone, and a stream one shard's);
    this process reads the traffic once, for the plan. The output is the serial one."""
    from prefixsim.replay import shard   # lazy: a serial replay loads no pool nor cluster client
    from prefixsim.replay.shard import merge, raise_earliest, whole  # lazy: as above

    designs = designs_of(variant)
    clock, output_in_cost = whole(traffic)
    mapper = shard._mapper(workers, executor, scheduler, _shard_with_losses)
    done = list(mapper([(group, designs, top, clock, output_in_cost) for group in planned.shards]))
    raise_earliest(done)
    results = [merge([d[0][j] for d in done], v, top) for j, v in enumerate(designs)]
    lost = [x for _, x in sorted(pair for d in done for pair in d[1])]
    return _answer(results, lost)


def _shard_with_losses(indexed: list, designs: list[WhatIf], top: int, clock: tuple, output_in_cost: bool):
    """In a worker: one shard's results per design and its requests' losses, each by its index in the
    whole walk; a UserError as data (shard.shard_error)."""
    from prefixsim.replay.shard import indexed_as_whole, shard_error, shard_records  # lazy: only a worker

    prices = PriceBook(when=clock[0], start=clock[1])   # the whole traffic's clock
    try:
        results, lost = _walk_all(Traffic.of(shard_records(indexed, output_in_cost)), designs, top, prices)
    except UserError as e:
        return shard_error(indexed, e)
    return [indexed_as_whole(r, indexed) for r in results], [(indexed[i][0], x) for i, x in enumerate(lost)]
