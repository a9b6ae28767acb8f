"""The incremental hot path (views built from the previous request, prefix reads applied lazily)
gives exactly what recomputing everything per request gives (hypothesis, shipped scenarios)."""
import dataclasses
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixsim.core import simulator as runner
from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.core.store import Store
from prefixsim.core.view import equal_prefix, view
from prefixsim.model import Block, Call, Layer, Request

ROOT = Path(__file__).resolve().parents[2]
MODELS = ("claude-sonnet-4-5", "claude-opus-4-1")


def _from_scratch(req, d0, ref, own, count, store, lane=None, base=None):
    """A view that reuses nothing: full chain, full scan of known positions."""
    return view(req, d0, None if ref is None else dataclasses.replace(ref, ordered=False), False, count, store,
                lane)


def replay_both(provider, calls, prices):
    fast = Simulator(provider, tokenizer="approx", prices=prices)
    slow = Simulator(provider, tokenizer="approx", prices=prices)
    slow.store = Store(capacity=10**18)   # a capacity that never evicts applies every prefix read at once
    with mock.patch.object(runner, "view", _from_scratch):
        want = [(o.usage, str(o.cause), o.read_blocks) for o in slow.run(calls)]
    got = [(o.usage, str(o.cause), o.read_blocks) for o in fast.run(calls)]
    return got, want


op = st.tuples(st.sampled_from(["main", "main", "main", "fork", "fork2", "side"]),
               st.sampled_from(["append", "append", "append", "edit", "cut", "params", "model", "rebuild"]),
               st.integers(1, 4), st.floats(0, 400).map(lambda x: round(x, 1)),
               st.sampled_from([None, "5m", "1h"]))


@st.composite
def sessions(draw):
    """Calls on a main stream, two fork streams (first call descends from main, after the same spawned
    blocks when spawned from the same main state) and a side stream, with
    appended, edited, cut and rebuilt (equal but not identical) blocks, moving markers, parameter and
    model changes and gaps around the TTLs."""
    convs = {"main": [Block(Layer.TOOLS, b"tools", "tools[0]", tokens=1500),
                      Block(Layer.SYSTEM, b"system", "system[0]", tokens=700)]}
    params, model, t, calls, k = (b"", b"", b""), MODELS[0], 0.0, [], 0
    for stream, action, size, gap, sys_bp in draw(st.lists(op, min_size=1, max_size=25)):
        k += 1
        if stream not in convs:
            convs[stream] = list(convs["main"])
            if stream.startswith("fork"):   # children of one parent state share what follows it
                convs[stream] += [Block(Layer.MESSAGES, b"spawn-%d-%d" % (len(convs["main"]), i), f"spawn{i}",
                                        tokens=300) for i in range(3)]
        blocks = convs[stream]
        if action == "append" or len(blocks) <= 2:
            blocks += [Block(Layer.MESSAGES, b"%s-%d-%d" % (stream.encode(), k, i), f"m{k}.{i}", tokens=200 * size)
                       for i in range(size)]
        elif action == "edit":
            i = draw(st.integers(0, len(blocks) - 1))
            blocks[i] = Block(blocks[i].layer, blocks[i].data + b"!", blocks[i].path, tokens=blocks[i].tokens)
        elif action == "cut":
            del blocks[max(2, len(blocks) - size):]
        elif action == "params":
            params = (b"", b"", b"tool_choice=%d" % (k % 2))
        elif action == "model":
            model = MODELS[1] if model == MODELS[0] else MODELS[0]
        else:
            blocks[:] = [Block(b.layer, b.data, b.path, tokens=b.tokens) for b in blocks]
        marked = list(blocks)
        if sys_bp:
            marked[1] = marked[1].with_breakpoint(sys_bp)
        marked[-1] = marked[-1].with_breakpoint("5m")
        t += gap
        calls.append(Call(t, Request(model, tuple(marked), layer_params=params), stream=stream,
                          parent="main" if stream.startswith("fork") else None, output_tokens=10))
    return calls


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(sessions(), st.sampled_from(["anthropic", "openai", "deepseek", "prefix"]))
def test_incremental_equals_recomputed(calls, provider):
    # one pair of model names serves every provider: only the rules for the first differ by name
    names = {"anthropic": MODELS, "openai": ("gpt-4o", "gpt-4.1"), "deepseek": ("deepseek-chat", "deepseek-x"),
             "prefix": MODELS}[provider]
    calls = [dataclasses.replace(c, request=dataclasses.replace(c.request, model=names[MODELS.index(c.request.model)]))
             for c in calls]
    sheet = PriceBook({m: {"input": 3, "output": 15, "cache_read": 0.3, "cache_write_5m": 3.75, "cache_write_1h": 6}
                       for m in names})
    got, want = replay_both(provider, calls, sheet)
    assert got == want


@pytest.mark.slow
def test_shipped_scenarios_equal_recomputed():
    from prefixsim.api import run_scenario
    from prefixsim.report.tables import json_text
    for path in sorted((ROOT / "scenarios").glob("*.yaml"))[:4]:
        fast = json_text(run_scenario(str(path)).to_json())
        with mock.patch.object(runner, "view", _from_scratch):
            slow = json_text(run_scenario(str(path)).to_json())
        assert fast == slow, path.name


@pytest.mark.parametrize("a, b, n", [((1, 2, 3), (1, 2, 3, 4), 3), ((1, 2, 3), (1, 2, 9), 2), ((), (1,), 0),
                                     ((1, 2, 3, 4, 5, 6, 7), (1, 9, 3, 4, 5, 6, 7), 1), ((5,), (6,), 0)])
def test_equal_prefix(a, b, n):
    assert equal_prefix(a, b) == n


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=40), st.lists(st.integers(0, 3), max_size=40))
def test_equal_prefix_is_the_first_difference(a, b):
    """Wherever the two differ (in the looked-at tail, before it, both): the first difference."""
    want = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    assert equal_prefix(tuple(a), tuple(b)) == want
    shared = tuple(range(100, 130))   # a long equal history, then the two tails
    assert equal_prefix(shared + tuple(a), shared + tuple(b)) == 30 + want


def test_render_memo_keeps_key_order_and_exact_text():
    from prefixsim.wire.anthropic import dumps, message_blocks
    parts = [{"type": "text", "text": "a"}, {"text": "a", "type": "text"}, {"type": "text", "text": "a"},
             {"type": "text", "text": 1}, {"type": "text", "text": True}]
    for part in parts:
        for _ in range(2):   # the second time from the memo
            assert message_blocks({"role": "user", "content": [part]}, 0)[0].data == dumps({"role": "user"}) + dumps(part)


def test_parameters_of_a_layer_no_block_reaches_leave_the_chain_alone():
    # the messages layer's parameters enter the chain where it enters that layer: a request without
    # messages never enters it, so its chain is the one its predecessor had (nothing parted)
    from prefixsim.core.chain import chain, namespace_digest
    blocks = (Block(Layer.TOOLS, b"tools", "tools[0]", tokens=100), Block(Layer.SYSTEM, b"sys", "system[0]", tokens=50))
    before = Request(MODELS[0], blocks, layer_params=(b"", b"", b""))
    after = Request(MODELS[0], blocks, layer_params=(b"", b"", b"tool_choice=1"))
    d0, store = namespace_digest("anthropic", MODELS[0]), Store()
    first = view(before, d0, None, True, lambda b: b.tokens, store)
    second = view(after, d0, first, True, lambda b: b.tokens, store)
    assert second.digests[:second.n] == chain(d0, after) == chain(d0, before)
    assert (second.n, second.cum, second.parting) == (2, [100, 150], None)


def test_a_request_out_of_layer_order_is_chained_from_scratch_and_not_extended_later():
    # blocks out of render order (a system block after a message) cannot extend the previous chain
    # where it ends: the messages layer's parameters enter once, where the chain first enters that
    # layer, so every view must equal store.chain of its request
    from prefixsim.core.chain import chain, namespace_digest
    t, s = Block(Layer.TOOLS, b"t", "tools[0]", tokens=10), Block(Layer.SYSTEM, b"s", "system[0]", tokens=20)
    m1, m2 = Block(Layer.MESSAGES, b"m1", "m1", tokens=30), Block(Layer.MESSAGES, b"m2", "m2", tokens=40)
    params = (b"", b"", b"tool_choice=1")
    reqs = [Request(MODELS[0], blocks, layer_params=params)
            for blocks in ((t, m1), (t, m1, s, m2), (t, m1, s, Block(Layer.MESSAGES, b"m2!", "m2", tokens=40)))]
    d0, store, ref = namespace_digest("anthropic", MODELS[0]), Store(), None
    for req, ordered in zip(reqs, (True, False, False)):
        ref = view(req, d0, ref, True, lambda b: b.tokens, store)
        assert ref.digests[:ref.n] == chain(d0, req) and ref.ordered is ordered
    assert ref.cum == [10, 40, 60, 100] and ref.parting == 3


def test_a_prefix_another_stream_writes_first_is_known_to_the_next_request():
    # main marks only its third block, so the system prompt's boundary is first written by a side
    # stream that marks it; main's next request extends its own chain and must learn that position
    t, s = Block(Layer.TOOLS, b"t", "tools[0]", tokens=1500), Block(Layer.SYSTEM, b"s", "system[0]", tokens=700)
    m1, m2 = Block(Layer.MESSAGES, b"m1", "m1", tokens=300), Block(Layer.MESSAGES, b"m2", "m2", tokens=300)
    calls = [Call(0, Request(MODELS[0], (t, s, m1.with_breakpoint("5m"))), stream="main", output_tokens=10),
             Call(10, Request(MODELS[0], (t, s.with_breakpoint("5m"))), stream="side", output_tokens=10),
             Call(20, Request(MODELS[0], (t, s, m1, m2.with_breakpoint("5m"))), stream="main", output_tokens=10)]
    sheet = PriceBook({MODELS[0]: {"input": 3, "output": 15}})
    got, want = replay_both("anthropic", calls, sheet)
    assert got == want
    assert [o[0].cache_read for o in got] == [0, 0, 2500]


def test_a_fork_child_leaves_its_parents_known_positions_intact():
    """A child builds its view from its parent's (not its own): it must copy the parent's known
    positions, never cut them in place, or the parent's next miss loses the entry it names. Here the
    child parts at block 2 and keeps tools + system alive for 1h; 410 s later the parent reads those
    2,200 tokens and its own m2 entry (5m, written at 0) has expired: idle 410 s > 300 s."""
    def b(name, layer=Layer.MESSAGES, tokens=300):
        return Block(layer, name.encode(), name, tokens=tokens)

    t, s, x = b("t", Layer.TOOLS, 1500), b("s", Layer.SYSTEM, 700), b("x")
    m = [b(f"m{i}") for i in range(4)]
    calls = [Call(0, Request(MODELS[0], (t, s, m[0], m[1], m[2].with_breakpoint("5m"))), stream="main",
                  output_tokens=10),
             Call(10, Request(MODELS[0], (t, s.with_breakpoint("1h"), x.with_breakpoint("5m"))), stream="fork",
                  parent="main", output_tokens=10),
             Call(410, Request(MODELS[0], (t, s, m[0], m[1], m[2], m[3].with_breakpoint("5m"))), stream="main",
                  output_tokens=10)]
    sheet = PriceBook({MODELS[0]: {"input": 3, "output": 15, "cache_read": 0.3, "cache_write_5m": 3.75,
                                   "cache_write_1h": 6}})
    got, want = replay_both("anthropic", calls, sheet)
    assert got == want
    assert [o[0].cache_read for o in got] == [0, 0, 2200]
    assert got[1][1] == "prefix_changed (messages layer, block 2 (x), byte 0)"
    assert got[2][1] == "ttl_expired (entry at m2 idle 410 s > ttl 300 s)"
