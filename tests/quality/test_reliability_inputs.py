"""Inputs prefixsim reads itself (scenarios, price sheets, `file:` bodies) fail as one located line,
exit 2, whatever they hold: not a regular file, too big, alias bombs, non-finite or huge numbers,
values nobody foresaw. Plus the scale limits of `--workers` and break-even parameters, and
reports that are always valid JSON. (Single-file cases live in tests/malformed/scenarios/.)"""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import prefixsim
from conftest import cli_exit as _exit

from prefixsim.errors import UserError

#: The code under test, for child processes (the same tree this process imported).
CODE = str(Path(prefixsim.__file__).resolve().parents[1])
SMALL = "name: small\nprovider: prefix\ntokenizer: approx\nbase: {system: 300}\ntimeline: [request: 2]\n"


def _child(args, cwd, timeout=60):
    """prefixsim in a child process: a FIFO would block this one forever on the old code."""
    env = {**os.environ, "PYTHONPATH": CODE}
    return subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


# --- only regular files, under a size cap -------------------------------------------------------

@pytest.mark.slow
def test_a_fifo_scenario_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "s.yaml")
    p = _child(["validate", "s.yaml"], tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == "s.yaml: not a regular file (a FIFO); a scenario is read from a plain file"


def test_a_socket_scenario_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind("s.yaml")
        code, _, err = _exit(["validate", "s.yaml"], capsys)
    finally:
        sock.close()
    assert code == 2
    assert err.splitlines()[0] == "s.yaml: not a regular file (a socket); a scenario is read from a plain file"


def test_a_huge_sparse_scenario_is_refused_by_its_size(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with open("s.yaml", "wb") as fh:
        fh.truncate(2 << 30)   # 2 GiB of nothing: read whole, it exhausted memory
    code, _, err = _exit(["validate", "s.yaml"], capsys)
    assert code == 2
    assert err.splitlines()[0] == "s.yaml: scenario is 2,048 MiB, over the 8 MiB limit"


def test_a_file_reference_to_a_fifo_or_an_oversized_body_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    os.mkfifo("body.json")
    Path("s.yaml").write_text("name: s\nbase: {file: body.json}\ntimeline: [request: 1]\n")
    code, _, err = _exit(["validate", "s.yaml"], capsys)
    assert code == 2
    assert err.splitlines()[0] == "body.json: not a regular file (a FIFO); a request body is read from a plain file"
    os.unlink("body.json")
    with open("body.json", "wb") as fh:
        fh.truncate(40 << 20)
    code, _, err = _exit(["validate", "s.yaml"], capsys)
    assert code == 2
    assert err.splitlines()[0] == "body.json: request body is 40 MiB, over the 32 MiB limit"


# --- price sheets (breakeven --prices) -------------------------------------------------------------

@pytest.mark.parametrize("sheet,expected", [
    ("claude-sonnet-4-5: {input: .nan, output: 15}\n",
     "p.yaml:1:21: claude-sonnet-4-5.input: NaN is not a usable number; give a finite value"),
    ("claude-sonnet-4-5: {input: 1e308, output: 15}\n",
     "p.yaml:1:21: price sheet for claude-sonnet-4-5: input 1e+308 is out of range (0 to 1,000,000 USD per MTok)"),
    ("claude-sonnet-4-5:\n  input: 3\n  output: 1e400\n",
     "p.yaml:3:3: claude-sonnet-4-5.output: the number is infinite (or too large to represent); give a finite value"),
    ("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
     "p.yaml: more than 1,000,000 values once YAML aliases are expanded (an alias bomb?); write the price sheet out plainly"),
])
def test_price_sheet_values_are_checked_at_their_line(tmp_path, monkeypatch, capsys, sheet, expected):
    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(sheet)
    code, _, err = _exit(["breakeven", "ttl", "--prices", "p.yaml", "--out", "out"], capsys)
    assert code == 2 and err.splitlines() == [expected]


@pytest.mark.slow
def test_a_json_price_sheet_refuses_nan_and_a_fifo_sheet_is_not_waited_on(tmp_path):
    Path(tmp_path / "p.json").write_text('{"claude-sonnet-4-5": {"input": NaN, "output": 15}}')
    p = _child(["breakeven", "ttl", "--prices", "p.json", "--out", "out"], tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines() == ["p.json:1:33: NaN is not JSON (and not a usable number); give a finite value"]
    os.mkfifo(tmp_path / "f.yaml")
    p = _child(["breakeven", "ttl", "--prices", "f.yaml", "--out", "out"], tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines() == ["f.yaml: not a regular file (a FIFO); a price sheet is read from a plain file"]


def test_the_yaml_limits_are_one_reusable_check_for_any_loaded_document():
    """A document another reader loaded (a cassette, with ruamel's safe loader) gets the same limits."""
    from ruamel.yaml import YAML

    from prefixsim.io.yamlfile import check_tree

    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcde", "bcdef"))
    doc = YAML(typ="safe", pure=True).load(bomb)
    with pytest.raises(UserError, match="more than 1,000,000 values once YAML aliases are expanded"):
        check_tree(doc, "c.yaml", "cassette")
    cyclic = YAML(typ="safe", pure=True).load("a: &a [1, *a]\n")
    with pytest.raises(UserError, match="refers to a value that contains it"):
        check_tree(cyclic, "c.yaml", "cassette")
    with pytest.raises(UserError, match="NaN"):
        check_tree({"usage": {"input_tokens": float("nan")}}, "c.yaml", "cassette")


# --- the loader's error boundary ---------------------------------------------------------------------

def test_an_unforeseen_value_fault_while_loading_names_the_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.yaml").write_text(SMALL)

    def overflow(*a, **k):
        raise OverflowError("int too large to convert to float")
    monkeypatch.setattr("prefixsim.scenario.loader.check_run", overflow)
    code, _, err = _exit(["validate", str(tmp_path / "s.yaml")], capsys)
    assert code == 2
    assert err.splitlines()[0] == (f"{tmp_path / 's.yaml'}: cannot use a value in this file "
                                   "(OverflowError: int too large to convert to float)")


def test_an_unforeseen_value_fault_while_playing_names_the_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.yaml").write_text(SMALL)

    def bad_text(*a, **k):
        raise TypeError("sequence item 0: expected str instance, list found")
    monkeypatch.setattr("prefixsim.scenario.builder.Timeline.play", bad_text)
    code, _, err = _exit(["run", "--no-write", str(tmp_path / "s.yaml")], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[0] == (f"{tmp_path / 's.yaml'}: cannot use a value in this file "
                                   "(TypeError: sequence item 0: expected str instance, list found)")


# --- sweeps: validate and run agree ------------------------------------------------------------------

@pytest.mark.parametrize("sweep", ["{param: g, values: []}", "{param: g, range: [5, 1, 1]}"])
def test_an_empty_sweep_fails_run_as_it_fails_validate(tmp_path, capsys, sweep):
    (tmp_path / "s.yaml").write_text(SMALL + f"sweep: {sweep}\n")
    for args in (["validate"], ["run", "--no-write"]):
        code, _, err = _exit([*args, str(tmp_path / "s.yaml")], capsys)
        # Every mistake is reported: the empty sweep, and its parameter used nowhere in SMALL.
        assert code == 2 and any("gives no values" in line for line in err.splitlines()) and "Traceback" not in err


# --- reports are JSON ----------------------------------------------------------------------------------

def test_the_report_encoder_refuses_nan_and_infinity():
    from prefixsim.report.tables import json_text

    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            json_text({"t": bad})


@pytest.mark.parametrize("step", ["wait: .nan", "wait: .inf", "{request: {after: 1e400}}"])
def test_a_non_finite_time_never_reaches_results_json(tmp_path, capsys, step):
    """These ran and wrote `"t": NaN` / `Infinity` into results.json (not JSON); now they stop at load."""
    (tmp_path / "s.yaml").write_text(SMALL.replace("[request: 2]", f"\n  - request: 1\n  - {step}\n  - request: 1"))
    code, out, err = _exit(["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "r"), "--format", "json"], capsys)
    assert code == 2 and err.startswith(f"{tmp_path / 's.yaml'}:7:")
    assert not (tmp_path / "r").exists()


# --- scale limits of options -----------------------------------------------------------------------------

def test_workers_are_capped_at_tasks_and_cores(monkeypatch, tmp_path):
    import joblib

    from prefixsim.scenario.parallel import run_files

    asked = []
    real = joblib.Parallel

    class Recording(real):
        def __init__(self, n_jobs=None, **kw):
            asked.append(n_jobs)
            super().__init__(n_jobs=1, **kw)   # run in this process: the cap, not the pool, is tested
    monkeypatch.setattr(joblib, "Parallel", Recording)
    paths = []
    for i in range(3):
        (tmp_path / f"s{i}.yaml").write_text(SMALL.replace("small", f"small{i}"))
        paths.append(str(tmp_path / f"s{i}.yaml"))
    results = list(run_files(paths, workers=1000))
    assert len(results) == 3 and not any(isinstance(r, UserError) for r in results)
    assert asked == [] or max(asked) <= min(3, os.cpu_count() or 1)
    assert all(0 < n <= min(3, os.cpu_count() or 1) for n in asked)


@pytest.mark.parametrize("study,param,message", [
    ("fork-vs-subagent", "children=1000000", "--param children: 1000000 is out of its range, 1 to 10,000"),
    ("fork-vs-subagent", "parent_static=100000000", "--param parent_static: 100000000 is out of its range, 0 to 1,000,000 tokens"),
    ("stagger", "ttft=inf", "--param ttft: 'inf' must be a finite number, not negative"),
    ("stagger", "ttft=nan", "--param ttft: 'nan' must be a finite number, not negative"),
    ("minimum", "requests=99999999", "--param requests: 99999999 is out of its range, 1 to 10,000"),
])
def test_breakeven_parameters_have_scale_limits(study, param, message):
    from prefixsim.scenario.studycheck import parse_pairs as _parse_params

    with pytest.raises(UserError) as e:
        _parse_params(study, (param,))
    assert e.value.message == message


def test_breakeven_children_times_turns_is_limited(tmp_path, capsys):
    code, _, err = _exit(["breakeven", "fork-vs-subagent", "-p", "children=5000", "-p", "turns=100",
                          "--out", str(tmp_path)], capsys)
    assert code == 2
    assert err == ("prefixsim: --param children x turns x 2 designs x 2 histories = 2,000,000 requests the check "
                   "simulates (at most 10,000); lower children, turns or the designs compared\n")
