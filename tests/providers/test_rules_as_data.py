"""Issue 31's rules as exact data, each case with its hand-computed figure: Bedrock's own minimums
(case 6), OpenAI's extended retention by exact model id (case 7), automatic caching on Bedrock
(case 8), every current Claude model simulated and Azure OpenAI's retention (case 9)."""
import datetime as dt
from decimal import Decimal

import pytest

from prefixsim.api import run_file
from prefixsim.errors import UserError
from prefixsim.providers.tables import anthropic_min_tokens, openai_extended, openai_rule

DATE = dt.date(2026, 11, 30)


def _run(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    v = run_file(str(p), DATE).variants[0]
    return v, sum((o.cost_usd for o in v.outcomes), Decimal(0)).quantize(Decimal("0.000001"))


BEDROCK_OPUS_4_7 = """\
name: bedrock-opus-4-7
provider: bedrock
model: claude-opus-4-7
tokenizer: approx
pace: 30s
breakpoints: system_and_tools
base:
  system: 3000
timeline:
  - request: 3
"""


def test_bedrock_applies_its_own_4096_minimum_to_opus_4_7(tmp_path):
    """Case 6: a 3,007-token system prompt is cached under the Claude API's 2,048 ($0.055221) but not
    under Bedrock's 4,096: 11,551 uncached at $5.50 + 630 output at $27.50 (regional) = $0.080856."""
    v, cost = _run(tmp_path, BEDROCK_OPUS_4_7)
    assert [o.usage.cache_read + o.usage.cache_creation for o in v.outcomes] == [0, 0, 0]
    assert [str(o.cause.kind) for o in v.outcomes] == ["below_minimum"] * 3
    assert cost == Decimal("0.080856")
    assert (Decimal(11_551) * Decimal("5.5") + 630 * Decimal("27.5")) / 10**6 == Decimal("0.08085550")
    assert anthropic_min_tokens("claude-mythos-preview", "bedrock").value == 4096
    assert anthropic_min_tokens("claude-opus-4-7").value == 2048     # the Claude API's own
    assert "4096" in v.assumptions["minimum cacheable tokens"]


OPENAI_GAP = """\
name: retention
provider: openai
model: {model}
tokenizer: o200k_base
pace: 30s
base:
  system: 20000
timeline:
  - request: 1
  - wait: 12m
  - request: 1
"""


@pytest.mark.parametrize("model", ["gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.4-pro", "gpt-5.2-pro", "gpt-5-pro"])
def test_models_off_openais_extended_retention_list_keep_in_memory(model):
    assert not openai_extended(model) and openai_rule(model).ttl == 300.0


@pytest.mark.parametrize("model", ["gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-5-codex", "gpt-4.1",
                                   "gpt-5-2025-08-07", "gpt-4.1-2025-04-14", "openai/gpt-5.4"])
def test_models_on_the_list_and_their_mapped_snapshots_keep_24h(model):
    assert openai_extended(model) and openai_rule(model).ttl == 1800.0


def test_a_dated_snapshot_not_mapped_is_not_assumed_extended():
    assert not openai_extended("gpt-5.4-2099-01-01") and openai_rule("gpt-5.4-2099-01-01").ttl == 300.0


def test_gpt_5_4_mini_after_a_12_minute_gap_reads_nothing(tmp_path):
    """Case 7: gpt-5.4-mini is not on the 24h list, so after 12 idle minutes (past in_memory's 5-10) the
    second request reads nothing: 41,009 prompt tokens at $0.75 + 420 output at $4.50 = $0.032647. Taken
    as 24h by its name's prefix it read 19,968 at $0.075 and printed $0.019168."""
    mini, cost = _run(tmp_path, OPENAI_GAP.format(model="gpt-5.4-mini"))
    assert mini.outcomes[1].usage.cache_read == 0 and str(mini.outcomes[1].cause.kind) == "ttl_expired"
    assert sum(o.usage.prompt_tokens for o in mini.outcomes) == 41_009
    assert cost == Decimal("0.032647") and (41_009 * Decimal("0.75") + 420 * Decimal("4.5")) / 10**6 == Decimal("0.03264675")
    assert ((41_009 - 19_968) * Decimal("0.75") + 19_968 * Decimal("0.075") + 420 * Decimal("4.5")) / 10**6 \
        == Decimal("0.01916835")
    full, _ = _run(tmp_path, OPENAI_GAP.format(model="gpt-5.4"))
    assert full.outcomes[1].usage.cache_read == 19_968      # gpt-5.4 is on the list: 30 minutes pessimistic


AUTO_ON_BEDROCK = """\
name: auto
provider: {provider}
model: claude-sonnet-4-5
tokenizer: approx
pace: 30s
breakpoints: automatic
base:
  system: 3000
timeline:
  - request: 2
"""


def test_automatic_caching_is_refused_on_bedrock(tmp_path):
    """Case 8: "Bedrock does not support automatic caching" (A-PC): a Bedrock design with automatic
    caching is refused, naming the breakpoints that work there; on the Claude API it still caches."""
    with pytest.raises(UserError) as e:
        _run(tmp_path, AUTO_ON_BEDROCK.format(provider="bedrock"))
    assert "Bedrock does not support automatic caching" in str(e.value) and "last_message" in str(e.value)
    v, cost = _run(tmp_path, AUTO_ON_BEDROCK.format(provider="anthropic"))
    assert v.outcomes[1].usage.cache_read > 0
    # the "20.0 % saved" prefixsim printed for this design on Bedrock is the Claude API's saving
    base = sum((o.cost_no_cache_usd for o in v.outcomes), Decimal(0))
    assert round((base - cost) / base * 100, 1) == Decimal("20.0")


@pytest.mark.parametrize("model,price", [("claude-opus-5-5", "4"), ("claude-sonnet-5-5", "2"), ("claude-haiku-5-5", "0.1"),
                                         ("claude-fable-5-1", "10"), ("claude-fable-5-2", "8"), ("claude-mythos-5-2", "8")])
def test_every_current_claude_model_is_simulated_at_its_own_price(tmp_path, model, price):
    """Case 9: the models genai-prices prices run, at their own prices and minimums (not refused with
    another model's name)."""
    v, _ = _run(tmp_path, AUTO_ON_BEDROCK.replace("breakpoints: automatic", "breakpoints: last_message")
                .format(provider="anthropic").replace("claude-sonnet-4-5", model))
    assert v.rates[model].input.base == Decimal(price)
    assert str(anthropic_min_tokens(model).value) in v.assumptions["minimum cacheable tokens"]


def test_a_bedrock_request_with_automatic_caching_is_priced_uncached_and_said_so():
    import dataclasses

    from conftest import make_request

    from prefixsim.core.simulator import Simulator
    from prefixsim.model import Call

    outs = {}
    for provider in ("bedrock", "anthropic"):
        s = Simulator(provider, tokenizer="approx")
        req = dataclasses.replace(make_request([3000, 200], {}, model="claude-sonnet-4-5"), auto_cache="5m")
        outs[provider] = [s.step(Call(t, req)) for t in (0.0, 30.0)]
    assert [o.usage.cache_read + o.usage.cache_creation for o in outs["bedrock"]] == [0, 0]
    assert outs["anthropic"][1].usage.cache_read > 0
    # said so: each request's cause names the missing breakpoint (the top-level cache_control is not one there)
    assert [str(o.cause) for o in outs["bedrock"]] == ["cold (no cache_control breakpoint)"] * 2
