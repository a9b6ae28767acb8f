"""`${var}` placeholders are bounded as YAML aliases are (issue 33, class 8): an 864-byte scenario of
34 nested vars, each "${next}${next}", took 27 s and 4.6 GB, then exit 70 (MemoryError)."""
import time

import pytest

from prefixsim.cli import main
from prefixsim.errors import UserError
from prefixsim.scenario.loader import MAX_SUBSTITUTED, load_runs


def _doubling(n: int) -> str:
    lines = ["name: bomb", "vars:"] + [f'  v{i}: "${{v{i + 1}}}${{v{i + 1}}}"' for i in range(n)]
    return "\n".join(lines + [f'  v{n}: "xxxx"', "base:", '  system: {text: "${v0}"}', "timeline: [request: 1]"]) + "\n"


@pytest.mark.parametrize("command", [["validate"], ["run", "--no-write"]])
def test_nested_doubling_vars_are_refused_in_a_second_at_their_line(tmp_path, capsys, command):
    p = tmp_path / "s.yaml"
    p.write_text(_doubling(34))
    began = time.monotonic()
    with pytest.raises(SystemExit) as e:
        main([*command, str(p)])
    assert time.monotonic() - began < 5
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.splitlines()[0].startswith(f"{p}:3:3: the `${{...}}` placeholders expand to more than "
                                          f"{MAX_SUBSTITUTED:,} characters")


def test_a_few_doublings_are_text_like_any_other(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(_doubling(10))   # 4 x 2^10 characters
    [run] = load_runs(str(p))
    assert run.settings.base.system.text == "x" * 4 * 2 ** 10


def test_a_value_placed_whole_counts_its_values_as_an_alias_does(tmp_path):
    # A list of 1,000 values, placed 2,000 times as a whole value: 2 M values, past MAX_NODES.
    p = tmp_path / "s.yaml"
    items = ", ".join(["1"] * 1000)
    p.write_text(f"name: s\nvars:\n  many: [{items}]\nbase:\n  history:\n" + "".join(
        '    - {role: user, content: "${many}"}\n' for _ in range(2000)) + "timeline: [request: 1]\n")
    began = time.monotonic()
    with pytest.raises(UserError, match=r"placeholders expand to more than 1,000,000 values") as e:
        load_runs(str(p))
    assert time.monotonic() - began < 5 and e.value.line is not None


def test_the_budget_is_the_files_over_every_sweep_value(tmp_path):
    # 400,000 characters a value, for 100 sweep values: 40 M, past the file's 32 Mi characters
    p = tmp_path / "s.yaml"
    p.write_text("name: s\nvars:\n  big: " + "y" * 400_000 + "\nbase:\n  system: {text: \"${big}${g}\"}\n"
                 "sweep: {param: g, range: [1, 100, 1]}\ntimeline: [request: 1]\n")
    with pytest.raises(UserError, match="placeholders expand to more than"):
        load_runs(str(p))


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_swept_parameter_used_nowhere_is_refused_at_its_line(tmp_path, capsys, command):
    """Issue 34 item 9: `sweep: {param: stager, ...}` with no `${stager}` validated and ran every variant
    once per value with nothing changed (duplicate rows). Refused at sweep.param, exit 2, naming what
    was probably meant: the key the value belongs to, or the placeholder the file does write."""
    p = tmp_path / "s.yaml"
    p.write_text("name: s\ntokenizer: approx\ntimeline:\n  - request: 1\n  - fork: {children: 3, stagger: 2}\n"
                 "sweep: {param: stager, values: [0, 2, 5]}\n")
    with pytest.raises(SystemExit) as e:
        main([command, str(p), *(["--no-write"] if command == "run" else [])])
    assert e.value.code == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{p}:6:9: sweep.param 'stager' is used nowhere") and "`stagger: ${stager}`" in first
    p.write_text(p.read_text().replace("stagger: 2}", 'stagger: "${stagger}"}'))
    with pytest.raises(UserError, match=r"did you mean sweep: \{param: stagger\}"):
        load_runs(str(p))
    p.write_text(p.read_text().replace("param: stager", "param: stagger"))
    assert len(load_runs(str(p))) == 3
