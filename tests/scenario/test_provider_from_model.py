"""Issue 34 item 8: a scenario's `model:` without `provider:` runs under the rules of the provider its
family names, as a replay's model id does (`model: gpt-4o` was "unknown Anthropic model 'gpt-4o'")."""
import datetime as dt

import pytest

from prefixsim.api import run_scenario
from prefixsim.errors import UserError

WHEN = dt.date(2026, 11, 30)
BODY = """name: family
model: {model}
{provider}base:
  system: 3000
timeline:
  - request: 2
  - wait: 30s
  - request: 1
variants:
  - name: a
"""


def _summary(tmp_path, model, provider=None):
    p = tmp_path / f"{model}-{provider}.yaml"
    p.write_text(BODY.format(model=model, provider=f"provider: {provider}\n" if provider else ""))
    return run_scenario(str(p), WHEN).summary.iloc[0].to_dict()


@pytest.mark.parametrize("model,provider", [("gpt-4o", "openai"), ("deepseek-v4-flash", "deepseek"),
                                            ("gemini-2.5-flash", "gemini")])
def test_a_model_without_provider_takes_its_familys_rules(tmp_path, model, provider):
    assert _summary(tmp_path, model) == _summary(tmp_path, model, provider)


def test_a_claude_model_keeps_the_claude_api(tmp_path):
    assert _summary(tmp_path, "claude-sonnet-4-5") == _summary(tmp_path, "claude-sonnet-4-5", "anthropic")


def test_a_family_no_rules_know_is_still_refused_with_the_valid_models(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(BODY.format(model="not-a-model", provider=""))
    with pytest.raises(UserError, match="unknown Anthropic model 'not-a-model'"):
        run_scenario(str(p), WHEN)
