"""The stack-distance pass (`engines.stack.lru_curve`) with live stamps counted over many chunks:
small chunks put every rank across chunk boundaries, and stamps not handed out yet in the current
chunk must not count."""
import random

import pytest

from prefixsim.engines import stack
from prefixsim.engines.trace import curve_totals, replay_pool

from test_engines_lru import BS, capacities, chained, make_trace, scattered


@pytest.mark.parametrize("chunk", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", [chained, scattered])
def test_curve_over_small_chunks_equals_the_pool(monkeypatch, chunk, seed, kind):
    monkeypatch.setattr(stack, "_CHUNK", chunk)
    trace = make_trace(kind(random.Random(seed), 60))
    caps = capacities(trace) + [b * BS for b in range(1, 12)]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


def test_ranks_hand_counted_across_chunks(monkeypatch):
    # Chunks of 2 stamps. r0 frees 1 then 0 (stamps 0, 1), r1 frees 2 (stamp 2), r2 reads 0 (rank 2:
    # 0 and 2 freed since), r3 reads 1 (rank 3: 1, 2 and 0) then 5 (new).
    monkeypatch.setattr(stack, "_CHUNK", 1)
    trace = make_trace([([0, 1], 8), ([2], 4), ([0], 4), ([1, 5], 8)])
    curve = stack.lru_curve(trace.requests, BS)
    assert sorted(curve.lead) == [2, 3]
    assert [curve.at(c)[0] for c in (1, 2, 3)] == [0, 1, 2]
