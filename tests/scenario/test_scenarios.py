"""The shipped scenarios: their shape (seed tables, real-session band) and golden outputs.

Golden files are regenerated with `PREFIXSIM_UPDATE_GOLDEN=1 python -m pytest tests/scenario/test_scenarios.py`
and reviewed in the diff."""
import os
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import PRICE_DATE, unversioned

from prefixsim.api import run_scenario
from prefixsim.report.tables import json_text

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.fixture(scope="module")
def results():
    return {p.stem: run_scenario(str(p.relative_to(ROOT)) if False else str(p), PRICE_DATE) for p in SCENARIOS}


def rows(res, variant_prefix):
    v = next(v for v in res.variants if v.variant.startswith(variant_prefix))
    return {r["label"]: r for r in v.rows()}


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_golden(results, path):
    doc = results[path.stem].to_json()
    doc["path"] = path.name
    text = json_text(doc)
    golden = GOLDEN / f"{path.stem}.json"
    if os.environ.get("PREFIXSIM_UPDATE_GOLDEN") or not golden.exists():
        golden.write_text(text)
    assert unversioned(text) == unversioned(golden.read_text())


def test_seed_003_table_with_the_demo_rules(results):
    r = rows(results["seed-fork-chapter"], "seed demo")
    hit = {k: v["hit_rate"] for k, v in r.items()}
    assert hit["main turn N (warm-up)"] == 0
    assert hit["fork: same tools/system/history + task"] >= 0.99
    assert hit["fork minus the Bash tool"] == 0
    changed = r["fork with a changed system prompt"]
    assert changed["cause"].startswith("prefix_changed (system layer")
    assert 0 < changed["cache_read_input_tokens"] < 200            # the tools block only
    assert hit["fresh sub-agent (own system+tools)"] == 0
    assert hit["/btw side question"] >= 0.99
    assert hit["fork with reordered tools"] == 0
    refused = r["fork, Edit kept but refused at call time"]
    plain = r["fork: same tools/system/history + task"]
    assert abs(refused["hit_rate"] - plain["hit_rate"]) < 0.005
    assert refused["cache_read_input_tokens"] >= plain["cache_read_input_tokens"]


def test_seed_003_under_anthropic_rules_differs_where_it_should(results):
    r = rows(results["seed-fork-chapter"], "anthropic rules")
    # No breakpoint sits after the tools alone, so the edited system prompt loses everything.
    assert r["fork with a changed system prompt"]["cache_read_input_tokens"] == 0
    assert r["fresh sub-agent (own system+tools)"]["cause"].startswith("below_minimum")
    assert r["main turn N (warm-up)"]["cache_write_5m_tokens"] > 0           # the write premium shows
    assert r["fork: same tools/system/history + task"]["hit_rate"] >= 0.98


def test_seed_000_economics(results):
    res = results["seed-fork-economics"]
    seed = list(rows(res, "seed arithmetic").values())
    assert 48_000 <= seed[0]["input_tokens"] <= 49_500                       # child 1 at full price
    for child in seed[1:]:
        equiv = child["cache_read_input_tokens"] * 0.1 + child["input_tokens"]
        assert 4_800 <= equiv <= 5_300                                       # ~5,050 token-equivalents
    together = list(rows(res, "fork, 5 children launched together").values())[1:]
    held = list(rows(res, "fork, siblings held").values())[1:]
    assert all(c["cause"].startswith("not_yet_available") for c in together[1:])
    assert all(c["cache_write_5m_tokens"] < 500 for c in held[1:])
    summary = {s["variant"]: s for s in res.comparison()}
    subagents = next(v for k, v in summary.items() if k.startswith("5 independent"))
    fork = next(v for k, v in summary.items() if k.startswith("fork, siblings held"))
    assert subagents["cost_usd"] > fork["cost_usd"]
    assert subagents["savings_vs_no_cache"] < 0      # writes nobody reads cost more than no caching


def test_claude_code_session_read_share_in_the_real_band(results):
    s = results["claude-code-session"].comparison()[0]
    assert s["requests"] == 150
    assert 0.96 <= s["hit_rate"] <= 0.98
    r = results["claude-code-session"].variants[0].rows()
    compaction = [x for x in r if x["cause"].startswith("compaction")]
    assert len(compaction) == 1


def test_ttl_expiry(results):
    res = results["ttl-expiry"]
    causes = {v.variant: [r["cause"].split(" ")[0] for r in v.rows()] for v in res.variants}
    assert causes["ttl 5m"].count("ttl_expired") == 3       # the 6, 30 and 70 minute gaps
    assert causes["ttl 1h"].count("ttl_expired") == 1       # only the 70 minute gap


def test_invalidation_matrix_layers(results):
    res = results["invalidation-matrix"]
    after = {v.variant: v.rows()[-1] for v in res.variants}
    base_read = after["baseline (no change)"]["cache_read_input_tokens"]
    tools_system = after["tool_choice changed"]["cache_read_input_tokens"]
    tools_only = after["system prompt edited"]["cache_read_input_tokens"]
    assert base_read > tools_system > tools_only > 0
    for name in ("thinking turned on", "image added"):
        assert after[name]["cache_read_input_tokens"] == tools_system
    for name in ("tool added at the front", "tool removed", "tool order changed", "schema key order changed"):
        assert after[name]["cache_read_input_tokens"] == 0, name
    # Appending a tool keeps the old tool list's entry (a breakpoint sits on the last tool).
    assert after["tool added at the end"]["cache_read_input_tokens"] == tools_only
    assert after["model switched"]["cause"].startswith("model_switch")


def test_stagger_helps_subagents_of_one_type(results):
    s = {(x["variant"], x["stagger"]): x for x in results["parallel-children-stagger"].comparison()}
    assert s["fresh sub-agents of one type", 3]["cost_usd"] < s["fresh sub-agents of one type", 0]["cost_usd"]


def test_multi_cloud_prices_each_platform(results):
    """One design on five clouds (docs/rules.md#bedrock-and-vertex-claude, #google-gemini): the same
    Claude tokens on the API, Bedrock and Vertex; Bedrock's regional list price is 10 % above the
    API's (Sonnet 4.5: 3.30 vs 3 per MTok input, genai-prices aws), its global profile the same as
    the API; Gemini's best effort is a range (nothing read .. every prefix for 24 h) whose printed
    figure is what public traffic shows: a prefix outlives the 7-minute gap, not the 40-minute one."""
    res = results["multi-cloud"]
    by = {v.variant: v for v in res.variants}
    api, bed, glob, vtx = by["claude api"], by["bedrock"], by["bedrock global"], by["vertex"]
    def split_of(v):
        return [(o.usage.cache_read, o.usage.cache_write_5m, o.usage.input_tokens) for o in v.outcomes]

    assert split_of(api) == split_of(bed) == split_of(glob) == split_of(vtx)
    api_cost = sum(o.cost_usd for o in api.outcomes)
    assert sum(o.cost_usd for o in bed.outcomes) == api_cost * Decimal("1.1")
    assert sum(o.cost_usd for o in glob.outcomes) == api_cost == sum(o.cost_usd for o in vtx.outcomes)
    gem = by["gemini"]
    reads = [o.usage.cache_read for o in gem.outcomes]
    assert reads[3] > 0 and reads[5] == 0 and gem.outcomes[5].cause.kind == "ttl_expired"   # 7 min, 40 min idle
    assert gem.optimistic is not None and gem.optimistic[5].usage.cache_read > 0
    assert gem.bound == "measured" and gem.summary()["retention_bound"] == "measured"
