import json

import pytest

from prefixsim.errors import UserError
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting

SYSTEM = "You are a careful assistant. " * 300


def body(*turns, cache="auto"):
    b = {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": SYSTEM,
         "messages": [{"role": r, "content": t} for r, t in turns]}
    if cache == "auto":
        b["cache_control"] = {"type": "ephemeral"}
    return b


def usage(read, write, uncached):
    return {"input_tokens": uncached, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
            "output_tokens": 10}


def test_anthropic_jsonl_with_usage_is_scaled_to_the_observed_size(tmp_path):
    p = tmp_path / "calls.jsonl"
    lines = [{"request": body(("user", "hi")), "response": {"usage": usage(0, 1800, 3)}},
             {"request": body(("user", "hi"), ("assistant", "hello"), ("user", "again")),
              "usage": usage(1800, 20, 3), "timestamp": "2026-01-05T10:00:30Z"}]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect(p) == "anthropic"
    recs = load(p)
    assert [sum(b.tokens for b in r.call.request.blocks) for r in recs] == [1803, 1823]
    assert recs[0].observed.cache_creation == 1800 and recs[0].output_final


def test_bare_bodies_and_errors(tmp_path):
    p = tmp_path / "bodies.jsonl"
    p.write_text(json.dumps(body(("user", "hi"))) + "\n" + json.dumps({"nope": 1}) + "\n")
    with collecting(strict=True), pytest.raises(UserError) as e:
        load(p, "anthropic")
    assert e.value.line == 2
    with collecting() as found:   # lenient (the default): the line is skipped and named
        assert len(load(p, "anthropic")) == 1
    assert [x.line for x in found.skipped] == [2]


def test_vcr_cassette(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("""interactions:
- request:
    method: POST
    uri: https://api.anthropic.com/v1/messages/count_tokens
    parsed_body: {model: claude-sonnet-4-5, messages: [{role: user, content: hi}]}
  response:
    parsed_body: {input_tokens: 12}
- request:
    method: POST
    uri: https://api.anthropic.com/v1/messages
    parsed_body:
      model: claude-sonnet-4-5
      max_tokens: 5
      cache_control: {type: ephemeral}
      messages: [{role: user, content: hi}]
  response:
    parsed_body:
      usage: {input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2}
""")
    recs = load(p)
    assert len(recs) == 1 and recs[0].observed.input_tokens == 12


def test_openai_chat_and_responses_logs(tmp_path):
    p = tmp_path / "oa.jsonl"
    chat = {"model": "gpt-4o", "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}]}
    p.write_text(json.dumps({"request": chat, "response": {"usage": {
        "prompt_tokens": 1500, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 1280}}}}) + "\n"
        + json.dumps({"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}]}) + "\n")
    assert detect(p) == "openai"
    recs = load(p)
    assert recs[0].observed.cache_read == 1280 and recs[0].observed.input_tokens == 220
    assert recs[1].observed is None
