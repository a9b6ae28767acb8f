"""The bench scripts at tiny sizes, so they keep working (their figures are checked by running them
at full size, not here: timings in a test suite would be flaky)."""
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_every_bench_script_runs_and_reports(capsys):
    sys.path.insert(0, str(BENCH))
    try:
        import run_all
        rows = run_all.main(["--small", "--skip", "scaleout"])   # test_parallel covers --workers
    finally:
        sys.path.remove(str(BENCH))
    names = " ".join(r["name"] for r in rows)
    for target in ("(a)", "(b)", "(c)", "(d)", "(e)", "(f)", "(h)", "(i)"):
        assert target in names
    # outputs, unlike timings, are exact even at tiny sizes
    assert next(r for r in rows if r["name"].startswith("(b)"))["value"] <= 1.05
    assert "outputs identical" in capsys.readouterr().out


def test_the_mutation_equivalents_list_parses_and_names_real_modules():
    """bench/mutation.py excuses a surviving mutant only through this list: a merge that breaks the
    TOML, or an entry without its reason, would silently excuse nothing (or everything)."""
    import importlib.util
    import tomllib
    from pathlib import Path

    rows = tomllib.loads((Path(__file__).resolve().parents[2] / "bench" / "mutation_equivalents.toml").read_text())
    rows = rows["equivalent"]
    assert len(rows) > 100
    for row in rows:
        assert set(row) == {"module", "function", "line", "reason"}, row
        assert row["reason"].strip() and row["function"].strip()
        assert importlib.util.find_spec(row["module"]) is not None, row["module"]


def test_replay_accuracy_counts_sessions_against_the_targets(capsys):
    sys.path.insert(0, str(BENCH))
    try:
        import replay_accuracy
        folder = Path(__file__).resolve().parents[1] / "data" / "claude-code" / "claude-code-sidekick"
        per = replay_accuracy.sessions([folder])
        assert replay_accuracy.main([str(folder), "--list", "2"]) == 0
    finally:
        sys.path.remove(str(BENCH))
    out = capsys.readouterr().out
    assert out.startswith(f"{len(per)} sessions, {sum(s.requests for s in per.values()):,} requests: exact ")
    assert "sessions with fewer exact reads than naive: " in out
    for s in per.values():
        assert s.naive <= s.requests and s.exact <= s.requests and s.read > 0


def test_the_bench_readme_runs_with_the_python_on_the_path():
    """bench/README.md's commands are `python bench/...` (issue 34 item 11: they named one machine's
    /work/venv/bin/python), and each script they name is in bench/."""
    text = (BENCH / "README.md").read_text(encoding="utf-8")
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", text, re.S))
    commands = [line.split("#")[0].split() for line in blocks.splitlines() if line.strip()]
    assert commands and all(c[0] == "python" and (BENCH.parent / c[1]).is_file() for c in commands), commands
    assert not re.search(r"\S*/bin/python\b", text)

