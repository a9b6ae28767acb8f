"""Which provider a model id names (providers/registry.py), asserted in the mutation selection
(tests/providers): a cloud's spelling behind a path names the cloud, `claude_platform` falls back to
the Claude API for any id no Claude platform's spelling names, and `priced_provider` refuses an empty
id and one no provider knows, each with its own message (tests/analysis/test_cloud_model_ids.py asks
the same of every path, outside the selection)."""
import pytest

from prefixsim.errors import UserError
from prefixsim.providers.registry import claude_platform, family_provider, get_policy, model_provider, priced_provider

ARN = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_a_cloud_spelling_behind_a_path_names_the_cloud():
    assert model_provider(ARN) == "bedrock"
    assert model_provider(" Bedrock/Anthropic.Claude-3-5-Sonnet-20240620-v1:0 ") == "bedrock"
    assert model_provider("vertex_ai/claude-sonnet-4-5@20250929") == "vertex"
    # a router's route of two parts (litellm's bedrock/converse/…): the part after the last slash
    assert model_provider("bedrock/converse/us.anthropic.claude-sonnet-4-5-20250929-v1:0") == "bedrock"


@pytest.mark.parametrize("model,platform", [
    (ARN, "bedrock"), ("claude-sonnet-4-5@20250929", "vertex"), ("claude-sonnet-4-5", "anthropic"),
    ("anthropic/claude-haiku-4-5", "anthropic"),
    # an id of no Claude platform (another provider's, or none's) is checked on the Claude API
    ("gpt-4o", "anthropic"), ("gemini-2.5-pro", "anthropic"), ("some-model", "anthropic"),
])
def test_the_claude_platform_a_model_id_names(model, platform):
    assert claude_platform(model) == platform


def test_a_bare_id_is_priced_at_the_provider_it_names_or_refused():
    assert priced_provider(ARN) == "bedrock"
    assert priced_provider("gpt-4o") == "openai"
    with pytest.raises(UserError) as e:
        priced_provider("  ")
    assert str(e.value) == "no model given"
    with pytest.raises(UserError) as e:
        priced_provider("some-model")
    assert str(e.value) == "no provider known for model 'some-model'; give one with --provider"


def test_strict_names_openai_only_for_the_families_its_tables_list():
    # a router's open-weights id: OpenAI's by its name, not a family OpenAI's tables list
    assert family_provider("openai/gpt-oss-120b") == "openai"
    assert family_provider("openai/gpt-oss-120b", strict=True) == "other"
    assert model_provider("openai/gpt-oss-120b") == "openai"
    assert model_provider("openai/gpt-oss-120b", strict=True) == "other"
    assert model_provider("openai/gpt-4.1", strict=True) == "openai"


def test_another_providers_policy_keeps_its_name_and_bound():
    p = get_policy("zai", "optimistic")
    assert (p.name, p.bound, p.describe("glm-4.6")["provider"]) == ("zai", "optimistic", "zai")
    assert get_policy("groq").bound == "printed"
