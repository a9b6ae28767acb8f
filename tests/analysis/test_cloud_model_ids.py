"""A model id in a cloud's spelling names that cloud on every path (issue 34, leftover of item 8):
`report --model anthropic.claude-3-5-sonnet-20240620-v1:0` failed the price lookup ("no price ... from
provider anthropic ... only from aws, google") because the studies took the provider of the model's
family (anthropic) where replay of an export took bedrock; a scenario with `model: us.anthropic.…` and
no `provider:` failed the same way, and `prefixsim prices us.amazon.nova-lite-v1:0` knew no provider. registry.model_provider is the one inference every path asks."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli_run

from prefixsim.analysis.applies import study_provider
from prefixsim.providers.registry import model_provider, priced_provider
from prefixsim.scenario.checks import provider_of_model
from prefixsim.sources import genai, routers

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]
SONNET_PROFILE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

#: model id -> the provider it names, whoever asks
IDS = {
    "anthropic.claude-3-5-sonnet-20240620-v1:0": "bedrock",
    SONNET_PROFILE: "bedrock",
    "global.anthropic.claude-sonnet-4-5-20250929-v1:0": "bedrock",
    "us-gov.anthropic.claude-3-haiku-20240307-v1:0": "bedrock",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0": "bedrock",
    "us.amazon.nova-lite-v1:0": "bedrock",
    "claude-sonnet-4-5@20250929": "vertex",
    "claude-sonnet-4-5": "anthropic",
    "anthropic/claude-sonnet-4-5": "anthropic",
    "gpt-4o": "openai",
    "gemini-2.5-pro": "gemini",
    "deepseek-chat": "deepseek",
}


@pytest.mark.parametrize("model", sorted(IDS))
def test_every_path_infers_the_provider_a_model_id_names(model):
    want = IDS[model]
    assert model_provider(model) == want
    assert genai.provider_of("", model) == want                # a replayed export that names no provider
    assert routers.provider_of(model) == want                  # an OpenAI-compatible log
    assert (provider_of_model(model) or "anthropic") == want   # a scenario without provider:
    assert priced_provider(model) == want                      # `prefixsim prices` without --provider
    if want in ("anthropic", "bedrock", "vertex") and "nova" not in model and "3-" not in model:
        assert study_provider("fork-vs-subagent", model) == want   # a break-even study and the report


@pytest.mark.parametrize("study,model", [(s, SONNET_PROFILE) for s in
                                         ("ttl", "fork-vs-subagent", "stagger", "invalidation", "minimum")]
                         + [("invalidation", "claude-sonnet-4-5@20250929")])
def test_a_study_of_claude_on_a_cloud_runs_at_that_clouds_price_and_agrees(study, model, tmp_path, capsys):
    """Priced by AWS (Google), checked against the runner under Bedrock's (Vertex AI's) rules. The
    invalidation study's model switch needed a cache of its own there: a workspace does not separate
    caches on a platform whose caches are organisation-wide, so the switch read and the check failed."""
    code, out, err = cli_run(["breakeven", study, "--model", model, "--out", str(tmp_path), *DATE], capsys)
    assert code == 0, err
    assert ": agree" in out, out
    assert ("aws/" if model == SONNET_PROFILE else "google/") in out, out


@pytest.mark.parametrize("study,model,says", [
    ("fork-vs-subagent", "anthropic.claude-3-5-sonnet-20240620-v1:0", "Bedrock asks each of its checkpoints"),
    ("ttl", "us.anthropic.claude-opus-4-1-20250805-v1:0", "Bedrock writes it only with the 5m TTL"),
    ("minimum", "us.amazon.nova-lite-v1:0", "is bedrock's own model, with its own checkpoint rules"),
])
def test_a_cloud_rule_no_closed_form_counts_is_said_in_one_line(study, model, says, tmp_path, capsys):
    code, out, err = cli_run(["breakeven", study, "--model", model, "--out", str(tmp_path), *DATE], capsys)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())


def test_a_report_for_a_bedrock_id_prices_the_studies_at_aws(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, _, err = cli_run(["report", "scenarios/ttl-expiry.yaml", "--model", SONNET_PROFILE, "-o", f"{tmp_path}/",
                            *DATE], capsys)
    assert code == 0, err
    page = (tmp_path / "report.md").read_text()
    assert "aws/regional.anthropic.claude-sonnet-4-5-20250929-v1:0" in page
    assert "## Break-even: Fork vs fresh sub-agent" in page and "CHECK FAILED" not in page


def test_a_report_for_claude_3_5_on_bedrock_says_why_no_study_runs(tmp_path, monkeypatch, capsys):
    model = "anthropic.claude-3-5-sonnet-20240620-v1:0"
    monkeypatch.chdir(ROOT)
    code, _, err = cli_run(["report", "scenarios/ttl-expiry.yaml", "--model", model, "-o", f"{tmp_path}/", *DATE],
                           capsys)
    assert code == 0, err
    page = (tmp_path / "report.md").read_text()
    assert f"## Break-even studies for {model}" in page and "Bedrock asks each of its checkpoints" in page


def test_a_scenario_of_a_bedrock_id_runs_bedrocks_rules_at_aws_prices(tmp_path, capsys):
    path = tmp_path / "bedrock-id.yaml"
    path.write_text(f"name: bedrock-id\nmodel: {SONNET_PROFILE}\nbase:\n  system: 3000\ntimeline:\n  - request: 3\n")
    code, out, err = cli_run(["run", str(path), "--format", "json", "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    assert '"provider": "bedrock"' in out and "aws/regional.anthropic.claude-sonnet-4-5" in out
