"""Real Messages API recordings (tests/data/anthropic-api): the predicted split has the shape of
the observed usage."""
from conftest import data_file

from prefixsim.core.simulator import Simulator
from prefixsim.model import Call
from prefixsim.wire.anthropic import render_anthropic


def interactions(path):
    from ruamel.yaml import YAML
    doc = YAML(typ="safe", pure=True).load(path.read_text())
    out = []
    for it in doc["interactions"]:
        body = it["request"].get("parsed_body")
        resp = it["response"].get("parsed_body") or {}
        if body and "messages" in body and "usage" in resp:
            out.append((body, resp["usage"]))
    return out


def test_identical_re_request_reads_everything(prices):
    path = data_file("anthropic-api", "test_inline_system_prompt_cache_prefix_is_reused.yaml")
    s = Simulator("anthropic", tokenizer="cl100k_base", prices=prices)
    (b1, u1), (b2, u2) = interactions(path)[:2]
    o1, o2 = s.step(Call(0, render_anthropic(b1))), s.step(Call(10, render_anthropic(b2)))
    assert u1["cache_creation_input_tokens"] > 0 and u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
    assert o1.usage.cache_read == 0 and o1.usage.cache_creation > 0
    assert o2.usage.cache_read == o1.usage.cache_creation and o2.usage.cache_creation == 0


def test_follow_up_turn_reads_the_earlier_prefix_and_writes_the_tail(prices):
    path = data_file("anthropic-api", "test_anthropic_cache_real_api.yaml")
    s = Simulator("anthropic", tokenizer="cl100k_base", prices=prices)
    (b1, u1), (b2, u2) = interactions(path)[:2]
    o1, o2 = s.step(Call(0, render_anthropic(b1))), s.step(Call(10, render_anthropic(b2)))
    # Observed: the follow-up reads 1,111 (the first prompt) and writes only the 418-token tail.
    assert u2["cache_read_input_tokens"] == u1["cache_read_input_tokens"] + u1["cache_creation_input_tokens"]
    assert o2.usage.cache_read == o1.usage.prompt_tokens - o1.usage.input_tokens
    assert 0 < o2.usage.cache_creation < o2.usage.cache_read
    ratio = o2.usage.cache_creation / o2.usage.cache_read
    observed = u2["cache_creation_input_tokens"] / u2["cache_read_input_tokens"]
    assert abs(ratio - observed) < 0.15
