"""The corpus of malformed inputs in tests/malformed/ and the exact message each one gets.

Each input has a `<name>.expected` file holding prefixsim's stderr, line for line. Scenarios go
through `validate` (exit 2, one located line) and `run`, which must refuse them alike (the same
exit, the same located lines: validate checks what run checks, issue 33); logs through `replay` (exit 0: bad lines are
skipped, counted and named) and `replay --strict` (exit 2 on the first bad line, if any). A log
whose every line carries a timestamp replays the same with its lines reversed. A set (`sets/NAME/`:
its entries given as paths) replays every request it holds or names each one it skips.
Regenerate after a deliberate wording change with PREFIXSIM_REGEN=1 and review the diff.
"""
import json
import os
from pathlib import Path

import pytest

from conftest import unversioned

from prefixsim.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "malformed"
SCENARIOS = sorted(p.name for p in (CORPUS / "scenarios").glob("*.yaml"))
LOGS = sorted(p.name for p in (CORPUS / "logs").glob("*.jsonl"))
CASSETTES = sorted(p.name for p in (CORPUS / "cassettes").iterdir() if p.suffix in (".yaml", ".json"))
SETS = sorted(p.name for p in (CORPUS / "sets").iterdir() if p.is_dir())


def _run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code, capsys.readouterr().err


def _check(expected: Path, err: str) -> None:
    if os.environ.get("PREFIXSIM_REGEN"):
        expected.write_text(err)
    assert unversioned(err) == unversioned(expected.read_text())


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


def _timed(path: Path) -> bool:
    """Whether every line of a log parses and carries a timestamp (its file order then tells nothing)."""
    try:
        objs = [json.loads(x) for x in path.read_bytes().decode("utf-8").splitlines() if x.strip()]
    except (ValueError, RecursionError):   # the corpus holds lines that are not JSON, or nested too deep
        return False
    return bool(objs) and all(isinstance(o, dict) and "timestamp" in o and "sessionId" not in o for o in objs)


TIMED = [n for n in LOGS if _timed(CORPUS / "logs" / n)]


def _replay_json(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(["replay", *args, "--format", "json"])
    got = capsys.readouterr()
    return e.value.code, json.loads(got.out), got.err


@pytest.mark.slow
@pytest.mark.parametrize("name", TIMED)
def test_a_timed_log_replays_the_same_with_its_lines_reversed(name, capsys, tmp_path):
    lines = [x + "\n" for x in (CORPUS / "logs" / name).read_text().splitlines()]
    path = tmp_path / name
    docs = []
    for order in (lines, lines[::-1]):
        path.write_text("".join(order))
        code, doc, _ = _replay_json([str(path)], capsys)
        assert code == 0
        docs.append({k: doc[k] for k in ("requests", "summary")})
    assert docs[0] == docs[1]


def _requests_in(folder: Path) -> int:
    """The requests a set's files hold: a log's lines (each its own), a transcript's requestIds
    (one call wherever it is logged)."""
    found: set[object] = set()
    for f in sorted(folder.rglob("*.jsonl")):
        for n, text in enumerate(f.read_text().splitlines(), start=1):
            o = json.loads(text) if text.strip() else {}
            if "requestId" in o:
                found.add(o["requestId"])
            elif "request" in o:
                found.add((f, n))
    return len(found)


@pytest.mark.slow
@pytest.mark.parametrize("name", SETS)
def test_a_set_of_paths_replays_or_names_every_request(name, capsys, monkeypatch):
    folder = CORPUS / "sets" / name
    monkeypatch.chdir(folder)
    code, doc, err = _replay_json(sorted(p.name for p in folder.iterdir()), capsys)
    assert code == 0 and "Traceback" not in err
    _check(CORPUS / "sets" / f"{name}.expected", err)
    assert len(doc["requests"]) + len(doc.get("skipped", [])) == _requests_in(folder)
