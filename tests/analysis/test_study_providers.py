"""Every break-even study x a model of each provider (issue 34 item 8): the study runs under the
provider the model's id names (family_provider) or refuses in one line saying why, exit 2, no
traceback; an id no family names is one line too. Before: every Anthropic study said "unknown
Anthropic model 'gpt-4o'" and gemini-explicit "no price for model 'gpt-4o' from provider google"."""
from __future__ import annotations

import pytest

from prefixsim.cli import main


def _run(capsys, *args) -> tuple[int, str]:
    """`prefixsim ARGS` as the console runs it: (exit code, what it printed, stdout then stderr)."""
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out = capsys.readouterr()
    return e.value.code, out.out + out.err

#: (study, model) -> the start of the one line the study answers with
REFUSED = {
    **{(s, m): f"prefixsim: breakeven {s} models Anthropic's rules, not {p}'s: its closed form counts"
       for s in ("fork-vs-subagent", "stagger", "invalidation", "minimum")
       for m, p in (("gpt-4o", "openai"), ("gemini-2.5-pro", "gemini"), ("deepseek-chat", "deepseek"))},
    **{("ttl", m): f"prefixsim: breakeven ttl does not apply to {m}: it weighs Anthropic's 5m against 1h"
       for m in ("gpt-4o", "gemini-2.5-pro", "deepseek-chat")},
    **{("gemini-explicit", m): f"prefixsim: breakeven gemini-explicit does not apply to {m}: it prices Gemini's"
       for m in ("claude-sonnet-4-5", "gpt-4o", "deepseek-chat")},
    **{(s, "my-model-x"): "prefixsim: unknown model 'my-model-x': its id names no provider's family"
       for s in ("fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum", "gemini-explicit")},
}


@pytest.mark.parametrize("study,model", sorted(REFUSED))
def test_a_study_refuses_another_providers_model_in_one_line(study, model, tmp_path, capsys):
    rc, text = _run(capsys, "breakeven", study, "--model", model, "--out", str(tmp_path))
    assert rc == 2, text
    assert text.startswith(REFUSED[study, model]), text
    assert text.count("\n") == 1 and "Traceback" not in text
    assert not list(tmp_path.iterdir())   # refused before anything is written


def test_the_refusal_names_the_providers_own_rule(capsys):
    _, text = _run(capsys, "breakeven", "ttl", "--model", "gemini-2.5-pro")
    assert "from 2,048 tokens, no write premium" in text and "`prefixsim breakeven gemini-explicit`" in text
    _, text = _run(capsys, "breakeven", "stagger", "--model", "deepseek-chat")
    assert "in 64-token steps from 64 tokens" in text and "under model: deepseek-chat runs deepseek's rules" in text


@pytest.mark.parametrize("model,line", [
    ("gpt-4p", "prefixsim: unknown OpenAI model 'gpt-4p' (known families:"),
    ("claude-sonet-4-5", "prefixsim: unknown Anthropic model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'?)"),
])
def test_a_misspelt_id_of_a_known_family_is_named_as_that_family(model, line, capsys):
    rc, text = _run(capsys, "breakeven", "minimum", "--model", model)
    assert rc == 2 and text.startswith(line) and text.count("\n") == 1, text


@pytest.mark.parametrize("study", ["ttl", "minimum"])
def test_a_claude_model_still_runs_and_agrees_with_the_runner(study, tmp_path, capsys):
    rc, text = _run(capsys, "breakeven", study, "--model", "claude-sonnet-4-5", "--out", str(tmp_path),
                    "--price-date", "2026-11-30")
    assert rc == 0, text
    assert text.startswith("TTL choice" if study == "ttl" else "Minimum cacheable length")
    assert ": agree" in text
