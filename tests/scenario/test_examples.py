"""The example scenarios ship inside the package (so `prefixsim run --examples` and `prefixsim init`
work after `pip install` from any folder) and are the repository's scenarios/, byte for byte."""
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.examples import example_files

ROOT = Path(__file__).resolve().parents[2]


def test_package_examples_are_the_scenarios_folder():
    shipped = {p.name: p.read_bytes() for p in example_files()}
    top = {p.name: p.read_bytes() for p in sorted((ROOT / "scenarios").glob("*.yaml"))}
    assert shipped == top, "copy scenarios/*.yaml to prefixsim/examples/"


def test_package_data_lists_the_examples_and_the_starter():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"examples/*.yaml"' in text and '"templates/*.yaml"' in text


@pytest.mark.slow
def test_run_examples_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # no scenarios/ here: the examples come from the package
    result = CliRunner().invoke(cli, ["run", "--examples", "--no-write", "--price-date", "2026-11-30"])
    assert result.exit_code == 0, result.output
    assert result.output.count("\nquestion: ") == len(example_files())   # each scenario answers its question


def test_run_without_paths_says_what_to_give(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["run"])
    assert result.exit_code == 2 and "--examples" in result.output
