"""Issue 32: a recorded request whose model a known provider's tables do not list (an id newer or older
than the tables) replays under the provider's rule for unlisted models and says so, never skipped as
"unknown model"; a model the user types (a scenario, a what-if) is still checked against the tables."""
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.errors import UserError
from prefixsim.providers.others import rules_note
from prefixsim.providers.registry import get_policy
from prefixsim.providers.unlisted import UNLISTED_CLAUDE, UNLISTED_RULES

DATA = Path(__file__).resolve().parents[1] / "data"

# (recording, the model id in it, an id the provider's tables lack, what the note must say)
CASES = [
    ("openai-api/test_openai_chat_prompt_cache_e2e.yaml", r"gpt-5[.0-9a-z-]*", "gpt-4.5-preview",
     "model not in OpenAI's tables, its retention undocumented"),
    ("gemini-api/test_mixed_content_ordering[google_2_5].yaml", r"gemini-2\.5-flash", "gemini-2.0-flash",
     "model not in the Gemini tables, its minimum undocumented"),
    ("anthropic-api/test_anthropic_cache_real_api.yaml", r"claude-sonnet-4-5(-20250929)?", "claude-3-sonnet-20240229",
     "model not in the Claude tables, its minimum undocumented"),
]


def _swapped(tmp_path, rel, pattern, model):
    src = DATA / rel
    text = src.read_text()
    assert re.search(pattern, text), rel
    out = tmp_path / src.name
    out.write_text(re.sub(pattern, model, text))
    return out


def _json(args):
    res = CliRunner().invoke(cli, ["replay", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output[res.output.index("{"):])


@pytest.mark.parametrize("rel,pattern,model,note", CASES, ids=[c[2] for c in CASES])
def test_a_recorded_model_the_tables_lack_replays_and_says_so(tmp_path, rel, pattern, model, note):
    # the old code skipped every such line ("unknown OpenAI model 'gpt-4.5-preview'") and then refused
    # the file with "no requests found" (exit 2)
    listed = _json([str(DATA / rel)])
    path = _swapped(tmp_path, rel, pattern, model)
    unlisted = _json([str(path)])
    assert len(unlisted["requests"]) == len(listed["requests"]) > 0
    assert {r["model"] for r in unlisted["requests"]} == {model}
    text = CliRunner().invoke(cli, ["replay", str(path)])
    assert text.exit_code == 0 and "skipped" not in text.output, text.output
    assert f"{model} ({note})" in " ".join(text.output.split())


def test_an_unlisted_openai_model_replays_as_openais_general_rule(tmp_path):
    # the two requests are a minute apart: the second reads the first's prefix, in OpenAI's general
    # 128-token steps (the recording's gpt-5.6 reads at its exact breakpoint: 4,012)
    rel, pattern, model, _ = CASES[0]
    unlisted = _json([str(_swapped(tmp_path, rel, pattern, model))])
    first, second = unlisted["requests"]
    assert first["predicted"]["cache_read_input_tokens"] == 0
    observed = second["observed"]["cache_read_input_tokens"]
    assert observed == 4012 and second["predicted"]["cache_read_input_tokens"] == observed - observed % 128 == 3968


def test_the_rule_for_unlisted_models_is_the_providers_mechanism_with_the_gaps_stated():
    o = get_policy("openai", listed_only=False)
    assert o.describe("gpt-4.5-preview")["source"] == UNLISTED_RULES["openai"].source
    assert "in_memory assumed" in o.describe("gpt-4.5-preview")["source"]
    # a request that asks for 24h retention says the model keeps it
    from prefixsim.model import Request
    r24 = o.rule(Request(model="gpt-4.5-preview", blocks=(), retention="24h"))
    assert (r24.ttl, r24.ttl_optimistic) == (1800.0, 86400.0) and "24h" in r24.source
    g = get_policy("gemini", listed_only=False)
    assert g.describe("gemini-2.0-flash")["minimum cacheable tokens"] == "1024"
    a = get_policy("anthropic", listed_only=False)
    assert a.minimum("claude-3-sonnet-20240229") is UNLISTED_CLAUDE
    # listed models keep their own rules, with no note
    for provider, listed in (("openai", "gpt-4o"), ("gemini", "gemini-2.5-pro"), ("anthropic", "claude-sonnet-4-5")):
        assert rules_note(get_policy(provider, listed_only=False), listed) == ""
        assert get_policy(provider, listed_only=False).describe(listed) == get_policy(provider).describe(listed)


@pytest.mark.parametrize("provider,model", [("openai", "gpt-4.5-preview"), ("gemini", "gemini-2.0-flash"),
                                            ("anthropic", "claude-3-sonnet-20240229")])
def test_a_model_the_user_types_is_still_checked_against_the_tables(provider, model):
    with pytest.raises(UserError):
        get_policy(provider).describe(model)


def test_a_what_if_model_the_tables_lack_is_refused(tmp_path):
    path = tmp_path / "chat.yaml"
    shutil.copy(DATA / CASES[0][0], path)
    res = CliRunner().invoke(cli, ["replay", str(path), "--model", "gpt-4.5-previw"])
    assert isinstance(res.exception, UserError) and "unknown OpenAI model 'gpt-4.5-previw'" in str(res.exception)


def test_a_scenario_naming_a_model_the_tables_lack_is_refused(tmp_path):
    path = tmp_path / "s.yaml"
    text = (Path(__file__).resolve().parents[2] / "scenarios" / "openai-retention.yaml").read_text()
    path.write_text(text.replace("model: gpt-4o", "model: gpt-4.5-preview"))
    res = CliRunner().invoke(cli, ["validate", str(path)])
    text = res.output + str(res.exception or "")
    assert res.exit_code != 0 and "unknown OpenAI model 'gpt-4.5-preview'" in text, text
