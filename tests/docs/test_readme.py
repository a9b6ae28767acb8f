"""The README's Quickstart is what CI runs: keep the two in step. Its library example prints what the
README shows."""
import contextlib
import io
import re

from doc_pages import README, ROOT


def test_ci_runs_the_readme_test_command():
    readme = README.read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert test_cmd in readme
    assert "pytest" in test_cmd


def test_readme_quickstart_runs_the_main_job():
    readme = README.read_text()
    assert "pip install -q -e . && prefixsim run scenarios/" in readme


def test_readme_is_read_in_ten_minutes():
    assert len(README.read_text().splitlines()) <= 200, "the README is a front page: the manual lives in docs/"


def test_readme_library_example_prints_what_the_readme_shows(monkeypatch):
    examples = re.findall(r"```python\n(.*?)```\n\n```text\n(.*?)```", README.read_text(), re.S)
    assert len(examples) == 1, "the README has one library example, with its output"
    code, shown = examples[0]
    assert len([x for x in code.splitlines() if x.strip()]) <= 6
    monkeypatch.chdir(ROOT)   # the example names files from the repository's root
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<README example>", "exec"), {"__name__": "readme_example"})
    assert [x.rstrip() for x in out.getvalue().splitlines()] == [x.rstrip() for x in shown.splitlines()]
