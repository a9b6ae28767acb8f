"""Exact stack distances (`engines.stack.lru_curve`) on hand-counted traces, one per path of the
pass: a lone cached block, a run one earlier request freed together, a run found block by block,
and the general path. Rule: a block's rank before a request is the number of distinct blocks freed
since it was last freed, itself included; a request reads its blocks at capacity C while the
largest rank so far is at most C. (Written to kill mutants that the pool comparisons miss.)"""
import pytest
from test_engines_lru import BS, make_trace

from prefixsim.engines import stack
from prefixsim.engines.trace import curve_totals, replay_pool


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
    # r0..r3 = [x], [y], [w], [v] (stamps 0..3); r4 = [v] reads v ranked 1 (stamp 4 now).
    # r5 = [v, w, x]: v 1, w 2 (w, v), x 4 (x, y between): stamps 4, 2, 0 fall but are no run.
    # r5 is 5 tokens: w lacks 3, x all 4. r6 = [y]: y, x, w, v freed since, ranked 4.
    trace, curve = _curve([(["x"], 4), (["y"], 4), (["w"], 4), (["v"], 4), (["v"], 4), (["v", "w", "x"], 5),
                           (["y"], 4)], chunk, monkeypatch)
    assert sorted(curve.lead) == [1, 1, 2, 4, 4] and curve.seg_start == [] and curve.pm == []
    assert curve.partial == [(2, 3), (4, 4)]
    assert [curve.at(c)[:2] for c in range(1, 6)] == [(2, 8), (3, 9), (3, 9), (5, 13), (5, 13)]
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


@pytest.mark.parametrize("n", [4098, 4100])
def test_a_run_longer_than_the_zero_buffer(monkeypatch, n):
    # The run's stamps are cleared from a 4096-byte buffer when it fits, else from new bytes.
    # r0 = [z] 0; r1 = n keys (stamps 1 .. n, head n); r2 = [d] n + 1. r3 = the same keys: head
    # ranked 2 (d, head), the run 3 .. n + 1. r4 = [d, z]: d n + 1 (every key freed since), z n + 2:
    # z's rank counts the stamps up to d's, next to the run's: all retired.
    keys = list(range(n))
    # chunks of 4 stamps: the counts cross many chunks (and stay small if a chunk is miscounted)
    trace, curve = _curve([(["z"], 4), (keys, n * BS), (["d"], 4), (keys, n * BS), (["d", "z"], 8)], 2, monkeypatch)
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2, n + 1, n + 2], [3], [n + 2])
    assert curve.at(n + 2)[0] == n + 2 and curve.at(n + 1)[0] == n + 1 and curve.at(n)[0] == n - 1


@pytest.mark.parametrize("chunk", [0, 1, 10])
def test_a_lone_head_retires_its_stamp(monkeypatch, chunk):
    # r0 = [z] 0, r1 = [a] 1, r2 = [b] 2; r3 = [a]: a ranked 2 (b, a), its stamp 1 retired (a is 3
    # now). r4 = [z]: z, a, b freed since, ranked 3 (stamp 1 no longer counts).
    trace, curve = _curve([(["z"], 4), (["a"], 4), (["b"], 4), (["a"], 4), (["z"], 4)], chunk, monkeypatch)
    assert curve.lead == [2, 3] and curve.pm == [] and curve.ranks == []
    assert [curve.at(c)[0] for c in range(1, 5)] == [0, 1, 2, 2]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [1, 2, 10])
def test_the_general_path_counts_over_chunks(monkeypatch, chunk):
    # r0 = [a, b] stamps b 0, a 1; r1 = [c, d, e, f] stamps f 2 .. c 5. r2 = [b, g, a] (general
    # path): a ranked 5 (a, c, d, e, f: its count runs over chunks of 2 and 4 stamps), b 6.
    # r3 = [f]: f ranked 7 (f, e, d, c, then r2's b, g, a).
    trace, curve = _curve([(["a", "b"], 8), (["c", "d", "e", "f"], 16), (["b", "g", "a"], 12), (["f"], 4)],
                          chunk, monkeypatch)
    assert (curve.pm, curve.ranks, curve.lead) == ([6], [5, 6], [7])
    assert [curve.at(c)[0] for c in range(4, 8)] == [0, 0, 1, 2]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [0, 2, 10])
def test_rising_stamps_take_the_general_path_and_keep_what_came_before(monkeypatch, chunk):
    # r0 = [a, b] stamps b 0, a 1; r1 = [c] 2. r2 = [b, a, e]: b 3, a 2 (b's stamp is older than a's:
    # no falling run), then e new: largest rank so far 3, 3. r2 stamps e 3, a 4, b 5. r3 = [a, b]:
    # a 2, b 1 (stamps rise again): 2, 2; b at index 1 ranked 1 diverges at 1. r4 = [c]: c, a, b,
    # e freed since, 4.
    trace, curve = _curve([(["a", "b"], 8), (["c"], 4), (["b", "a", "e"], 12), (["a", "b"], 8), (["c"], 4)],
                          chunk, monkeypatch)
    assert (curve.pm, curve.ranks, curve.diverge) == ([2, 2, 3, 3], [1, 2, 2, 3], [(1, 1)])
    assert curve.lead == [4]
    assert [curve.exact_at(c) for c in (0, 1, 2)] == [True, False, True]
    with pytest.raises(AssertionError):
        curve.at(1)   # the stack does not describe a pool of 1 block here
    assert [curve.at(c)[0] for c in (0, 2, 3, 4)] == [0, 2, 4, 5]
    _same_as_pool(trace)


def test_a_head_from_another_request_before_a_run(monkeypatch):
    # r0 = [q, b, c] stamps c 0, b 1, q 2; r1 = [a] 3; r2 = [d] 4. r3 = [a, b, c] (2 tokens): a 2
    # (d, a), then r0's run b, c, as r0 had them, ranked 4, 5 (q between). a lacks 2 tokens, b
    # and c all 4.
    trace, curve = _curve([(["q", "b", "c"], 12), (["a"], 4), (["d"], 4), (["a", "b", "c"], 2)])
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2], [4], [6])
    assert curve.partial == [(2, 2), (4, 4), (5, 4)]
    assert [curve.at(c)[:2] for c in range(1, 6)] == [(0, 0), (1, 2), (1, 2), (2, 2), (3, 2)]
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [1, 2, 10])
def test_runs_after_many_older_stamps(monkeypatch, chunk):
    # Six older blocks (stamps 0..5, chunks 0..2 of 2 stamps) then a run whose stamps start past
    # them: r1 = [a, b, c, d] stamps d 6 .. a 9; r2 = [f] 10; r3 = [a, b, c, d]: a 2, run b, c, d
    # 3, 4, 5 (stamps 8, 7, 6). r4 = [z6] (stamp 0): every block freed since, 11.
    zs = [f"z{i}" for i in range(1, 7)]
    trace, curve = _curve([(zs, 24), (["a", "b", "c", "d"], 16), (["f"], 4), (["a", "b", "c", "d"], 16),
                           (["z6"], 4)], chunk, monkeypatch)
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2, 11], [3], [6])
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [1, 2, 10])
def test_a_run_found_by_stamps_after_many_older_stamps(monkeypatch, chunk):
    # As above, but r1 = [p, a, b, c] (stamps c 6, b 7, a 8, p 9) and r3 = [a, b, c] one position
    # earlier: a 3 (d, p, a), b 4, c 5 by their stamps. r4 = [z6]: 11 (z1..z6, p, a, b, c, d).
    zs = [f"z{i}" for i in range(1, 7)]
    trace, curve = _curve([(zs, 24), (["p", "a", "b", "c"], 16), (["d"], 4), (["a", "b", "c"], 12),
                           (["z6"], 4)], chunk, monkeypatch)
    assert sorted(curve.lead) == [3, 4, 5, 11] and curve.seg_start == []
    _same_as_pool(trace)


def test_a_run_whose_first_and_last_chunks_are_not_adjacent(monkeypatch):
    # Chunks of 2 stamps. r0 = [z] 0; r1 = [a, b, c, d, e] stamps e 1 .. a 5; r2 = [f] 6.
    # r3 = [a .. e]: a 2, run b .. e 3 .. 6 (stamps 4 .. 1: chunks 0 to 2). r4 = [z]: 7.
    trace, curve = _curve([(["z"], 4), (list("abcde"), 20), (["f"], 4), (list("abcde"), 20), (["z"], 4)],
                          1, monkeypatch)
    assert (curve.lead, curve.seg_start, curve.seg_end) == ([2, 7], [3], [7])
    _same_as_pool(trace)


@pytest.mark.parametrize("chunk", [0, 1, 10])
def test_falling_stamps_next_one_down_then_a_gap(monkeypatch, chunk):
    # r0..r3 = [x], [y], [w], [v] (stamps 0..3). r4 = [v, w, x]: v 1, w 2 (the next stamp down: one
    # more), x 4 (x and y between): stamps 3, 2, 0 fall but are no run. r5 = [y]: y, x, w, v, 4.
    trace, curve = _curve([(["x"], 4), (["y"], 4), (["w"], 4), (["v"], 4), (["v", "w", "x"], 12), (["y"], 4)],
                          chunk, monkeypatch)
    assert sorted(curve.lead) == [1, 2, 4, 4] and curve.seg_start == [] and curve.pm == []
    assert [curve.at(c)[0] for c in range(1, 6)] == [1, 2, 2, 4, 4]
    _same_as_pool(trace)
