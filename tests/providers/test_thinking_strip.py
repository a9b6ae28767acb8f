"""Thinking blocks of earlier turns (A-TH "Thinking block preservation by model", A-PC "Caching with
thinking blocks", 2026-08-21): Opus 4.5+, Sonnet 4.6+, Fable 5, Mythos 5 keep them; earlier Opus and
Sonnet and every Haiku strip them once a user message that is not only tool results arrives, so the
cached prefix ends before the first stripped block."""
import pytest

from prefixsim.core.simulator import Simulator
from prefixsim.model import Call, CauseKind
from prefixsim.wire.anthropic import render_anthropic

CC = {"type": "ephemeral"}
SYSTEM = [{"type": "text", "text": "s" * 20000, "cache_control": CC}]
U1 = {"role": "user", "content": [{"type": "text", "text": "u" * 400}]}
A1 = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t" * 4000, "signature": "sig1"},
                                       {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"c": "ls"}}]}
R1 = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "r" * 1200}]}
A2 = {"role": "assistant", "content": [{"type": "thinking", "thinking": "k" * 4000, "signature": "sig2"},
                                       {"type": "text", "text": "x" * 800}]}
U2 = {"role": "user", "content": [{"type": "text", "text": "v" * 200}]}


def _marked(msg):
    """The message with cache_control on its last block (Claude Code marks the newest message)."""
    content = [dict(p) for p in msg["content"]]
    content[-1]["cache_control"] = CC
    return {**msg, "content": content}


def _bodies(model):
    convo = [[U1], [U1, A1, R1], [U1, A1, R1, A2, U2]]
    return [{"model": model, "system": SYSTEM, "messages": m[:-1] + [_marked(m[-1])]} for m in convo]


def _run(prices, model):
    sim = Simulator("anthropic", tokenizer="approx", prices=prices)
    return [sim.step(Call(10.0 * i, render_anthropic(b))) for i, b in enumerate(_bodies(model))]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"])
def test_older_models_strip_thinking_after_a_new_user_turn(prices, model):
    o1, o2, o3 = _run(prices, model)
    assert o2.usage.cache_read == o1.usage.prompt_tokens       # a tool result keeps the thinking: a hit
    # Request 3 is rendered without either thinking block: it shares only [system, u1] with what was
    # written, so it reads exactly request 1's entry, not request 2's.
    assert o3.usage.cache_read == o1.usage.prompt_tokens < o2.usage.prompt_tokens
    assert o3.cause.kind == CauseKind.PREFIX_CHANGED and "messages[1]" in o3.cause.detail
    assert "thinking blocks stripped" in o3.cause.detail
    # and the stripped blocks are not in its prompt
    assert o3.usage.prompt_tokens < o2.usage.prompt_tokens + 400


@pytest.mark.parametrize("model", ["claude-opus-4-5", "claude-sonnet-4-6", "claude-opus-5"])
def test_newer_models_keep_thinking_and_the_cache(prices, model):
    o1, o2, o3 = _run(prices, model)
    assert o3.usage.cache_read == o2.usage.prompt_tokens
    assert not o3.cause.kind


def test_rendering_strips_only_before_the_last_real_user_turn():
    body = {"model": "claude-sonnet-4-5", "system": SYSTEM,
            "messages": [U1, A1, R1, A2, U2, A1, R1]}      # a new tool-use cycle after u2 keeps its thinking
    paths = [b.path for b in render_anthropic(body).blocks]
    assert "messages[1].content[0]" not in paths and "messages[3].content[0]" not in paths
    assert "messages[5].content[0]" in paths
    # the role moves to the first kept block: the bytes equal those of a message without thinking
    stripped = render_anthropic({**body, "messages": [U1, {"role": "assistant", "content": A1["content"][1:]}]})
    kept = render_anthropic({**body, "messages": [U1, A1, U2]})
    assert [b.data for b in kept.blocks][:3] == [b.data for b in stripped.blocks][:3]


HISTORY_SCENARIO = """\
name: thinking-history
model: {model}
tokenizer: approx
breakpoints: claude_code
pace: 10s
base:
  tools: {{count: 4, size: 400}}
  system: 5000
  history:
    - {{role: user, content: "What's the weather in Paris?"}}
    - role: assistant
      content:
        - {{type: thinking, thinking: "{thinking}", signature: "sig1"}}
        - {{type: tool_use, id: toolu_1, name: Bash, input: {{command: weather paris}}}}
timeline:
  - request: {{label: tool result, tool_use: 0}}
  - request: {{label: new user text}}
"""

GENERATED_SCENARIO = """\
name: thinking-generated
model: {model}
tokenizer: approx
breakpoints: claude_code
pace: 10s
base:
  tools: {{count: 4, size: 400}}
  system: 5000
  history: {{thinking: 600}}
timeline:
  - set_thinking: {{type: enabled, budget_tokens: 2000}}
  - request: {{label: first, tool_use: 80}}
  - request: {{label: tool result, tool_use: 0}}
  - request: {{label: new user text}}
"""


def _scenario(tmp_path, text, model):
    from conftest import PRICE_DATE

    from prefixsim.api import run_file

    p = tmp_path / "t.yaml"
    p.write_text(text.format(model=model, thinking="t" * 3000))
    return {o.call.label: o for o in run_file(str(p), PRICE_DATE).variants[0].outcomes}


@pytest.mark.parametrize("model, strips", [("claude-sonnet-4-5", True), ("claude-haiku-4-5", True),
                                           ("claude-opus-4-5", False)])
def test_scenario_history_with_thinking(tmp_path, model, strips):
    o = _scenario(tmp_path, HISTORY_SCENARIO, model)
    first, second = o["tool result"], o["new user text"]
    if strips:   # the case: the third request reads only up to the system entry
        assert second.read_blocks == 4 + 1          # 4 tools + 1 system block
        assert 0 < second.usage.cache_read < first.usage.prompt_tokens
        assert "thinking blocks stripped" in second.cause.detail
    else:
        assert second.usage.cache_read == first.usage.prompt_tokens


@pytest.mark.parametrize("model, strips", [("claude-sonnet-4-5", True), ("claude-opus-4-5", False)])
def test_scenario_generated_thinking(tmp_path, model, strips):
    from conftest import PRICE_DATE

    from prefixsim.api import run_file

    p = tmp_path / "g.yaml"
    p.write_text(GENERATED_SCENARIO.format(model=model))
    said = run_file(str(p), PRICE_DATE).variants[0].assumptions[f"earlier turns' thinking [{model}]"]
    assert ("keeps the last turn's thinking only" in said) == strips and said.startswith("A-TH 2026-08-21")
    o = _scenario(tmp_path, GENERATED_SCENARIO, model)
    first, second, third = o["first"], o["tool result"], o["new user text"]
    assert first.usage.output_tokens == 600 + 150 + 80           # thinking is billed as output
    assert second.usage.cache_read == first.usage.prompt_tokens   # a tool result keeps the thinking
    assert third.usage.cache_read == (first if strips else second).usage.prompt_tokens


def test_request_log_rendering_reuses_history_without_missing_a_strip():
    """Logs render through History (blocks reused line to line): request 3 must still lose the
    thinking its predecessor kept, exactly as a fresh rendering does."""
    from prefixsim.wire.anthropic import History

    h = History()
    b1, b2, b3 = _bodies("claude-sonnet-4-5")
    for b in (b1, b2, b3):
        via_history = render_anthropic(b, h)
        assert [x.data for x in via_history.blocks] == [x.data for x in render_anthropic(b).blocks]
    assert not any(b'"type":"thinking"' in x.data for x in via_history.blocks)


@pytest.mark.parametrize("change, read, cause, assumption", [
    # a thinking change keeps tools and system (tables.THINKING_LAYER), and the run says it is unconfirmed
    ("set_thinking: {type: enabled, budget_tokens: 4000}", "tools+system", "messages-layer parameters changed",
     "thinking change [claude-opus-4-5]"),
])
def test_thinking_and_effort_changes_on_an_effort_model_are_named_and_assumed(tmp_path, change, read, cause,
                                                                              assumption):
    from conftest import PRICE_DATE

    from prefixsim.api import run_file

    p = tmp_path / "t.yaml"
    p.write_text("name: t\nmodel: claude-opus-4-5\ntokenizer: approx\nbreakpoints: [tools, system, last_message]\n"
                 "base: {tools: {count: 12, size: 400}, system: 2000, history: {turns: 3}}\n"
                 f"timeline: [request: 2, {change}, request: 1]\n")
    v = run_file(str(p), PRICE_DATE).variants[0]
    last = v.outcomes[-1]
    from prefixsim.model import Layer
    ahead = sum(1 for b in last.call.request.blocks if b.layer in (Layer.TOOLS, Layer.SYSTEM))
    assert ahead == 13 and last.read_blocks == (ahead if read == "tools+system" else read)
    assert last.usage.cache_read > 6000
    assert cause in last.cause.detail
    assert "UNCONFIRMED" in v.assumptions[assumption]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-5"])
def test_scenario_layout_is_incremental_and_equals_a_fresh_rendering(model):
    """The builder lays messages out incrementally; with thinking stripped and un-stripped as the
    cut moves, it must always equal rendering the same messages afresh."""
    from prefixsim.scenario.builder import Conv

    conv = Conv(model, [], [], [])
    seq = [U1, A1, R1, A2, U2, A1, R1, A2, U2, A2]
    for k, m in enumerate(seq):
        conv.add_message(m["role"], m["content"])
        if k == 5:
            conv = conv.fork()                      # a fork shares the laid-out blocks
        _, _, got = conv.blocks()
        want = render_anthropic({"model": model, "messages": seq[:k + 1]}).blocks
        assert [b.data for b in got] == [b.data for b in want], k
    if model == "claude-opus-4-5":
        conv.model = "claude-sonnet-4-5"            # a switch to a stripping model strips at once
        _, _, got = conv.blocks()
        want = render_anthropic({"model": "claude-sonnet-4-5", "messages": seq}).blocks
        assert [b.data for b in got] == [b.data for b in want]
