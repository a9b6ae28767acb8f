"""OpenAI-compatible endpoints of routers and other providers (docs/rules.md#other-providers-behind-
openai-compatible-endpoints): real recordings in tests/data/router-api, each request replayed under the
rules of the provider that served it, and detection that never names the wrong format."""
import json

import pytest
from conftest import DATA, cli_run

from prefixsim.cli import main
from prefixsim.errors import UserError
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.routers import provider_of

ROUTER = DATA / "router-api"
CLAUDE = ROUTER / "test_openrouter_cache_messages_anthropic_real_api.yaml"
GEMINI = ROUTER / "test_openrouter_cache_instructions_gemini_real_api.yaml"
COHERE = ROUTER / "test_request_usage_with_cached_tokens.yaml"
MISTRAL = ROUTER / "test_tool_choice_matrix[none-mistral].yaml"
OPENROUTER = "https://openrouter.ai/api/v1/chat/completions"


def test_openrouter_claude_replays_under_anthropic_rules_exactly():
    # anthropic/claude-sonnet-4.6 through OpenRouter (upstream "Anthropic"): the cache_control marker on
    # the user's text part is an Anthropic breakpoint. Was: "unknown OpenAI model", no requests replayed.
    assert detect(CLAUDE) == "openai"
    rows = replay(load(CLAUDE)).rows
    assert [r.provider for r in rows] == ["anthropic", "anthropic"]
    first, second = rows
    assert (first.observed.cache_write_5m, first.predicted.cache_write_5m) == (3211, 3211)
    assert first.observed.input_tokens == first.predicted.input_tokens == 3   # the prompt's closing tokens
    assert (second.observed.cache_read, second.predicted.cache_read) == (3211, 3211)
    assert (second.observed.cache_write_5m, second.predicted.cache_write_5m) == (115, 115)


def test_openrouter_gemini_tokens_written_and_read_at_once_count_once():
    # google/gemini-2.5-flash through OpenRouter reports 2,161 written and 2,161 read of 2,168 prompt
    # tokens: a cache created and read by the same request. They count once, as read (was: "usage fields
    # contradict each other" had the router been read at all). The marked system prompt is read by
    # reference, without its message's 3 frame tokens.
    rows = replay(load(GEMINI)).rows
    assert {r.provider for r in rows} == {"gemini"}
    first = rows[0].observed
    assert (first.cache_read, first.cache_write_5m, first.input_tokens) == (2161, 0, 7)
    assert [(r.observed.cache_read, r.predicted.cache_read) for r in rows] == [(2161, 2161), (2161, 2161)]
    assert [r.predicted.input_tokens for r in rows] == [r.observed.input_tokens for r in rows] == [7, 6]


def test_mistral_num_cached_tokens_are_read():
    # api.mistral.ai reports its reads as usage.num_cached_tokens: 9 of a 10-token prompt.
    rows = replay(load(MISTRAL)).rows
    assert [(r.provider, r.observed.cache_read, r.observed.input_tokens) for r in rows] == [("mistral", 9, 1)]


def test_a_cohere_recording_is_cohere_not_anthropic():
    # Was detected as Anthropic (a YAML cassette whose calls were not told apart was taken for Messages)
    # and then refused: "unknown Anthropic model 'command-r7b-12-2024'".
    assert detect(COHERE) == "cohere"
    rows = replay(load(COHERE)).rows
    assert [(r.provider, r.model) for r in rows] == [("cohere", "command-r7b-12-2024")]
    obs = rows[0].observed
    assert (obs.prompt_tokens, obs.cache_read, obs.output_tokens) == (2935, 2928, 4)


@pytest.mark.parametrize("model,uri,response,provider", [
    ("anthropic/claude-sonnet-4.6", OPENROUTER, {"provider": "Anthropic"}, "anthropic"),
    ("anthropic/claude-sonnet-4.6", OPENROUTER, {"provider": "Amazon Bedrock"}, "bedrock"),
    ("anthropic/claude-sonnet-4.6", OPENROUTER, None, "anthropic"),
    ("google/gemini-2.5-flash", OPENROUTER, {"provider": "Google AI Studio"}, "gemini"),
    ("openai/gpt-5", OPENROUTER, None, "openai"),
    ("deepseek/deepseek-r1", OPENROUTER, None, "deepseek"),
    ("moonshotai/kimi-k2", OPENROUTER, None, "moonshot"),
    ("moonshotai/kimi-k2", OPENROUTER, {"provider": "Groq"}, "groq"),
    ("moonshotai/kimi-k2", OPENROUTER, {"provider": "SomeNewHost"}, "other"),
    ("openai/gpt-oss-120b", OPENROUTER, {"provider": "OpenAI"}, "other"),
    ("openai/gpt-oss-120b", "https://api.groq.com/openai/v1/chat/completions", None, "groq"),
    ("llama-3.3-70b-versatile", "https://api.groq.com/openai/v1/chat/completions", None, "groq"),
    ("mistral-large-latest", "https://api.mistral.ai/v1/chat/completions", None, "mistral"),
    ("grok-4", "https://api.x.ai/v1/chat/completions", None, "xai"),
    ("glm-4.6", "https://api.z.ai/api/paas/v4/chat/completions", None, "zai"),
    ("kimi-k2-0905-preview", "https://api.moonshot.ai/v1/chat/completions", None, "moonshot"),
    ("gpt-4o", "https://me.openai.azure.com/openai/deployments/d/chat/completions", None, "openai"),
    ("llama-3.3-70b", "", None, "other"),
    ("gpt-4o", "", None, "openai"),
])
def test_the_provider_is_the_host_the_upstream_or_the_vendor(model, uri, response, provider):
    assert provider_of(model, uri, response) == provider


def _log(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return p


def _groq_line(k, cached=0):
    msgs = [{"role": "system", "content": "You review code. " * 400}, {"role": "user", "content": f"diff {k}"}]
    return {"id": f"g{k}", "uri": "https://api.groq.com/openai/v1/chat/completions",
            "request": {"model": "moonshotai/kimi-k2-instruct-0905", "messages": msgs},
            "response": {"usage": {"prompt_tokens": 1210, "completion_tokens": 3,
                                   "prompt_tokens_details": {"cached_tokens": cached}}}}


def test_a_malformed_line_in_a_router_log_is_skipped_and_named(tmp_path, capsys):
    p = _log(tmp_path, "groq.jsonl", [_groq_line(0), "{not json", _groq_line(1, 1024)])
    code, out, err = cli_run(["replay", str(p), "--format", "json"], capsys)
    assert code == 0
    assert f"{p}:2: skipped" in err
    rows = json.loads(out)["requests"]
    assert [(r["provider"], r["observed"]["cache_read_input_tokens"]) for r in rows] == [("groq", 0), ("groq", 1024)]


def test_a_body_no_reader_places_is_refused_naming_the_formats(tmp_path, capsys):
    # model and messages alone are no evidence of Anthropic's Messages API (was: read as Anthropic's and
    # refused line by line as "unknown Anthropic model").
    p = _log(tmp_path, "bare.jsonl", [{"model": "command-r", "messages": [{"role": "user", "content": "hi"}]}])
    with pytest.raises(UserError) as e:
        detect(p)
    assert "known: claude-code, anthropic, openai, deepseek, cohere, gemini" in str(e.value)
    cassette = tmp_path / "embed.yaml"
    cassette.write_text("interactions:\n- request:\n    method: POST\n    uri: https://api.example.com/v1/embed\n"
                        "    body: '{\"texts\": [\"a\"]}'\n  response:\n    status: {code: 200}\n    body: {string: '{}'}\n")
    code, _, err = cli_run(["replay", str(cassette)], capsys)
    assert code == 2
    assert "no call of a known format (anthropic, openai, deepseek, cohere, gemini, bedrock, realtime)" in err
    assert "https://api.example.com/v1/embed" in err


def test_a_wrong_source_is_refused_naming_the_format_the_file_looks_like(capsys):
    code, _, err = cli_run(["replay", "--source", "anthropic", str(COHERE)], capsys)
    assert code == 2 and "--source anthropic, but the file looks like cohere" in err
    code, _, err = cli_run(["replay", "--source", "gemini", str(CLAUDE)], capsys)
    assert code == 2 and "looks like openai" in err
    # one reader: --source among openai, deepseek and cohere chooses the rules
    code, _, _ = cli_run(["replay", "--source", "openai", str(COHERE)], capsys)
    assert code == 0


def test_source_help_lists_every_format_one_line_each(capsys):
    from prefixsim.commands.replay import SOURCES
    from prefixsim.sources import FORMAT_LINES, FORMATS

    assert tuple(SOURCES) == FORMATS and SOURCES == FORMAT_LINES
    _, out, _ = cli_run(["replay", "--help"], capsys)
    for name, line in SOURCES.items():
        assert f"{name}: {line}" in out


def test_undocumented_rules_are_named_in_causes_and_notes(tmp_path, capsys):
    small = {"id": "s", "uri": "https://api.groq.com/openai/v1/chat/completions",
             "request": {"model": "llama-3.3-70b-versatile", "messages": [{"role": "user", "content": "hi"}]},
             "response": {"usage": {"prompt_tokens": 36, "completion_tokens": 3}}}
    p = _log(tmp_path, "small.jsonl", [small])
    code, out, _ = cli_run(["replay", str(p), "--format", "json"], capsys)
    assert code == 0
    row, = json.loads(out)["requests"]
    assert (row["cause"], row["cause_detail"]) == ("below_minimum", "36 tokens; minimum undocumented: stated default")
    code, out, _ = cli_run(["replay", str(p)], capsys)
    assert "Rules undocumented" in out and "groq llama-3.3-70b-versatile (minimum undocumented)" in " ".join(out.split())


def test_a_streamed_call_tagged_in_its_uri_is_a_call():
    # pydantic-ai records streamed calls as `.../chat/completions#stream` (was: passed over, "no requests found")
    from prefixsim.sources.openai_cassette import is_call

    assert is_call({}, "https://api.mistral.ai/v1/chat/completions#stream", "POST")
    assert not is_call({}, "https://api.mistral.ai/v1/embeddings#stream", "POST")


def _costs(path):
    from ruamel.yaml import YAML

    doc = YAML(typ="safe", pure=True).load(path.read_text())
    out = []
    for inter in doc["interactions"]:
        body = inter["response"].get("parsed_body") or json.loads(inter["response"]["body"]["string"])
        if isinstance(body, dict) and isinstance(body.get("usage"), dict) and "cost" in body["usage"]:
            out.append(body["usage"]["cost"])
    return out


@pytest.mark.parametrize("name", ["test_openrouter_cache_messages_anthropic_real_api.yaml",
                                  "test_openrouter_cache_instructions_gemini_real_api.yaml"])
def test_openrouter_charges_are_shown_beside_the_computed_price(name, capsys):
    # issue 32: OpenRouter's own `usage.cost` was not read; now each row carries it and the run sums it
    # beside the price of the same observed tokens (through OpenRouter, Gemini 2.5 Flash was billed
    # $0.000811 where genai-prices gives $0.000631)
    path = ROUTER / name
    costs = _costs(path)
    rows = [r for r in replay(load(path)).rows if r.billed_usd is not None]
    assert costs and [float(r.billed_usd) for r in rows] == costs
    with pytest.raises(SystemExit):
        main(["replay", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    billed = doc["summary"]["billed"]
    assert billed["requests"] == len(costs) and billed["cost_billed_usd"] == pytest.approx(sum(costs), abs=1e-6)   # JSON money: 6 places
    assert [r.get("cost_billed_usd") for r in doc["requests"] if "cost_billed_usd" in r] == pytest.approx(costs, abs=1e-6)


def test_an_openrouter_cost_that_is_no_amount_is_a_named_skipped_line():
    from prefixsim.sources.routers import billed

    assert billed({"cost": 0.0015}, "https://openrouter.ai/api/v1/chat/completions") == __import__("decimal").Decimal("0.0015")
    assert billed({"cost": 0.0015}, "https://api.openai.com/v1/chat/completions") is None   # only OpenRouter's
    for bad in (-1, "0.1", float("nan"), True):
        with pytest.raises(UserError, match="usage field cost is not an amount in USD"):
            billed({"cost": bad}, "https://openrouter.ai/api/v1/chat/completions")


def _openrouter_line(k, usage_extra=None, response_extra=None):
    msgs = [{"role": "system", "content": "You review code. " * 400}, {"role": "user", "content": f"diff {k}"}]
    usage = {"prompt_tokens": 2410, "completion_tokens": 3, "cost": 0.0021,
             "prompt_tokens_details": {"cached_tokens": 2400 if k else 0, "cache_write_tokens": 0 if k else 2400}}
    return {"id": f"or{k}", "uri": OPENROUTER, "timestamp": f"2026-11-01T10:00:{k * 10:02d}Z",
            "request": {"model": "anthropic/claude-sonnet-4.6", "messages": msgs},
            "response": {"provider": "Anthropic", "usage": {**usage, **(usage_extra or {})}, **(response_extra or {})}}


def test_openrouter_cache_discount_is_shown_beside_the_billed_cost(tmp_path, capsys):
    # issue 32: OpenRouter's `cache_discount` (OR-PC: what the response saved on cache usage, USD;
    # negative for Anthropic's writes) was not read; it is read from the usage, its cost_details or
    # the response body, and shown where the billed cost is
    from decimal import Decimal

    p = _log(tmp_path, "openrouter.jsonl", [
        _openrouter_line(0, {"cache_discount": -0.0031}),
        _openrouter_line(1, {"cost_details": {"upstream_inference_cost": 0.0021, "cache_discount": 0.0041}}),
        _openrouter_line(2, response_extra={"cache_discount": 0.002}),
        _openrouter_line(3, {"cache_discount": None})])
    rows = replay(load(p)).rows
    assert [r.cache_discount_usd for r in rows] == [Decimal("-0.0031"), Decimal("0.0041"), Decimal("0.002"), None]
    with pytest.raises(SystemExit):
        main(["replay", str(p), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [r.get("cache_discount_usd") for r in doc["requests"]] == [-0.0031, 0.0041, 0.002, None]
    billed = doc["summary"]["billed"]
    assert (billed["requests"], billed["cache_discount_requests"]) == (4, 3)
    assert billed["cache_discount_usd"] == pytest.approx(0.003, abs=1e-9)
    code, stdout, _ = cli_run(["replay", str(p)], capsys)
    out = " ".join(stdout.split())
    assert code == 0
    assert "OpenRouter's cache_discount (what caching saved it says, negative where writes cost more than input) " \
           "for 3 requests: $0.0030." in out


def test_an_openrouter_cache_discount_that_is_no_amount_is_a_named_skipped_line(tmp_path):
    from prefixsim.sources.problems import collecting

    p = _log(tmp_path, "openrouter.jsonl", [_openrouter_line(0), _openrouter_line(1, {"cache_discount": "0.1"}),
                                            _openrouter_line(2, {"cache_discount": float("inf")})])
    with collecting() as found:
        assert [r.request_id for r in load(p)] == ["or0"]
    named = [str(s) for s in found.skipped]
    assert [":2: skipped:" in s and "cache_discount is not an amount in USD" in s for s in named] == [True, False]
    assert ":3: skipped:" in named[1] and "cache_discount" in named[1]
