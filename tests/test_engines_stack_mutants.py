"""Exact stack distances (`engines.stack.lru_curve`) on hand-counted traces, one per path of the
pass: a lone cached block, a run one earlier request freed together, a run found block by block,
and the general path. Rule: a block's rank before a request is the number of distinct blocks freed
since it was last freed, itself included; a request reads its blocks at capacity C while the
largest rank so far is at most C. (Written to kill mutants that the pool comparisons miss.)"""
import pytest

from prefixsim.engines import stack
from prefixsim.engines.trace import curve_totals, replay_pool

from test_engines_lru import BS, make_trace


def test_a_run_freed_together_hand_counted():
    # r0 = [a, b, c] frees c, b, a (stamps 0, 1, 2); r1 = [d] frees d (3). Stack before r2, newest
    # first: d, a, b, c, so r2 = [a, b, c] finds a ranked 2, then the run b, c ranked 3, 4.
    # r2 is 10 tokens: c lacks 2 of its 4.
    trace = make_trace([(["a", "b", "c"], 12), (["d"], 4), (["a", "b", "c"], 10)])
    curve = stack.lru_curve(trace.requests, BS)
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2], [3], [5])
    assert curve.pm == [] and curve.ranks == [] and curve.diverge == []
    assert curve.partial == [(4, 2)] and curve.distinct == 4 and curve.lengths == [3, 1, 3]
    # hit blocks at C = 1..5: a at 2, b at 3, c at 4
    assert [curve.at(c)[:2] for c in range(1, 6)] == [(0, 0), (1, 4), (2, 8), (3, 10), (3, 10)]
    assert curve.at(None) == (3, 10, 0)
    caps = [c * BS for c in range(7)] + [None]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]
