"""providers/tables.py look-ups pinned with exact results (issue 22): model ids reduced to the ids the
tables use, the longest OpenAI family prefix, retention overrides, and the Anthropic per-model rows
(docs/rules.md#anthropic-minimum-cacheable-length, #anthropic-thinking-blocks-and-effort,
#claude-code-harness, #openai-retention)."""
import pytest

from prefixsim.errors import UserError
from prefixsim.providers import gemini_tables, tables
from prefixsim.providers.gemini_tables import gemini_rule
from prefixsim.providers.deepseek_tables import DEEPSEEK_RULE
from prefixsim.providers.tables import (
    anthropic_config_layer,
    anthropic_min_tokens,
    anthropic_strips_thinking,
    canonical_model,
    claude_code_ttl,
    openai_rule,
)


CANONICAL = [
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),               # dated snapshot
    ("  Claude-Sonnet-4-5  ", "claude-sonnet-4-5"),                      # case and blanks
    ("anthropic/claude-3-5-haiku-latest", "claude-haiku-3-5"),           # router prefix, alias, old style
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),   # Bedrock inference profile
    ("apac.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),     # 4-letter region
    ("anthropic.claude-3-haiku-20240307-v1:0", "claude-haiku-3"),        # Bedrock id, no region
    ("claude-3-5-sonnet-v2", "claude-sonnet-3-5"),                       # version suffix without a revision
    ("claude-3-opus-20240229", "claude-opus-3"),                         # old style without a minor
    ("claude-3-7-sonnet-thinking", "claude-sonnet-3-7-thinking"),        # old style keeps what follows
    ("claude-opus-4-0", "claude-opus-4"),                                # -0 alias of a major version
    ("claude-opus-4-1", "claude-opus-4-1"),
    ("openai/GPT-4.1", "gpt-4.1"),                                       # other ids: last path part, lowercased
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),                # a router's dotted version
    ("claude-3.5-haiku", "claude-haiku-3-5"),                            # dotted, old style
    ("publishers/anthropic/models/claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),   # Vertex resource path
]


@pytest.mark.parametrize("given,canonical", CANONICAL)
def test_canonical_model(given, canonical):
    assert canonical_model(given) == canonical


def test_canonical_model_is_memoized_and_answers_as_the_rewrites_do():
    """Memoized (three look-ups per request, issue 35), the answers are the unmemoized rewrites', for
    every id of the table and every id the Anthropic tables key, in any order, asked again and again:
    the second pass is all hits, and the public function keeps its signature."""
    import inspect

    from prefixsim.providers import model_ids

    ids = [g for g, _ in CANONICAL] + [g.upper() + "-20250101" for g in tables.ANTHROPIC_MIN_TOKENS] + ["gpt-4o"]
    model_ids._canonical.cache_clear()
    first = [canonical_model(g) for g in ids]
    hits = model_ids._canonical.cache_info().hits
    again = [canonical_model(g) for g in reversed(ids)][::-1]
    assert model_ids._canonical.cache_info().hits - hits == len(ids)
    assert first == again == [model_ids._canonical.__wrapped__(g) for g in ids]
    assert first[:len(CANONICAL)] == [c for _, c in CANONICAL]
    assert first[len(CANONICAL):-1] == list(tables.ANTHROPIC_MIN_TOKENS)
    assert str(inspect.signature(canonical_model)) == "(model: 'str') -> 'str'"


def test_unknown_anthropic_model_names_the_known_ones():
    # a near miss gets the nearest name; a name near none gets the known ones (cut to six)
    with pytest.raises(UserError) as e:
        anthropic_min_tokens("claude-sonet-4-5")
    assert str(e.value) == "unknown Anthropic model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'?)"
    with pytest.raises(UserError) as e:
        anthropic_min_tokens("claude-nonesuch-9")
    known = sorted(tables.ANTHROPIC_MIN_TOKENS)
    assert str(e.value) == (f"unknown Anthropic model 'claude-nonesuch-9' (valid: {', '.join(known[:6])}, ... "
                            f"({len(known)} in all))")
    assert anthropic_min_tokens("claude-3-5-haiku-20241022").value == 2048


@pytest.mark.parametrize("model,family", [
    ("gpt-4.1", "gpt-4.1"), ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"), ("gpt-5-nano", "gpt-5-nano"),
    ("gpt-5.5-pro", "gpt-5.5"), ("gpt-5.6-mini", "gpt-5.6"), ("openai/gpt-4o-2024-08-06", "gpt-4o"),
    ("o3-mini", "o3"), ("gpt-5-codex", "gpt-5"),
])
def test_openai_rule_takes_the_longest_family_prefix(model, family):
    assert openai_rule(model) is tables.OPENAI_RULES[family]


def test_openai_in_memory_retention_overrides_24h_only():
    in_memory = tables.OPENAI_RULES["gpt-4o"]
    assert openai_rule("gpt-4.1", "in_memory") is in_memory
    assert openai_rule("gpt-4.1", "24h") is tables.OPENAI_RULES["gpt-4.1"]
    assert openai_rule("gpt-5.5", "in_memory") is tables.OPENAI_RULES["gpt-5.5"]   # 24h only (O-PC)
    assert openai_rule("gpt-5.6", "in_memory") is tables.OPENAI_RULES["gpt-5.6"]


def test_unknown_openai_model_lists_the_families_without_mini_and_nano():
    with pytest.raises(UserError) as e:
        openai_rule("davinci-002")
    assert str(e.value) == ("unknown OpenAI model 'davinci-002' (known families: gpt-4.1, gpt-4o, gpt-5, "
                            "gpt-5.1, gpt-5.2, gpt-5.3, gpt-5.4, gpt-5.5, gpt-5.6, gpt-5.7, gpt-6, o1, o3, o4)")


def test_retention_bounds():
    rule = openai_rule("gpt-4o")
    assert (rule.idle("pessimistic"), rule.idle("optimistic")) == (300.0, 600.0)
    assert (DEEPSEEK_RULE.idle("pessimistic"), DEEPSEEK_RULE.idle("optimistic")) == (3600.0, 86400.0)


def test_claude_code_ttl_buckets():
    # CC-PC: the main conversation writes what it asks for; everything else writes 5m
    assert claude_code_ttl(True, "1h") == "1h" and claude_code_ttl(True, "5m") == "5m"
    assert claude_code_ttl(False, "1h") == "5m"


@pytest.mark.parametrize("model,layer,strips", [
    ("claude-opus-4-5-20251101", "tools", False),   # keeps thinking; configuration rendered ahead of the tools
    ("claude-sonnet-4-5", "messages", True),        # strips earlier thinking; configuration in messages
    ("claude-haiku-4-5", "messages", True),
    ("claude-unknown-9", "messages", False),        # unknown: the policy names it as an error of its own
])
def test_anthropic_thinking_rows(model, layer, strips):
    assert anthropic_config_layer(model) == layer
    assert anthropic_strips_thinking(model) is strips


# --- Bedrock / Vertex 1h and Gemini implicit caching (docs/rules.md#bedrock-and-vertex-claude, #google-gemini)

def test_bedrock_offers_1h_from_claude_4_5_vertex_and_the_api_on_every_model():
    assert tables.BEDROCK.offers_1h("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert tables.BEDROCK.offers_1h("claude-haiku-4-5")
    assert not tables.BEDROCK.offers_1h("anthropic.claude-opus-4-1-20250805-v1:0")   # 4.1 and older: 5m only
    assert not tables.BEDROCK.offers_1h("claude-3-7-sonnet")
    assert tables.VERTEX.offers_1h("claude-opus-4-1@20250805") and tables.CLAUDE_API.offers_1h("claude-haiku-3")


@pytest.mark.parametrize("model,family,minimum", [
    ("gemini-2.5-flash", "gemini-2.5-flash", 2048), ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite", 2048),
    ("google/gemini-2.5-pro", "gemini-2.5-pro", 2048),                 # router prefix
    ("publishers/google/models/gemini-3.5-flash", "gemini-3.5", 4096),  # Vertex resource path: last part
    (" Gemini-3-Flash-Preview ", "gemini-3-flash", 1024), ("gemini-3.1-pro-preview", "gemini-3.1", 4096),
    ("gemini-4-argon", "gemini-4", 4096),
])
def test_gemini_rule_by_family_with_the_newest_minimum(model, family, minimum):
    rule = gemini_rule(model)
    assert rule is gemini_tables.GEMINI_RULES[family] and rule.min_tokens == minimum


def test_gemini_rule_is_the_same_under_any_retention():
    assert gemini_rule("gemini-2.5-pro", "in_memory") is gemini_rule("gemini-2.5-pro")


def test_gemini_before_2_5_has_no_implicit_caching():
    with pytest.raises(UserError) as e:
        gemini_rule("models/gemini-2.0-flash")
    assert str(e.value) == ("unknown Gemini model 'models/gemini-2.0-flash' for implicit caching (2.5 and later; "
                            "known families: gemini-2.5-flash, gemini-2.5-flash-lite, gemini-2.5-pro, gemini-3-flash, gemini-3-pro, "
                            "gemini-3.1, gemini-3.5, gemini-3.6, gemini-3.7, gemini-3.8, gemini-4)")


def test_gemini_implicit_rule_is_a_best_effort_range():
    # pessimistic: nothing kept (idle 0); optimistic: kept up to 24 h from the write; reads at block
    # boundaries; writes cost plain input; every position past the minimum is cached
    rule = gemini_tables._gemini(2048, "a note")
    assert (rule.min_tokens, rule.increment, rule.ttl, rule.ttl_optimistic, rule.max_lifetime,
            rule.write_multiplier_applies, rule.partial, rule.writes, rule.common_units) == \
        (2048, 1, 0.0, 86400.0, 86400.0, False, False, "every", False)
    assert rule.source.startswith("G-CC, docs/rules.md#google-gemini: ") and "min 2,048 tokens (a note)" in rule.source
