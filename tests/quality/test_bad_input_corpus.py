"""The corpus of malformed inputs in tests/malformed/ and the exact message each one gets.

Each input has a `<name>.expected` file holding prefixsim's stderr, line for line. Scenarios go
through `validate` (exit 2, one located line) and `run`, which must refuse them alike (the same
exit, the same located lines: validate checks what run checks, issue 33); logs through `replay` (exit 0: bad lines are
skipped, counted and named) and `replay --strict` (exit 2 on the first bad line, if any).
Regenerate after a deliberate wording change with PREFIXSIM_REGEN=1 and review the diff.
"""
import os
from pathlib import Path

import pytest

from prefixsim.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "malformed"
SCENARIOS = sorted(p.name for p in (CORPUS / "scenarios").glob("*.yaml"))
LOGS = sorted(p.name for p in (CORPUS / "logs").glob("*.jsonl"))
CASSETTES = sorted(p.name for p in (CORPUS / "cassettes").iterdir() if p.suffix in (".yaml", ".json"))


def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code, capsys.readouterr().err


def _check(expected: Path, err: str) -> None:
    if os.environ.get("PREFIXSIM_REGEN"):
        expected.write_text(err)
    assert err == expected.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("name", SCENARIOS)
def test_bad_scenario_message(name, capsys, monkeypatch):
    monkeypatch.chdir(CORPUS)
    code, err = _run(["validate", f"scenarios/{name}"], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == "prefixsim: 1 scenario file(s) have errors"
    _check(CORPUS / "scenarios" / f"{name}.expected", err)
    code, run_err = _run(["run", "--no-write", f"scenarios/{name}"], capsys)
    assert code == 2 and run_err.splitlines()[:-1] == err.splitlines()[:-1], run_err


@pytest.mark.slow
@pytest.mark.parametrize("name", LOGS)
def test_bad_log_lines_are_skipped_and_named(name, capsys, monkeypatch):
    monkeypatch.chdir(CORPUS / "logs")
    code, err = _run(["replay", name, "--format", "csv"], capsys)
    assert code == 0 and "Traceback" not in err
    _check(CORPUS / "logs" / f"{name}.expected", err)
    skipped = [line for line in err.splitlines() if ": skipped: " in line]
    code, strict_err = _run(["replay", name, "--format", "csv", "--strict"], capsys)
    if skipped:   # --strict: the first skipped line is fatal, named the same way
        first = skipped[0].replace(": skipped: ", ": ", 1)
        assert code == 2 and strict_err.splitlines()[-1] == first + " (--strict: corrupt lines are fatal)"
    else:         # notes lose nothing, so --strict does not stop for them
        assert code == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", CASSETTES)
def test_bad_cassette_interactions_are_skipped_and_named(name, capsys, monkeypatch):
    # A bad interaction is skipped and named by its index; a file that is no cassette is exit 2.
    monkeypatch.chdir(CORPUS / "cassettes")
    code, err = _run(["replay", name, "--format", "csv"], capsys)
    assert code in (0, 2) and "Traceback" not in err
    _check(CORPUS / "cassettes" / f"{name}.expected", err)
    skipped = [line for line in err.splitlines() if ": skipped: " in line]
    if code == 0 and skipped:
        code, strict_err = _run(["replay", name, "--format", "csv", "--strict"], capsys)
        first = skipped[0].replace(": skipped: ", ": ", 1)
        assert code == 2 and strict_err.splitlines()[-1] == first + " (--strict: corrupt lines are fatal)"


def test_every_input_has_its_expected_message():
    inputs = {f"{n}.expected" for n in SCENARIOS} | {f"{n}.expected" for n in LOGS} | \
        {f"{n}.expected" for n in CASSETTES}
    found = {p.name for p in CORPUS.rglob("*.expected")}
    assert inputs == found
