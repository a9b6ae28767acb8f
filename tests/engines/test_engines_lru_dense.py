"""Miss causes on the one-capacity LRU pass (`lru.replay_lru`) while the keys stored are the ints
0 .. dense-1 (hash ids numbered in order of first appearance, as Mooncake's), and after the first
request that leaves them otherwise: against the block pool, request by request."""
import random

import pytest
from test_engines_lru import BS, capacities, chained, make_trace

from prefixsim.engines.lru import _dense_after, replay_lru
from prefixsim.engines.trace import replay, replay_pool


def numbered(requests: list[tuple[list, int]], order=lambda new: new) -> list[tuple[list, int]]:
    """The same requests with each key replaced by the int of its first appearance (0, 1, ...);
    `order` may reorder the ids a request hands out (they stay the next ones)."""
    ids: dict = {}
    out = []
    for keys, n_in in requests:
        new = [k for k in dict.fromkeys(keys) if k not in ids]
        ids.update(zip(new, order(list(range(len(ids), len(ids) + len(new))))))
        out.append(([ids[k] for k in keys], n_in))
    return out


def test_dense_ids_hand_counted():
    # 2 blocks. r1 evicts 0 and 1; r2 misses 0 (stored before: evicted); r3 reads 0 and misses 5
    # (new: a hit run, no cause); r4 misses 6 (new: cold); r5 misses 2 (evicted by r2 and r3).
    trace = make_trace([([0, 1], 8), ([2, 3], 8), ([0, 4], 8), ([0, 5], 8), ([6], 4), ([2, 3], 8)])
    rows, tot = replay(trace, 2 * BS)
    assert [(r.hit_blocks, r.cause) for r in rows] == [(0, "cold"), (0, "cold"), (0, "evicted"), (1, ""),
                                                        (0, "cold"), (0, "evicted")]
    assert (rows, tot) == replay_pool(trace, 2 * BS)
    # the same requests with string keys take the set of evicted keys: the same causes
    named = make_trace([([str(k) for k in keys], r.input_length) for keys, r in
                        zip([r.keys for r in trace.requests], trace.requests)])
    assert replay_lru(named.requests, 2, BS).causes == replay_lru(trace.requests, 2, BS).causes


def test_a_gap_in_the_ids_switches_to_the_set():
    # 3 is never requested: once 4 is stored, "below 5" no longer means "stored". r3's 3 is new.
    trace = make_trace([([0, 1], 8), ([2], 4), ([4], 4), ([3], 4), ([0], 4)])
    rows, tot = replay(trace, 1 * BS)
    assert [r.cause for r in rows] == ["cold", "cold", "cold", "cold", "evicted"]
    assert (rows, tot) == replay_pool(trace, BS)


def test_a_tail_is_taken_for_new_ids_only_when_it_is_exactly_the_next():
    # r1's tail starts at the next id (6) and sums as 6 + 7 + 8 would, but holds 0 (evicted) and 15:
    # 7 stays never stored, so r2's miss on it is cold. Likewise 5.5 and 7.5 are not 6 and 7, and
    # 5 and 7 starting at the next id skip 6.
    for requests in ([([0, 1, 2], 12), ([3, 4, 5], 12), ([6, 0, 15], 12), ([7], 4)],
                     [([0, 1, 2, 3, 4], 20), ([5, 5.5, 7.5], 12), ([6], 4)],
                     [([0, 1, 2, 3, 4], 20), ([5, 7], 8), ([6], 4)]):
        trace = make_trace(requests)
        for cap in (3 * BS, 5 * BS, 9 * BS):
            rows, tot = replay(trace, cap)
            assert rows[-1].cause == "cold"
            assert (rows, tot) == replay_pool(trace, cap)


@pytest.mark.parametrize("tail, d, after", [
    ((5, 6), 5, 7), ((6, 5), 5, 7), ((3, 5, 6), 5, 7), ((6, 3, 5), 5, 7), ((3,), 5, 5), ((0, 4), 5, 5),
    ((5, 7), 5, None),           # a gap: 6 is not stored
    ((6,), 5, None),             # 5 skipped
    ((-1, 5), 5, None),          # a negative id was never stored
    ((5, 6.0), 5, None),         # not all ints: a float (equal to an int or not) takes the set
    ((5, "a"), 5, None), (((0, 1),), 5, None),
])
def test_dense_after(tail, d, after):
    assert _dense_after(tail, d) == after


def _gap(requests, rng):
    """Ids from first appearance, one of them never handed out (every id from it on is one more)."""
    out = numbered(requests)
    g = rng.randrange(1 + max(k for keys, _ in out for k in keys))
    return [([k + (k >= g) for k in keys], n) for keys, n in out]


KINDS = {
    "numbered": lambda reqs, rng: numbered(reqs),
    "new ids reversed in a request": lambda reqs, rng: numbered(reqs, lambda new: new[::-1]),
    "new ids shuffled in a request": lambda reqs, rng: numbered(reqs, lambda new: rng.sample(new, len(new))),
    "from 1": lambda reqs, rng: [([k + 1 for k in keys], n) for keys, n in numbered(reqs)],
    "a gap later": _gap,
    "a negative id": lambda reqs, rng: [([-1 if k == 7 else k for k in keys], n) for keys, n in numbered(reqs)],
    "floats and bools equal to the ids": lambda reqs, rng: [
        ([float(k) if k % 5 == 3 else bool(k) if k < 2 else k for k in keys], n) for keys, n in numbered(reqs)],
    "tuples after ints": lambda reqs, rng: [
        ([("t", k) if i > 40 and k % 2 else k for k in keys], n) for i, (keys, n) in enumerate(numbered(reqs))],
}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("kind", KINDS)
def test_dense_and_set_causes_equal_the_block_pool(seed, kind):
    """Every capacity around the longest request (shorter requests store all their blocks; a longer
    one switches to the set), rows and totals against the pool."""
    rng = random.Random(seed)
    trace = make_trace(KINDS[kind](chained(rng, 80), rng))
    for cap in capacities(trace):
        rows, tot = replay(trace, cap)
        assert (rows, tot) == replay_pool(trace, cap), cap
