"""Rendering is byte-exact and order-preserving; parameters enter the chain at their layer."""
import pytest

from prefixsim.core.chain import chain, namespace_digest
from prefixsim.core.simulator import Simulator
from prefixsim.errors import RequestError
from prefixsim.model import Call, CauseKind, Layer
from prefixsim.wire.anthropic import render_anthropic

TOOL = {"name": "Bash", "description": "Run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}}}
TOOL_REORDERED = {"name": "Bash", "description": "Run a command",
                  "input_schema": {"type": "object", "properties": {"timeout": {"type": "number"}, "command": {"type": "string"}}}}


def body(**kw):
    b = {"model": "claude-sonnet-4-5", "tools": [TOOL], "system": "You are terse.",
         "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                      {"role": "user", "content": [{"type": "text", "text": "more", "cache_control": {"type": "ephemeral"}}]}]}
    b.update(kw)
    return b


def digests(b):
    r = render_anthropic(b)
    return chain(namespace_digest("anthropic", r.model), r)


def test_blocks_in_tools_system_messages_order_one_per_unit():
    r = render_anthropic(body())
    assert [b.layer for b in r.blocks] == [Layer.TOOLS, Layer.SYSTEM, Layer.MESSAGES, Layer.MESSAGES, Layer.MESSAGES]
    assert [b.path for b in r.blocks] == ["tools[0]", "system[0]", "messages[0].content[0]",
                                          "messages[1].content[0]", "messages[2].content[0]"]
    assert r.blocks[-1].breakpoint == "5m"
    assert r.blocks[0].data == b'{"name":"Bash","description":"Run a command","input_schema":{"type":"object",' \
                               b'"properties":{"command":{"type":"string"},"timeout":{"type":"number"}}}}'


def test_schema_key_order_is_a_different_prefix():
    a, b = digests(body()), digests(body(tools=[TOOL_REORDERED]))
    assert a[0] != b[0] and all(x != y for x, y in zip(a, b))


def test_cache_control_marker_is_not_part_of_the_prefix():
    moved = body()
    moved["messages"][2]["content"][0].pop("cache_control")
    moved["messages"][1]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert digests(body()) == digests(moved)


def test_string_system_equals_one_text_block():
    assert digests(body()) == digests(body(system=[{"type": "text", "text": "You are terse."}]))


def test_role_is_part_of_the_first_block_of_a_message():
    a = body(messages=[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])
    b = body(messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert digests(a)[-1] != digests(b)[-1]


@pytest.mark.parametrize("change,survives", [
    ({"tool_choice": {"type": "any"}}, 2),           # tools + system survive, messages do not
    ({"thinking": {"type": "enabled", "budget_tokens": 2000}}, 2),
    ({"speed": "fast"}, 1),                           # tools survive, system and messages do not
    ({"tools": [TOOL, {"type": "web_search_20250305", "name": "web_search"}]}, 1),
])
def test_parameters_enter_the_chain_at_their_layer(change, survives):
    a, b = digests(body()), digests(body(**change))
    same = sum(1 for x, y in zip(a, b) if x == y)
    assert same == survives


def test_image_anywhere_invalidates_the_messages_layer():
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    b = body()
    b["messages"] = b["messages"] + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": [img]}]
    a, c = digests(body()), digests(b)
    assert a[:2] == c[:2] and a[2] != c[2]


def test_bad_bodies_are_request_errors():
    with pytest.raises(RequestError):
        render_anthropic({"messages": []})
    with pytest.raises(RequestError, match="ttl"):
        render_anthropic(body(cache_control={"type": "ephemeral", "ttl": "2h"}))


def test_appended_turn_reads_previous_prompt(prices):
    s = Simulator("anthropic", tokenizer="approx", prices=prices)
    pad = {"type": "text", "text": "x" * 8000}
    b1 = body(system=[pad])
    b2 = body(system=[pad])
    b2["messages"] = [dict(m) for m in b1["messages"]]
    b2["messages"][2] = {"role": "user", "content": [{"type": "text", "text": "more"}]}
    b2["messages"] += [{"role": "assistant", "content": "sure"},
                       {"role": "user", "content": [{"type": "text", "text": "again", "cache_control": {"type": "ephemeral"}}]}]
    o1 = s.step(Call(0, render_anthropic(b1)))
    o2 = s.step(Call(5, render_anthropic(b2)))
    assert o1.usage.cache_read == 0 and o1.usage.cache_creation > 2000
    assert o2.usage.cache_read == o1.usage.cache_read + o1.usage.cache_creation
    assert o2.cause.kind == CauseKind.HIT


def _same(a, b):
    return sum(1 for x, y in zip(digests(a), digests(b)) if x == y)


@pytest.mark.parametrize("model", ["claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-5"])
def test_effort_set_to_the_default_is_the_same_prompt(model):
    """A-EF: effort 'high' is the default and the same as omitting it; A-PC: it does not invalidate."""
    plain = body(model=model)
    assert digests(body(model=model, output_config={"effort": "high"})) == digests(plain)
    # another key of output_config stays a messages-layer parameter of its own
    fmt = {"format": {"type": "json_schema", "schema": {"type": "object"}}}
    assert _same(plain, body(model=model, output_config={"effort": "high", **fmt})) == 2
    assert digests(body(model=model, output_config={"effort": "high", **fmt})) == \
        digests(body(model=model, output_config=fmt))


@pytest.mark.parametrize("model, change, survives", [
    # models that take effort: an effort change recomputes the whole request (CC-PC)
    ("claude-opus-4-6", {"output_config": {"effort": "low"}}, 0),
    ("claude-opus-4-5", {"output_config": {"effort": "medium"}}, 0),
    # a thinking change keeps tools and system on every model (tables.THINKING_LAYER: A-PC up to
    # 2026-07-23; 4 of 4 switches on Opus 4.5 / 4.6 in public transcripts read them)
    ("claude-opus-4-5", {"thinking": {"type": "enabled", "budget_tokens": 2000}}, 2),
    ("claude-sonnet-4-6", {"thinking": {"type": "adaptive"}}, 2),
    ("claude-opus-4-6", {"thinking": {"type": "adaptive"}, "output_config": {"effort": "low"}}, 0),
    ("claude-sonnet-4-5", {"thinking": {"type": "enabled", "budget_tokens": 2000}}, 2),
    ("claude-haiku-4-5", {"thinking": {"type": "enabled", "budget_tokens": 2000}}, 2),
])
def test_thinking_and_effort_invalidate_per_model(model, change, survives):
    assert _same(body(model=model), body(model=model, **change)) == survives
