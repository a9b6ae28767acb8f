"""The runner's bookkeeping and explanations pinned with exact values (issue 22): call order, cache
namespaces, the time to first token, and each way a prefix can part from the previous request's."""
import pytest
from conftest import make_request, split

from prefixsim.core.simulator import Simulator
from prefixsim.model import Block, Call, CauseKind, Layer, Request


@pytest.fixture
def sim(prices):
    return Simulator("anthropic", tokenizer="approx", prices=prices)


def conv(third: bytes, path="b3", params=(b"", b"", b""), model="claude-sonnet-4-5", tools=b"block-1"):
    """tools 2,000 + system 3,000 (5m breakpoint) + a 500-token message (5m breakpoint)."""
    return Request(model, (Block(Layer.TOOLS, tools, "b1", tokens=2000),
                           Block(Layer.SYSTEM, b"block-2", "b2", "5m", tokens=3000),
                           Block(Layer.MESSAGES, third, path, "5m", tokens=500)), layer_params=params)


def test_a_changed_message_names_its_layer_block_path_and_first_differing_byte(sim):
    sim.step(Call(0, conv(b"hello world")))
    o = sim.step(Call(10, conv(b"hello there")))
    assert split(o) == (5000, 0, 500, 0) and o.read_blocks == 2
    assert (o.cause.kind, o.cause.detail) == (CauseKind.PREFIX_CHANGED, "messages layer, block 2 (b3), byte 6")
    sim.step(Call(20, conv(b"abc", path=""), stream="u"))
    o = sim.step(Call(30, conv(b"abd", path=""), stream="u"))
    assert o.cause.detail == "messages layer, block 2, byte 2"
    sim.step(Call(40, conv(b"abc"), stream="v"))
    o = sim.step(Call(50, conv(b"abcdef"), stream="v"))          # the new text extends the old
    assert o.cause.detail == "messages layer, block 2 (b3), byte 3"


def test_changed_layer_parameters_are_named(sim):
    sim.step(Call(0, conv(b"m")))
    o = sim.step(Call(10, conv(b"m", params=(b"", b"", b"tool_choice=auto"))))
    assert split(o) == (5000, 0, 500, 0)
    assert o.cause.detail == "messages layer, block 2 (b3): messages-layer parameters changed"


def test_a_change_ahead_of_the_tools_is_the_effort(sim):
    sim.step(Call(0, conv(b"m", model="claude-opus-4-5")))
    o = sim.step(Call(10, conv(b"m", model="claude-opus-4-5", params=(b"effort=low", b"", b""))))
    assert split(o) == (0, 0, 5500, 0)
    assert o.cause.detail == "tools layer, block 0 (b1): effort changed (rendered ahead of the tools on claude-opus-4-5)"


def test_a_source_event_names_the_parting(sim):
    sim.step(Call(0, conv(b"hello world")))
    o = sim.step(Call(10, conv(b"hello there"), event=CauseKind.COMPACTION))
    assert (o.cause.kind, o.cause.detail) == (CauseKind.COMPACTION, "messages layer, block 2 (b3), byte 6")
    cold = sim.step(Call(20, conv(b"x", tools=b"other"), stream="new", event=CauseKind.COMPACTION))
    assert (cold.cause.kind, cold.cause.detail) == (CauseKind.COMPACTION, "")


def test_dated_and_aliased_model_ids_share_a_cache_and_workspaces_do_not(sim):
    sim.step(Call(0, conv(b"m", model="claude-sonnet-4-5-20250929")))
    o = sim.step(Call(10, conv(b"m", model="claude-sonnet-4-5")))
    assert split(o) == (5500, 0, 0, 0) and o.cause.kind == CauseKind.HIT
    r = conv(b"m")
    other = Request(r.model, r.blocks, workspace="team-b")
    o = sim.step(Call(20, other, stream="b"))
    assert split(o) == (0, 0, 5500, 0) and o.cause.kind == CauseKind.COLD


def test_calls_run_in_time_order_ties_in_the_order_given(sim):
    a = make_request([2000, 3000], {2: "5m"})
    b = make_request([2000, 3000], {2: "5m"}, tag=b"b")
    out = sim.run([Call(5, a, label="second"), Call(0, b, label="first"), Call(5, b, label="third", stream="x")])
    assert [o.call.label for o in out] == ["first", "second", "third"]
    assert [o.usage.cache_read for o in out] == [0, 0, 5000]


def test_the_default_time_to_first_token_is_one_second(prices):
    s = Simulator("anthropic", tokenizer="approx", prices=prices)
    assert s.ttft == 1.0
    a = make_request([2000, 3000], {2: "5m"})
    s.step(Call(0, a))
    assert s.step(Call(0.999, a, stream="b")).cause.kind == CauseKind.NOT_YET_AVAILABLE
    assert s.step(Call(1.0, a, stream="c")).usage.cache_read == 5000
    slow = Simulator("anthropic", tokenizer="approx", prices=prices, ttft=3.0)
    slow.step(Call(0, a))
    assert slow.step(Call(2, a, stream="b")).usage.cache_read == 0


def test_an_empty_request_has_no_cause(sim):
    o = sim.step(Call(0, Request("claude-sonnet-4-5", ())))
    assert split(o) == (0, 0, 0, 0) and o.cause.kind == CauseKind.HIT and (o.read_blocks, o.n_blocks) == (0, 0)


def test_an_entry_past_its_maximum_lifetime_names_both_times(prices):
    from prefixsim.providers.registry import get_policy

    s = Simulator("openai", tokenizer="approx", policy=get_policy("openai"), prices=prices)
    r = Request("gpt-4o", (Block(Layer.TOOLS, b"t", "tools[0]", tokens=500),
                           Block(Layer.SYSTEM, b"s", "messages[0]", tokens=600)))
    for t in range(0, 3600, 240):                                   # reads every 240 s keep it alive
        s.step(Call(t, r))
    o = s.step(Call(3601, r))                                        # idle 241 s, but 3,601 s after the write
    assert split(o) == (0, 0, 0, 1100)
    assert str(o.cause) == "ttl_expired (entry at messages[0] written 3601 s ago, past its 3600 s maximum lifetime)"


def test_a_common_prefix_unit_does_not_hide_where_the_next_request_parts(prices):
    # DS kv_cache: the second request persists the common prefix of the two as a unit of its own (no
    # block position); the stream's next request, which changes the system prompt, still parts at it.
    from prefixsim.providers.registry import get_policy

    s = Simulator("deepseek", tokenizer="approx", policy=get_policy("deepseek"), prices=prices)
    tools = Block(Layer.TOOLS, b"T" * 200, "tools[0]")                       # 50 tokens
    system = Block(Layer.SYSTEM, b"S" * 400, "messages[0]")                  # 100 tokens

    def req(sys_block, text):
        return Request("deepseek-chat", (tools, sys_block, Block(Layer.MESSAGES, text, "messages[1]")))

    s.step(Call(0, req(system, b"D" * 18000 + b"B" * 40)))
    second = s.step(Call(10, req(system, b"D" * 18000 + b"C" * 40)))
    assert second.usage.cache_read == 0                      # no unit matched whole yet
    o = s.step(Call(20, req(Block(Layer.SYSTEM, b"R" * 400, "messages[0]"), b"D" * 18000 + b"C" * 40)))
    assert o.usage.cache_read == 0
    assert (o.cause.kind, o.cause.detail) == (CauseKind.PREFIX_CHANGED, "system layer, block 1 (messages[0]), byte 0")


def test_the_maximum_lifetime_counts_from_the_write_not_from_zero(prices):
    from prefixsim.providers.registry import get_policy

    s = Simulator("openai", tokenizer="approx", policy=get_policy("openai"), prices=prices)
    r = Request("gpt-4o", (Block(Layer.TOOLS, b"t", "tools[0]", tokens=500),
                           Block(Layer.SYSTEM, b"s", "messages[0]", tokens=600)))
    for t in range(100, 3700, 240):                                 # written at t=100, read every 240 s
        s.step(Call(t, r))
    o = s.step(Call(3701, r))
    assert str(o.cause) == "ttl_expired (entry at messages[0] written 3601 s ago, past its 3600 s maximum lifetime)"


def test_the_defaults_are_anthropic_and_cl100k_base():
    s = Simulator()
    assert (s.provider, s.policy.name, s.ttft, s.store.capacity) == ("anthropic", "anthropic", 1.0, None)
    o = s.step(Call(0, Request("claude-sonnet-4-5", (Block(Layer.MESSAGES, b"hello world", "messages[0]"),))))
    assert o.usage.input_tokens == 2                  # cl100k_base: "hello", " world"


def test_a_one_token_request_that_reads_nothing_is_cold(sim):
    o = sim.step(Call(0, Request("claude-sonnet-4-5", (Block(Layer.MESSAGES, b"x", "m", tokens=1),))))
    assert split(o) == (0, 0, 0, 1)
    assert (o.cause.kind, o.cause.detail) == (CauseKind.COLD, "no cache_control breakpoint")


@pytest.mark.parametrize("provider,shared", [("anthropic", False), ("bedrock", True)])
def test_bedrock_shares_entries_across_workspaces(prices, provider, shared):
    s = Simulator(provider, tokenizer="approx", prices=prices)
    r = make_request([2000, 3000], {2: "5m"})                     # one breakpoint, 5,000 tokens
    s.step(Call(0, r))
    o = s.step(Call(10, Request(r.model, r.blocks, workspace="team-b"), stream="b"))
    assert o.usage.cache_read == (5000 if shared else 0)          # A-PC: Bedrock is not per workspace
