"""The lookup a replay uses (providers/unlisted.py `or_unlisted`) answers a listed model exactly as the
tables do, the request's retention included, and an unlisted one with the provider's rule for unlisted
models. mutmut does not mutate `lookup` (a decorated function), so these were checked by applying
its mutants to the source by hand (docs/reliability.md)."""
from prefixsim.providers.registry import get_policy
from prefixsim.providers.tables import openai_rule
from prefixsim.providers.unlisted import UNLISTED_RULES


def test_a_listed_model_keeps_the_retention_its_request_asked_for():
    replayed = get_policy("openai", listed_only=False)
    # gpt-5.1 keeps 24h by default; a request that asks in_memory gets the in_memory window
    assert replayed.rule_of("gpt-5.1", "in_memory") == openai_rule("gpt-5.1", "in_memory")
    assert replayed.rule_of("gpt-5.1", "in_memory").ttl_optimistic == 600.0
    assert replayed.rule_of("gpt-5.1", "").ttl_optimistic == 86400.0
    assert replayed.rule_of("gpt-5.1", "") == openai_rule("gpt-5.1", "")


def test_an_unlisted_model_takes_the_unlisted_rule_and_24h_only_on_openai():
    openai = get_policy("openai", listed_only=False)
    assert openai.rule_of("gpt-4.5-preview", "") is UNLISTED_RULES["openai"]
    assert openai.rule_of("gpt-4.5-preview", "in_memory") is UNLISTED_RULES["openai"]
    assert openai.rule_of("gpt-4.5-preview", "24h").ttl_optimistic == 86400.0
    gemini = get_policy("gemini", listed_only=False)
    assert gemini.rule_of("gemini-2.0-flash", "24h") is UNLISTED_RULES["gemini"]
