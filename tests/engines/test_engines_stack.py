"""The stack-distance pass (`engines.stack.lru_curve`) with live stamps counted over many chunks:
small chunks put every rank across chunk boundaries, and stamps not handed out yet in the current
chunk must not count."""
import random

import pytest
from test_engines_lru import BS, capacities, chained, make_trace, scattered

from prefixsim.engines import stack
from prefixsim.engines.trace import curve_totals, replay_pool


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


def test_a_run_of_stamps_across_two_requests_is_ranked_block_by_block():
    # r0 frees x (stamp 0), r1 frees y (1), r2 frees z (2); r3 = [z, y, x] finds z ranked 1, y 2 and
    # x 3: y and x have consecutive stamps although two requests freed them, so they are not one
    # run of the same request's blocks and are ranked one by one (`lead`), with the same totals.
    trace = make_trace([(["x"], 4), (["y"], 4), (["z"], 4), (["z", "y", "x"], 12)])
    curve = stack.lru_curve(trace.requests, BS)
    assert sorted(curve.lead) == [1, 2, 3] and curve.seg_start == []
    caps = [c * BS for c in range(5)] + [None]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


def test_blocks_moved_between_requests_are_found_where_they_stood():
    # Each request reads blocks that the last one freed at other positions, so their stamps are
    # found by looking them up there. r0 = [a, b] stamps b 0, a 1. r1 = [b, a]: b ranked 2, a 1
    # (b 3, a 2 after). r2 = [a, b, c]: a 2, b 1 (c 4, b 5, a 6). r3 = [c, a]: c 3, a 1.
    # Heads older than what follows them: each request's largest rank so far (pm) and its ranks apart.
    trace = make_trace([(["a", "b"], 8), (["b", "a"], 8), (["a", "b", "c"], 12), (["c", "a"], 8)])
    curve = stack.lru_curve(trace.requests, BS)
    assert (curve.lead, curve.pm, curve.ranks) == ([], [2, 2, 2, 2, 3, 3], [1, 1, 1, 2, 2, 3])
    caps = [c * BS for c in range(5)] + [None]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


def test_a_block_freed_again_since_breaks_the_run():
    # r0 = [h, b, c] stamps c 0, b 1, h 2; r1 = [c] frees c again (3). r2 = [h, b, c] finds h ranked
    # 2, b 3 and c 1, not the run b, c of r0: its largest rank so far is 2, 3, 3, so at 3 blocks all
    # three are read (the pool agrees).
    trace = make_trace([(["h", "b", "c"], 12), (["c"], 4), (["h", "b", "c"], 12)])
    curve = stack.lru_curve(trace.requests, BS)
    assert curve.seg_start == [] and curve.pm == [2, 3, 3] and curve.ranks == [1, 2, 3]
    caps = [c * BS for c in range(5)] + [None]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]
    assert curve.at(3)[0] == 1 + 3   # r1 reads c, r2 reads h, b and c
