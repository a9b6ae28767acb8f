"""`report --model` for a model of any provider (issue 34 items 8 and 11): the studies that apply run,
each that does not says why in one line on the page (analysis/applies.py), and only a model no
provider's family names is refused. `report --model gpt-4o` said "the report's break-even studies
model Anthropic's rules, so name a Claude model" and wrote nothing."""
from pathlib import Path

from conftest import cli_run

from prefixsim.analysis.applies import not_applying
from prefixsim.scenario.studynames import STUDY_NAMES

ROOT = Path(__file__).resolve().parents[2]
DATE = ["--price-date", "2026-11-30"]


def test_which_studies_apply_follows_the_models_provider():
    assert not_applying(STUDY_NAMES, "claude-sonnet-4-5") == {}
    assert not_applying(STUDY_NAMES, "claude-sonnet-4-5@20250929") == {}   # Vertex's id of the same model
    openai = not_applying(STUDY_NAMES, "gpt-4o")
    assert set(openai) == set(STUDY_NAMES)
    assert openai["ttl"].startswith("breakeven ttl does not apply to gpt-4o: it weighs Anthropic's 5m against 1h")
    assert all("\n" not in why and "name a Claude model" not in why for why in openai.values())


def test_a_report_for_gpt_4o_says_why_each_study_does_not_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, _, err = cli_run(["report", "scenarios/ttl-expiry.yaml", "--model", "gpt-4o", "-o", f"{tmp_path}/", *DATE],
                           capsys)
    assert code == 0, err
    page = (tmp_path / "report.md").read_text()
    assert "## Break-even studies for gpt-4o" in page and "name a Claude model" not in page
    for study in STUDY_NAMES:
        assert f"breakeven {study} " in page
    assert "## Break-even: " not in page   # no study priced gpt-4o under Anthropic's rules
    assert "## Scenario: ttl-expiry" in page


def test_a_report_refuses_only_a_model_no_family_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    for model, says in (("claude-sonet-4-5", "did you mean 'claude-sonnet-4-5'?"),
                        ("foo-1", "its id names no provider's family")):
        code, _, err = cli_run(["report", "scenarios/ttl-expiry.yaml", "--model", model, "-o", f"{tmp_path}/",
                                *DATE], capsys)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "report.md").exists()
