"""The fast LRU paths (`engines.lru`) against the block pool they stand in for: request by request,
in total, and over capacity curves, on random traces and on the Mooncake sample."""
import random

import pytest
from conftest import data_file

from prefixsim.engines.lru import NotExact, lru_curve, replay_lru
from prefixsim.engines.trace import (
    Trace,
    TraceRequest,
    curve_totals,
    load_trace,
    replay,
    replay_capacities,
    replay_pool,
    replay_trace,
)

BS = 4


def make_trace(requests: list[tuple[list, int]], bs: int = BS) -> Trace:
    return Trace("mooncake", bs, tuple(TraceRequest(f"r{i}", float(i), n_in, 1, tuple(keys), tuple(range(len(keys))), "s")
                                       for i, (keys, n_in) in enumerate(requests)))


def chained(rng: random.Random, n: int, conversations: int = 6, system: int = 3) -> list[tuple[list, int]]:
    """Conversations on shared system blocks, each turn extending the last (hash ids as Mooncake)."""
    convs: list[list] = [[] for _ in range(conversations)]
    heads = [[("sys", s, i) for i in range(rng.randint(1, 4))] for s in range(system)]
    out = []
    for _ in range(n):
        c = rng.randrange(conversations)
        if not convs[c] or rng.random() < 0.15:   # a new conversation on one of the system prompts
            convs[c] = list(rng.choice(heads))
        convs[c] = convs[c] + [("c", c, rng.random()) for _ in range(rng.randint(0, 5))]
        keys = convs[c]
        out.append((keys, max(1, len(keys) * BS - rng.randrange(BS))))
    return out


def scattered(rng: random.Random, n: int, universe: int = 30) -> list[tuple[list, int]]:
    """Keys in any order from a small universe: cached blocks behind missing ones, long requests
    that read past the capacity, input lengths shorter than the blocks say."""
    out = []
    for _ in range(n):
        keys = rng.sample(range(universe), rng.randint(0, 12))
        out.append((keys, rng.choice([len(keys) * BS, max(0, len(keys) * BS - 3), rng.randint(0, 3 * BS)])))
    return out


def capacities(trace: Trace) -> list:
    longest = max(len(r.keys) for r in trace.requests)
    blocks = {0, 1, 2, 3, longest - 1, longest, longest + 1, 2 * longest, 10 * longest}
    # tokens: whole blocks and one token short of the next block (capacity // block size)
    return sorted({b * BS for b in blocks if b >= 0} | {b * BS + BS - 1 for b in blocks if b >= 0}) + [None]


def assert_same(trace: Trace, cap) -> None:
    rows, tot = replay(trace, cap)
    ref_rows, ref_tot = replay_pool(trace, cap)
    assert rows == ref_rows, cap
    assert tot == ref_tot, cap


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", [chained, scattered])
def test_fast_replay_equals_the_block_pool(seed, kind):
    trace = make_trace(kind(random.Random(seed), 80))
    for cap in capacities(trace):
        assert_same(trace, cap)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", [chained, scattered])
def test_curve_equals_one_pool_per_capacity(seed, kind):
    trace = make_trace(kind(random.Random(seed), 80))
    caps = capacities(trace)
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_curve_at_every_capacity_equals_the_pool(seed):
    """Every capacity from 0 blocks to past the distinct blocks, not only a few: the runs of
    consecutive ranks and the requests' lengths are summed by bisection (Curve.at), so each capacity
    falls between different runs' starts and ends."""
    trace = make_trace(chained(random.Random(seed), 60))
    distinct = len({k for r in trace.requests for k in r.keys})
    caps = [b * BS for b in range(distinct + 3)]
    curve = lru_curve(trace.requests, BS)
    assert curve.seg_start   # the runs are exercised
    assert curve_totals(trace, caps) == [replay_pool(trace, c)[1] for c in caps]


def test_stack_describes_every_capacity_of_chained_ids():
    trace = make_trace(chained(random.Random(3), 200))
    curve = lru_curve(trace.requests, BS)
    assert curve.diverge == [] and all(curve.exact_at(b) for b in range(0, 100))


def test_a_long_request_reading_past_the_capacity_is_replayed_on_its_own():
    # r1 frees 8 last, so 8 tops the stack (rank 1). r2 = [1, 2, 3, 8] is longer than a pool of
    # 1-3 blocks and finds 8, its 4th block, cached: the pool keeps 8 (held) and as much of the head
    # as fits, not the stack's top [1, 2, 3]. At 2 blocks r3 then reads 1 only.
    trace = make_trace([([8, 9], 8), ([1, 2, 3, 8], 16), ([1, 2], 8)])
    curve = lru_curve(trace.requests, BS)
    assert [curve.exact_at(b) for b in range(6)] == [True, False, False, False, True, True]
    rows, _ = replay_pool(trace, 2 * BS)
    assert [r.hit_blocks for r in rows] == [0, 0, 1]
    assert curve_totals(trace, [BS, 2 * BS, 4 * BS, None]) == [replay_pool(trace, c * BS)[1] if c else
                                                               replay_pool(trace, None)[1] for c in (1, 2, 4, None)]


def test_a_repeated_key_falls_back_to_the_pool():
    # The pool counts the repeated missing key twice (one more eviction); the fast paths refuse.
    trace = make_trace([([1, 2], 8), ([3, 3], 8), ([1, 3, 1], 12)])
    with pytest.raises(NotExact):
        replay_lru(trace.requests, 2, BS)
    with pytest.raises(NotExact):
        lru_curve(trace.requests, BS)
    for cap in (0, BS, 2 * BS, 3 * BS, None):
        assert_same(trace, cap)
    assert curve_totals(trace, [BS, 2 * BS, None]) == [replay_pool(trace, c)[1] for c in (BS, 2 * BS, None)]


def test_fifo_and_lfu_curves_take_one_pool_pass_per_capacity():
    trace = make_trace(chained(random.Random(5), 60))
    for eviction in ("fifo", "lfu"):
        caps = [2 * BS, 5 * BS, None]
        assert curve_totals(trace, caps, eviction) == [replay_pool(trace, c, eviction)[1] for c in caps]


def test_evicted_cause_comes_from_the_fast_path():
    # 2 blocks: r2 evicts r1's 2 (the tail goes first), so r3 stops at 2: evicted, not cold.
    trace = make_trace([([1, 2], 8), ([3], 4), ([1, 2], 8), ([4, 5], 8)])
    rows, tot = replay(trace, 2 * BS)
    assert [(r.hit_blocks, r.cause) for r in rows] == [(0, "cold"), (0, "cold"), (1, "evicted"), (0, "cold")]
    assert tot.evictions == 4
    assert (rows, tot) == replay_pool(trace, 2 * BS)


MOONCAKE = ("mooncake", "conversation_trace.jsonl")


@pytest.fixture(scope="module")
def mooncake():
    return load_trace(data_file(*MOONCAKE))


@pytest.mark.no_mutation
@pytest.mark.slow
@pytest.mark.parametrize("blocks", [1, 246, 247, 248, 5859])
def test_mooncake_fast_replay_equals_the_pool(mooncake, blocks):
    # 247 blocks is the sample's longest request: one below, at and above it, and 3M tokens
    assert max(len(r.keys) for r in mooncake.requests) == 247
    assert_same(mooncake, blocks * 512)


@pytest.mark.no_mutation
@pytest.mark.slow
def test_mooncake_curve_equals_the_pool(mooncake):
    caps = [16_000, 126_464, 4_000_000, None]
    fast = curve_totals(mooncake, caps)
    assert fast == [replay_pool(mooncake, c)[1] for c in caps]
    # at 3M tokens (5,859 blocks) the tail of each new chain is evicted first
    out = replay_trace(data_file(*MOONCAKE), capacities=[3_000_000, None], fmt="table")
    assert [p["hit_tokens"] for p in out["summary"]["curve"]] == [20_087_299, 54_098_411]


def test_replay_leaves_the_collector_as_it_found_it():
    import gc

    trace = make_trace(chained(random.Random(1), 30))
    before = gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()
    replay(trace, 3 * BS)
    curve_totals(trace, [BS, 3 * BS, None])
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


@pytest.mark.no_mutation
def test_replay_keeps_what_a_caller_froze():
    import gc

    trace = make_trace(chained(random.Random(2), 10))
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        replay(trace, 2 * BS)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_causes_from_the_unlimited_pass_hand_counted():
    # 2 blocks: r1 evicts a and b; r2 misses a (evicted), r3 reads a and misses f (never seen),
    # r4 misses g (never seen), r5 misses c (evicted by r2 and r3)
    trace = make_trace([(["a", "b"], 8), (["c", "d"], 8), (["a", "e"], 8), (["a", "f"], 8), (["g"], 4),
                        (["c"], 4)])
    unl = replay_lru(trace.requests, None, BS)
    assert unl.chained and unl.runs == [0, 0, 1, 1, 0, 1]
    rows, _ = replay(trace, 2 * BS, unlimited=unl)
    assert [r.cause for r in rows] == ["cold", "cold", "evicted", "", "cold", "evicted"]   # "": a hit
    assert (rows, replay(trace, 2 * BS)[1]) == replay_pool(trace, 2 * BS)
    # the unlimited pass decides: told nothing was seen before, every miss would be new
    told = replay_lru(trace.requests, 2, BS, seen=type(unl)(0, 0, 0, [0] * 6, None, None, True))
    assert told.causes == ["cold", "cold", "cold", "", "cold", "cold"]


def test_unchained_keys_are_detected_and_the_evicted_set_used():
    # r1's b was seen before although c, before it, was not: the unlimited run (0) cannot tell
    trace = make_trace([(["a", "b"], 8), (["c", "b"], 8), (["d"], 4), (["b", "a"], 8), (["c"], 4)])
    unl = replay_lru(trace.requests, None, BS)
    assert not unl.chained
    for cap in (BS, 2 * BS, 3 * BS):
        assert replay(trace, cap, unlimited=unl) == replay_pool(trace, cap)
    # a request naming a block twice: not chained either (and the pool path is taken)
    twice = make_trace([(["a"], 4), (["b", "b"], 8), (["a"], 4)])
    assert not replay_lru(twice.requests, None, BS).chained
    assert replay(twice, BS, unlimited=replay_lru(twice.requests, None, BS)) == replay_pool(twice, BS)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", [chained, scattered])
def test_causes_from_the_unlimited_pass_equal_the_block_pool(seed, kind):
    trace = make_trace(kind(random.Random(seed), 80))
    unl = replay_lru(trace.requests, None, BS)
    for cap in capacities(trace):
        assert replay(trace, cap, unlimited=unl) == replay_pool(trace, cap), cap
        rows, tots = replay_capacities(trace, [cap, 3 * BS, None], BS)
        assert (rows, tots) == (replay_pool(trace, cap)[0], [replay_pool(trace, c)[1] for c in (cap, 3 * BS, None)])


@pytest.mark.no_mutation
@pytest.mark.slow
def test_mooncake_keys_are_chained_and_causes_equal_the_pool(mooncake):
    unl = replay_lru(mooncake.requests, None, 512)
    assert unl.chained
    rows, tots = replay_capacities(mooncake, [3_000_000, None], 512)
    assert (rows, tots[0]) == replay_pool(mooncake, 3_000_000)
    assert tots[1] == replay_pool(mooncake, None)[1]
    assert rows == replay(mooncake, 3_000_000)[0]
    assert {r.cause for r in rows} == {"cold", "evicted", ""}


def _pool_sized(rng: random.Random, cap: int) -> list[tuple[list, int]]:
    """Requests of exactly the pool's size (and one block either side), extending an earlier one or
    new, some with an old key after new ones (the unlimited pass is then not chained)."""
    reqs: list[tuple[list, int]] = []
    nxt = 0
    for _ in range(rng.randint(3, 25)):
        n = rng.choice([cap, cap, max(cap - 1, 1), cap + 1, rng.randint(1, cap + 2)])
        base = list(rng.choice(reqs)[0])[:rng.randint(0, n)] if reqs and rng.random() < 0.5 else []
        keys = base + list(range(nxt, nxt + n - len(base)))
        nxt += n - len(base)
        if rng.random() < 0.2:
            keys = list(dict.fromkeys([*keys, rng.randrange(max(nxt, 1))]))
        reqs.append((keys, max(len(keys) * BS - rng.randint(0, 3), 1)))
    return reqs


@pytest.mark.parametrize("seed", range(200))
def test_requests_the_size_of_the_pool_and_unchained_causes_equal_the_pool(seed):
    # bench/mutation_equivalents.toml rests two lru mutants on this: a request exactly the pool's size
    # keeps every block whichever path takes it, and the unlimited pass gives the pool's causes
    # whether or not its keys are chained.
    rng = random.Random(seed)
    cap = rng.randint(1, 6)
    trace = make_trace(_pool_sized(rng, cap))
    pool = replay_pool(trace, cap * BS)
    unl = replay_lru(trace.requests, None, BS)
    for unlimited in (None, unl):
        rows, totals = replay(trace, cap * BS, unlimited=unlimited)
        assert (list(rows), totals) == pool


def test_a_request_shorter_than_a_block_is_no_miss_with_the_unlimited_pass():
    # A request shorter than one block names no block: nothing to miss, as the pool counts it, also
    # when the causes come from the unlimited pass.
    trace = make_trace([(["a", "b"], 8), ([], 3), (["c"], 4), ([], 2), (["a"], 4)])
    unl = replay_lru(trace.requests, None, BS)
    rows, totals = replay(trace, 2 * BS, unlimited=unl)
    # c evicts b (the pool makes a request's head its most recent block), so a still hits
    assert [r.cause for r in rows] == ["cold", "", "cold", "", ""]
    assert (list(rows), totals) == replay_pool(trace, 2 * BS)
