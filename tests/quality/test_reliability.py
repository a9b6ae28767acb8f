"""Trust: bugs exit 70 (traceback behind --debug), every command runs offline, outputs are
byte-identical across runs and hash seeds, several inputs survive one bad one, HTML escapes."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import cli_exit as _exit

from prefixsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "malformed" / "logs"
SMALL = "name: small\nprovider: prefix\ntokenizer: approx\nbase: {system: 300}\ntimeline: [request: 2, wait: 10m, request: 1]\n"


def test_a_bug_exits_70_with_a_short_message_and_debug_shows_the_traceback(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.yaml").write_text(SMALL)

    def broken(*a, **k):
        raise RuntimeError("simulated bug")
    monkeypatch.setattr("prefixsim.scenario.parallel.load_runs", broken)   # what validate and run load with
    code, out, err = _exit(["validate", str(tmp_path / "s.yaml")], capsys)
    assert code == 70
    assert err == "prefixsim: internal error: RuntimeError: simulated bug (rerun with --debug for the traceback)\n"
    with pytest.raises(RuntimeError, match="simulated bug"):   # --debug: the exception, traceback and all
        main(["--debug", "validate", str(tmp_path / "s.yaml")])


def test_a_user_error_is_one_line_and_exit_2(tmp_path, capsys):
    code, out, err = _exit(["replay", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err


# Every command, in one process whose sockets refuse to connect (a sitecustomize installs the guard
# before prefixsim or any dependency is imported).
OFFLINE = textwrap.dedent("""
    import socket
    def refuse(*a, **k):
        raise OSError("network access attempted")
    socket.socket.connect = socket.socket.connect_ex = refuse
    socket.create_connection = socket.getaddrinfo = refuse
""")
COMMANDS = textwrap.dedent("""
    import sys
    from prefixsim.cli import main
    failed = []
    for args in {commands!r}:
        try:
            main(args)
        except SystemExit as e:
            if e.code and (args[0], e.code) != ("diff", 1):   # diff exits 1 for bodies that differ, as diff(1)
                failed.append((args[0], e.code))
    print("FAILED", failed)
""")


@pytest.mark.slow
def test_every_command_runs_with_sockets_blocked(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(OFFLINE)
    (tmp_path / "s.yaml").write_text(SMALL)
    body = {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    (tmp_path / "a.json").write_text(json.dumps(body))
    (tmp_path / "b.json").write_text(json.dumps({**body, "system": "be brief"}))
    s, out, log = str(tmp_path / "s.yaml"), str(tmp_path / "out"), str(LOGS / "out-of-order.jsonl")
    commands = [["run", s, "--out", out, "--price-date", "2026-11-30"], ["validate", s], ["schema"],
                ["replay", log], ["advise", log],
                ["search", str(ROOT / "scenarios" / "agent-design-space.yaml"), "--no-write", "--price-date", "2026-11-30"],
                ["replay", str(ROOT / "tests" / "fixtures" / "gemini" / "explicit.jsonl")], ["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")],
                ["breakeven", "minimum", "--out", out, "--price-date", "2026-11-30"],
                ["report", s, "-o", str(tmp_path / "out" / "r.html"), "--price-date", "2026-11-30"],
                ["init", str(tmp_path / "init")], ["prices", "claude-opus-4-1", "--provider", "vertex", "--date", "2026-11-30"]]
    from prefixsim.cli import COMMANDS as ALL
    assert {c[0] for c in commands} == set(ALL)   # a new command joins this list
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    p = subprocess.run([sys.executable, "-c", COMMANDS.format(commands=commands)], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert "FAILED []" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    assert "network access attempted" not in p.stderr


def _outputs(tmp_path, seed: str) -> dict[str, bytes]:
    """Every report file of a run and every replay format, produced under one PYTHONHASHSEED."""
    out = tmp_path / f"out-{seed}"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    cli = [sys.executable, "-c", "from prefixsim.cli import main; main()"]
    files = {}
    scenarios = [str(ROOT / "scenarios" / "seed-fork-chapter.yaml"), str(tmp_path / "s.yaml")]
    p = subprocess.run([*cli, "run", *scenarios, "--out", str(out), "--price-date", "2026-11-30", "--format",
                        "markdown"], capture_output=True, env=env, cwd=tmp_path)
    files["run stdout"] = p.stdout
    files.update({str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()})
    for fmt in ("json", "csv", "markdown"):
        p = subprocess.run([*cli, "replay", str(LOGS / "out-of-order.jsonl"), str(LOGS / "duplicate-ids.jsonl"),
                            "--format", fmt, "--ttl", "1h"], capture_output=True, env=env, cwd=tmp_path)
        files[f"replay {fmt}"] = p.stdout
    p = subprocess.run([*cli, "replay", str(ROOT / "tests" / "data" / "gemini-api"
                                            / "test_google_model_cached_content.yaml"), "--format", "json"],
                       capture_output=True, env=env, cwd=tmp_path)
    files["replay gemini"] = p.stdout
    p = subprocess.run([*cli, "advise", str(ROOT / "tests" / "fixtures" / "advise" / "system-timestamp.jsonl"),
                        str(LOGS / "out-of-order.jsonl"), "--format", "json"], capture_output=True, env=env, cwd=tmp_path)
    files["advise json"] = p.stdout
    return files


@pytest.mark.slow
def test_outputs_are_byte_identical_across_runs_and_hash_seeds(tmp_path):
    (tmp_path / "s.yaml").write_text(SMALL)
    a, b = _outputs(tmp_path, "0"), _outputs(tmp_path, "4242")
    assert a.keys() == b.keys() and {"small/results.json", "small/requests.csv", "small/summary.md"} <= a.keys()
    assert all(a[k] for k in a)
    assert [k for k in a if a[k] != b[k]] == []


def test_replay_of_several_paths_reports_the_good_ones_and_names_the_bad(tmp_path, capsys):
    bad = tmp_path / "garbage.jsonl"
    bad.write_bytes(b"\x00\x01 not a log\n")
    code, out, err = _exit(["replay", str(LOGS / "duplicate-ids.jsonl"), str(bad), "--format", "csv", "--requests"],
                           capsys)
    assert code == 2
    assert len(out.splitlines()) == 3   # header + the two usable requests of the good log
    assert err.splitlines()[-1] == f"prefixsim: 1 of 2 paths failed: {bad}"


@pytest.mark.slow
def test_html_report_escapes_a_script_scenario_name(tmp_path, capsys):
    (tmp_path / "evil.yaml").write_text("name: '<script>alert(1)</script>'\n" + SMALL.split("\n", 1)[1])
    code, out, err = _exit(["report", str(tmp_path / "evil.yaml"), "-o", str(tmp_path / "r.html"),
                            "--price-date", "2026-11-30"], capsys)
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script" not in html


def test_advise_bad_input_is_one_line_naming_file_and_line(capsys):
    bad = str(LOGS / "corrupt-middle.jsonl")
    code, out, err = _exit(["advise", "--strict", bad], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith(f"{bad}:2: not valid JSON")
    code, out, err = _exit(["advise", bad], capsys)   # skipped and named; the rest is advised on
    assert code == 0 and f"{bad}:2: skipped: not valid JSON" in err and out.startswith("predicted cost $")
