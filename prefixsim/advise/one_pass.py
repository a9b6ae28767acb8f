"""The replay `prefixsim replay` prints its money from, in one pass: the traffic as recorded, a what-if
and the oracle that measures what each request lost to the cache (attribution.py), stepped request by
request (replay.run.Walk). Each pass over a transcript re-reads and re-calibrates its calls: three
separate replays did that three times, a third of a large projects folder's replay."""
from __future__ import annotations

from decimal import Decimal

from prefixsim._perf.gc import few_collections
from prefixsim.advise.attribution import Attributing
from prefixsim.advise.rewrite import Rewritten, timeless
from prefixsim.errors import UserError
from prefixsim.replay.compare import Comparison, compare
from prefixsim.replay.paired import designs_of
from prefixsim.replay.run import ReplayResult, Walk
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
    designs = designs_of(variant)
    walks = [Walk(traffic, v) for v in designs]
    # the oracle's rows are read once, by the attribution: none is kept
    oracle = Walk(Rewritten(traffic, timeless), WhatIf(), ranges=False, keep=False)
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
