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


@pytest.mark.parametrize("first", [["y", "x"], ["x", "y"]])
def test_a_request_repeating_a_cached_key_is_not_exact(first):
    # [x, x] after a request that freed x: both blocks find x's one stamp. The stack counts each
    # block once, so only the block pool counts this (NotExact), whether or not the stamps look like
    # a run (x second in r0: its stamp is one below r0's head, as a run's second block would be).
    trace = make_trace([(first, 8), (["x", "x"], 8)])
    with pytest.raises(stack.NotExact):
        stack.lru_curve(trace.requests, BS)
    caps = [c * BS for c in range(4)] + [None]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


def _curve(requests, chunk=None, monkeypatch=None):
    if chunk is not None:
        monkeypatch.setattr(stack, "_CHUNK", chunk)
    trace = make_trace(requests)
    return trace, stack.lru_curve(trace.requests, BS)


def _same_as_pool(trace):
    longest = max(len(r.keys) for r in trace.requests)
    caps = [c * BS for c in range(2 * longest + 3)] + [None]
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


def test_a_short_request_lacks_tokens_in_every_block_past_its_input():
    # As above, but r2 is 2 tokens: a lacks 2 of its 4, b and c all 4 (ranks 2, 3, 4).
    trace, curve = _curve([(["a", "b", "c"], 12), (["d"], 4), (["a", "b", "c"], 2)])
    assert curve.partial == [(2, 2), (3, 4), (4, 4)]
    assert [curve.at(c)[:2] for c in range(1, 6)] == [(0, 0), (1, 2), (2, 2), (3, 2), (3, 2)]
    _same_as_pool(trace)


def test_a_lone_cached_block_before_new_ones():
    # r0 = [a] (stamp 0), r1 = [b] (1); r2 = [a, c, e] finds a ranked 2 (a and b freed since), then
    # two new blocks. r2 is 3 tokens: a lacks 1.
    trace, curve = _curve([(["a"], 4), (["b"], 4), (["a", "c", "e"], 3)])
    assert (curve.lead, curve.seg_start, curve.pm, curve.ranks) == ([2], [], [], [])
    assert curve.partial == [(2, 1)] and curve.distinct == 4
    assert [curve.at(c)[:2] for c in range(1, 4)] == [(0, 0), (1, 3), (1, 3)]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [1, 2, 10])
def test_a_run_in_the_middle_of_the_stamps_then_an_older_block(monkeypatch, chunk):
    # r0 = [w, x, y, z] stamps z 0, y 1, x 2, w 3; r1 = [a, b, c] stamps c 4, b 5, a 6; r2 = [e] 7.
    # r3 = [a, b, c]: a 2, then the run b, c ranked 3, 4 (stamps 5, 4: one chunk of 4 stamps, two
    # of 2). r4 = [z]: every other block was freed since, z ranked 8, counted over the chunks the
    # run left: its retired stamps must not count.
    trace, curve = _curve([(["w", "x", "y", "z"], 16), (["a", "b", "c"], 12), (["e"], 4),
                           (["a", "b", "c"], 12), (["z"], 4)], chunk, monkeypatch)
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2, 8], [3], [5])
    assert [curve.at(c)[0] for c in range(1, 10)] == [0, 1, 2, 3, 3, 3, 3, 4, 4]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [0, 1, 2, 10])
def test_a_run_over_chunks_then_an_older_block(monkeypatch, chunk):
    # r0 = [z] stamp 0; r1 = [a, b, c, d] stamps d 1 .. a 4; r2 = [e] 5. r3 = [a, b, c, d]: a 2,
    # the run b, c, d 3, 4, 5 (stamps 3, 2, 1: over two chunks of 2 stamps). r4 = [z] ranked 6.
    trace, curve = _curve([(["z"], 4), (["a", "b", "c", "d"], 16), (["e"], 4), (["a", "b", "c", "d"], 16),
                           (["z"], 4)], chunk, monkeypatch)
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2, 6], [3], [6])
    assert [curve.at(c)[0] for c in range(1, 8)] == [0, 1, 2, 3, 4, 5, 5]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [0, 1, 2, 10])
def test_a_run_found_by_its_stamps_not_its_positions(monkeypatch, chunk):
    # r0 = [z] 0; r1 = [p, a, b, c] stamps c 1, b 2, a 3, p 4; r2 = [d] 5. r3 = [a, b, c] reads r1's
    # blocks one position earlier than r1 had them, so not as r1's run; their stamps 3, 2, 1 fall
    # one by one: a 3 (d, p, a), b 4, c 5. r4 = [z] ranked 6 (z, p, a, b, c, d).
    trace, curve = _curve([(["z"], 4), (["p", "a", "b", "c"], 16), (["d"], 4), (["a", "b", "c"], 12),
                           (["z"], 4)], chunk, monkeypatch)
    assert sorted(curve.lead) == [3, 4, 5, 6] and curve.seg_start == [] and curve.pm == []
    assert [curve.at(c)[0] for c in range(1, 8)] == [0, 0, 1, 2, 3, 4, 4]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [0, 1, 10])
def test_falling_stamps_with_gaps_are_ranked_one_by_one(monkeypatch, chunk):
    # r0..r3 = [x], [y], [w], [v] (stamps 0..3). r4 = [v, w, x]: v 1, w 2 (next stamp down), x 4
    # (x and y between): stamps 3, 2, 0 fall but are no run. r5 = [y]: y, x, w, v freed since, 4.
    trace, curve = _curve([(["x"], 4), (["y"], 4), (["w"], 4), (["v"], 4), (["v", "w", "x"], 12), (["y"], 4)],
                          chunk, monkeypatch)
    assert sorted(curve.lead) == [1, 2, 4, 4] and curve.seg_start == [] and curve.pm == []
    assert [curve.at(c)[0] for c in range(1, 6)] == [1, 2, 2, 4, 4]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [0, 2, 10])
def test_the_general_path_ranks_in_any_order(monkeypatch, chunk):
    # r0 = [a, b] stamps b 0, a 1; r1 = [c] 2. r2 = [b, e, a]: b 3 (c, a, b), e new, a 2 (c, a):
    # cached blocks behind a new one take the general path: largest rank so far 3, then past every
    # capacity. r2 is 9 tokens: its third block lacks 3, but only the blocks read count. a, third,
    # ranked 2: at 2 blocks r2 would read past its first 2 (diverge), which the pool decides.
    trace, curve = _curve([(["a", "b"], 8), (["c"], 4), (["b", "e", "a"], 9)], chunk, monkeypatch)
    assert (curve.lead, curve.pm, curve.ranks, curve.diverge) == ([], [3], [2, 3], [(2, 2)])
    assert curve.partial == [] and curve.distinct == 4
    assert [curve.exact_at(c) for c in range(5)] == [True, True, False, True, True]
    assert [curve.at(c)[:2] for c in (0, 1, 3, 4, None)] == [(0, 0), (0, 0), (1, 4), (1, 4), (1, 4)]
    _same_as_pool(trace)


def test_a_long_request_past_the_capacity_diverges():
    # r0 = [a, b, c] stamps c 0, b 1, a 2; r1 = [c, b, a]: c 3, b 2, a 1 (general path: stamps
    # rise). a's rank 1 is at most its index 2: at 1 and 2 blocks r1 reads past its first C blocks
    # (diverge (1, 2)), and the pool decides.
    trace, curve = _curve([(["a", "b", "c"], 12), (["c", "b", "a"], 12)])
    assert curve.pm == [3, 3, 3] and curve.ranks == [1, 2, 3]
    assert curve.diverge == [(1, 2)]
    assert [curve.exact_at(c) for c in (None, 0, 1, 2, 3)] == [True, True, False, False, True]
    assert curve.at(3) == (3, 12, 0) and curve.at(None) == (3, 12, 0)
    _same_as_pool(trace)


def test_a_run_longer_than_the_zero_buffer():
    # The run's stamps are cleared from a 4096-byte buffer when it fits, else from new bytes. r2 reads
    # its head ranked 2 (d, head) and the run 3 .. n + 1; r3 = [d] ranked n + 1.
    n = 4100
    keys = list(range(n))
    trace, curve = _curve([(keys, n * BS), (["d"], 4), (keys, n * BS), (["d"], 4)])
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2, n + 1], [3], [n + 2])
    assert curve.at(n + 1)[0] == n + 1 and curve.at(n)[0] == n - 1
