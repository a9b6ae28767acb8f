"""Serving engines from scenario files: the `engine:` setting, self-hosted pricing, GPU-seconds,
the `evicted` cause through the adapter, `replay --capacity` syntax, and the shipped scenario."""
import json
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import PRICE_DATE, make_request

from prefixsim.api import run_scenario
from prefixsim.cli import main
from prefixsim.core.pricing import SELF_HOSTED_SOURCE, PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.engines.policy import EnginePolicy
from prefixsim.errors import UserError
from prefixsim.model import Call, CauseKind
from prefixsim.providers.registry import get_policy
from prefixsim.report.tables import scenario_text
from prefixsim.scenario.loader import load_runs

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "self-hosted-vllm.yaml"


def scenario(tmp_path, body: str, name="s.yaml") -> str:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return str(p)


SMALL = textwrap.dedent("""\
    name: small
    model: llama-3.1-8b
    provider: vllm
    tokenizer: approx
    base: {system: 600, history: {turns: 2, user: 50, assistant: 80, tool_use: 40, tool_result: 200}}
    timeline:
      - request: 2
    """)


# --- the shipped scenario: its key figures (the full output is tests/golden/self-hosted-vllm.json) -----

@pytest.fixture(scope="module")
def shipped():
    res = run_scenario(str(SHIPPED), PRICE_DATE)
    return {v.variant: v for v in res.variants}, res


def test_shipped_scenario_key_figures(shipped):
    variants, _ = shipped
    figures = {name: (s["cache_read_input_tokens"], s["input_tokens"], s["hit_rate"], s["gpu_seconds_saved"],
                      s["gpu_seconds_spent"]) for name, s in ((n, v.summary()) for n, v in variants.items())}
    # Every turn that continues a request reads that request's reply too: 350 output tokens, 349
    # committed. On top of the prompt-only figures (vLLM 89,312 and 30,544, SGLang 89,393), each of
    # the six continuing turns (main #2, fork1.1 or main #3, the four children's #2) reads vLLM 21-22
    # more blocks (the reply's 349 tokens end in another block than the prompt did: +336 or +352)
    # and SGLang 349 more tokens: fork 89,312 + 2x336 + 4x352 = 91,392, unlimited 30,544 + 6x336 =
    # 32,560, SGLang fork 89,393 + 6x349 = 91,487. The 2 GiB sub-agent runs are capacity-bound.
    assert figures == {
        "vllm, fork": (91_392, 12_833, 0.876872, 9.1392, 1.2833),
        "vllm, sub-agents": (21_360, 37_839, 0.360817, 2.136, 3.7839),
        "vllm, sub-agents, unlimited KV": (32_560, 26_639, 0.550009, 3.256, 2.6639),
        "sglang, fork": (91_487, 12_738, 0.877784, 9.1487, 1.2738),
        "sglang, sub-agents": (15_567, 43_632, 0.262961, 1.5567, 4.3632),
    }


def test_shipped_scenario_sub_agents_evict_the_parent(shipped):
    variants, _ = shipped
    for name in ("vllm, sub-agents", "sglang, sub-agents"):
        last = variants[name].rows()[-1]   # the parent's turn after its sub-agents
        assert last["label"] == "main #3" and last["hit_rate"] < 0.001, name   # SGLang still shares 7 tokens
        assert last["cause"] == "evicted (entry at tools[0] evicted for capacity)", name
    unlimited = variants["vllm, sub-agents, unlimited KV"].rows()
    assert not any(r["cause"].startswith("evicted") for r in unlimited)
    for name in ("vllm, fork", "sglang, fork"):  # the fork's children fit next to the parent
        assert [r["cause"] for r in variants[name].rows()].count("cold") == 1


def test_shipped_scenario_is_self_hosted(shipped):
    variants, res = shipped
    v = variants["vllm, sub-agents, unlimited KV"]
    assert v.assumptions["capacity"] == "unlimited"              # the variant overrides the capacity only...
    assert v.assumptions["prefill rate"] == "10,000 tokens/s"    # ...and keeps the scenario's rate
    assert variants["vllm, fork"].assumptions["capacity"] == "16,384 tokens"   # 2 GiB of llama-3.1-8b KV
    assert all(r["cost_usd"] == 0 for v in variants.values() for r in v.rows())
    assert SELF_HOSTED_SOURCE in v.assumptions["prices [llama-3.1-8b]"]
    assert "ttl" not in v.assumptions and "breakpoints" not in v.assumptions
    text = scenario_text(res)
    assert "GPU-s saved" in text and "GPU-s spent" in text and "write 5m" not in text


# --- the engine: setting -------------------------------------------------------------------------------

@pytest.mark.parametrize("capacity,tokens", [
    ("2M", 2_000_000), ("1e6", 10**6), ("1e6", 10**6), ('"10^4"', 10**4), ("16384", 16_384),
    ("4GiB", 4 * 8192), ("unlimited", None),
])
def test_capacity_spellings(tmp_path, capacity, tokens):
    path = scenario(tmp_path, SMALL + f"engine: {{capacity: {capacity}}}\n")
    res = run_scenario(path, PRICE_DATE)
    want = "unlimited" if tokens is None else f"{tokens:,} tokens"
    assert res.variants[0].assumptions["capacity"] == want


def test_engine_options_reach_the_policy(tmp_path):
    path = scenario(tmp_path, SMALL + textwrap.dedent("""\
        engine: {block_size: 32, page_size: 4, eviction: lfu, lora: sql-adapter, cache_salt: tenant-a,
                 prefill_tokens_per_s: 5000}
        variants:
          - name: vllm
          - name: sglang
            provider: sglang
        """))
    vllm, sglang = run_scenario(path, PRICE_DATE).variants
    assert vllm.assumptions["block size"] == "32 tokens" and sglang.assumptions["page size"] == "4 tokens"
    for v in (vllm, sglang):
        assert (v.assumptions["eviction"], v.assumptions["lora"], v.assumptions["cache salt"]) == \
            ("lfu", "sql-adapter", "tenant-a")
        s = v.summary()
        assert s["gpu_seconds_saved"] == round(s["cache_read_input_tokens"] / 5000, 6)
    assert vllm.summary()["cache_read_input_tokens"] % 32 == 0      # whole 32-token blocks only


def test_decode_rate_sets_how_long_a_request_holds_its_kv(tmp_path):
    # Two turns 10 s apart (pace), each answered with 80 + 40 = 120 output tokens. At the default
    # 50 tokens/s the first has ended (2.4 s) when the second starts: vLLM cached the full blocks of
    # its 1,403 prompt tokens + 119 committed output tokens, floor(1522/16)*16 = 1,520. At 10 tokens/s
    # (12 s) it still runs: only its prompt's full blocks are cached, floor(1403/16)*16 = 1,392.
    body = SMALL + "variants:\n  - name: default\n  - name: slow\n    engine: {decode_tokens_per_s: 10}\n"
    fast, slow = run_scenario(scenario(tmp_path, body), PRICE_DATE).variants
    assert "/ 10 tokens/s" in slow.assumptions["request time"]
    assert [r["input_tokens"] for r in fast.rows()][0] == 1403
    assert [r["cache_read_input_tokens"] for r in fast.rows()] == [0, 1520]
    assert [r["cache_read_input_tokens"] for r in slow.rows()] == [0, 1392]


def test_engine_run_without_a_rate_has_null_gpu_seconds(tmp_path):
    v = run_scenario(scenario(tmp_path, SMALL), PRICE_DATE).variants[0]
    assert v.summary()["gpu_seconds_saved"] is None and v.rows()[0]["gpu_seconds_spent"] is None
    assert v.assumptions["prefill rate"].startswith("not given")


@pytest.mark.parametrize("engine,message", [
    ("{capacity: lots}", "bad capacity 'lots'"),
    ("{capacity: -5}", "bad capacity -5"),
    ("{eviction: random}", "eviction"),
    ("{block_size: 0}", "block_size"),
    ("{prefill_tokens_per_s: 0}", "prefill_tokens_per_s"),
    ("{decode_tokens_per_s: -1}", "decode_tokens_per_s"),
    ("{capacity: 2M, kv_modle: x}", "unknown key 'kv_modle'"),
])
def test_bad_engine_settings_are_located(tmp_path, engine, message):
    path = scenario(tmp_path, SMALL + f"engine: {engine}\n")
    with pytest.raises(UserError, match=message) as e:
        load_runs(path)
    assert e.value.line == 8


def test_gib_capacity_needs_a_known_kv_model(tmp_path):
    path = scenario(tmp_path, SMALL.replace("llama-3.1-8b", "my-finetune") + "engine: {capacity: 4GiB}\n")
    with pytest.raises(UserError, match="set engine.kv_model"):
        run_scenario(path, PRICE_DATE)
    path = scenario(tmp_path, SMALL.replace("llama-3.1-8b", "my-finetune")
                    + "engine: {capacity: 1GiB, kv_model: qwen2.5-7b}\n")
    v = run_scenario(path, PRICE_DATE).variants[0]
    assert v.assumptions["capacity"] == "18,724 tokens"   # 2 x 28 layers x 4 KV heads x 128 x 2 bytes


def test_provider_apis_ignore_the_engine_setting(tmp_path):
    path = scenario(tmp_path, textwrap.dedent("""\
        name: api vs self-hosted
        model: claude-sonnet-4-5
        tokenizer: approx
        base: {system: 3000}
        engine: {capacity: 1M, prefill_tokens_per_s: 10000}
        timeline:
          - request: 2
        variants:
          - name: anthropic
            provider: anthropic
          - name: vllm
            provider: vllm
        """))
    res = run_scenario(path, PRICE_DATE)
    api, vllm = res.variants
    assert "gpu_seconds_saved" not in api.rows()[0] and "gpu_seconds_saved" not in api.summary()
    assert api.summary()["cost_usd"] > 0 and vllm.summary()["cost_usd"] == 0
    doc = res.to_json()
    assert "gpu_seconds_saved" in doc["variants"][1]["summary"]
    text = scenario_text(res)   # both kinds of cost side by side
    assert "GPU-s saved" in text and "x cheapest" in text


# --- policy, pricing, the runner's cause -----------------------------------------------------------------

def test_get_policy_takes_engine_options():
    assert get_policy("vllm").capacity is None
    p = get_policy("sglang", capacity=1000, block_size=4, prefill_tokens_per_s=100.0)
    assert (p.capacity, p.block_size, p.prefill_tokens_per_s) == (1000, 4, 100.0)
    with pytest.raises(UserError, match="takes no engine settings"):
        get_policy("anthropic", capacity=1000)


def test_self_hosted_prices_are_zero_unless_a_sheet_says():
    book = PriceBook(when=PRICE_DATE)
    r = book.rates("llama-3.1-8b", "vllm")
    assert r.source == SELF_HOSTED_SOURCE and all(v == 0 for v in r.per_mtok().values())
    assert book.rates("claude-sonnet-4-5", "sglang").source == SELF_HOSTED_SOURCE   # own GPUs, not an API bill
    sheet = PriceBook({"llama-3.1-8b": {"input": 0.1, "output": 0.2}}, when=PRICE_DATE)
    assert sheet.rates("llama-3.1-8b", "vllm").per_mtok()["input"] == Decimal("0.1")
    assert "genai-prices" in book.rates("claude-sonnet-4-5", "anthropic").source


@pytest.mark.parametrize("engine,read,lost", [
    ("vllm", 608, "b2"),    # blocks freed together go tail first: A keeps its head, 38 blocks of 16
    ("sglang", 0, "b1"),    # A is one radix leaf, evicted whole
])
def test_capacity_misses_are_evicted_not_cold(prices, engine, read, lost):
    # 1,600-token cache: A (1,000 tokens) is cached, B (1,000 other tokens) evicts some of it, A again.
    s = Simulator(engine, tokenizer="approx", prices=prices,
                  policy=EnginePolicy(engine, capacity=1600, encoding="approx"))
    a, b = make_request([500, 500], tag=b"a"), make_request([500, 500], tag=b"b")
    outs = [s.step(Call(t, r)) for t, r in enumerate((a, b, a))]
    # B follows A on the same stream: it parted from A's prompt at its first block, as on the APIs
    assert [o.cause.kind for o in outs] == [CauseKind.COLD, CauseKind.PREFIX_CHANGED, CauseKind.EVICTED]
    assert outs[2].usage.cache_read == read and outs[2].cause.detail == f"entry at {lost} evicted for capacity"
    unlimited = Simulator(engine, tokenizer="approx", prices=prices, policy=EnginePolicy(engine, encoding="approx"))
    assert [unlimited.step(Call(t, r)).cause.kind for t, r in enumerate((a, b, a))][2] == CauseKind.HIT


def test_an_eviction_inside_a_block_is_still_named(prices):
    # One 3,000-token block: the cache keeps 2,000 tokens of it, so the repeat reads part of the block.
    s = Simulator("sglang", tokenizer="approx", prices=prices,
                  policy=EnginePolicy("sglang", capacity=2000, encoding="approx"))
    req = make_request([3000], layers=[0])
    s.step(Call(0, req))
    o = s.step(Call(1, req))
    assert 0 < o.usage.cache_read < 3000 and o.cause.kind == CauseKind.EVICTED


# --- replay --capacity --------------------------------------------------------------------------------------

def test_replay_capacity_spellings(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps({"timestamp": i * 1000, "input_length": 1024 * (i + 1),
                                         "hash_ids": list(range(2 * (i + 1)))}) + "\n" for i in range(3)))

    def replay(*args):
        with pytest.raises(SystemExit) as done:
            main(["replay", str(trace), "--format", "json", *args])
        assert done.value.code == 0
        return json.loads(capsys.readouterr().out)["summary"]

    curve = replay("--capacity", "1e3,10^4", "--capacity", "2M", "--capacity", "unlimited")["curve"]
    assert [p["capacity_tokens"] for p in curve] == [1000, 10_000, 2_000_000, None]
    assert replay("--capacity", "1GiB", "--kv-model", "llama-3.1-8b")["capacity_tokens"] == 8192
    with pytest.raises(SystemExit) as e:
        main(["replay", str(trace), "--capacity", "lots"])
    assert e.value.code == 2 and "--capacity: bad capacity 'lots'" in capsys.readouterr().err
