"""The README's Quickstart is what CI runs: keep the two in step."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert test_cmd in readme
    assert "pytest" in test_cmd


def test_readme_quickstart_runs_the_main_job():
    readme = (ROOT / "README.md").read_text()
    assert "pip install -q -e . && prefixsim run scenarios/" in readme
