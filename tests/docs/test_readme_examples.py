"""The README's examples run as written from the repository's root, against the shipped scenarios and
the real traffic in tests/data, and print the lines the README shows: its Quickstart output, `run`,
`breakeven` and `replay` examples are the tool's real output. Dates (genai-prices' "prices as of")
are compared as DATE, so the README stays true on any day; report files go to a temporary folder."""
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def examples():
    """Each `$ prefixsim ...` line inside a ```-block of the README: (command words, lines shown after it)."""
    text = (ROOT / "README.md").read_text()
    env = dict(re.findall(r"^\$ (\w+)=(\S+)$", text, re.M))   # shell variables the examples set
    out = []
    for block in re.split(r"^```.*$", text, flags=re.M)[1::2]:   # the insides of the fenced blocks
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ prefixsim "):
                cmd = re.sub(r"\$(\w+)", lambda m: env[m.group(1)], line[2:])
                shown = []
                for x in lines[i + 1:]:
                    if x.startswith("$"):
                        break
                    if x.strip() and x != "...":
                        shown.append(x)
                out.append((shlex.split(cmd)[1:], shown))
    return out


def test_the_readme_has_examples_on_shipped_data():
    cmds = [" ".join(c) for c, _ in examples()]
    assert any("tests/data/claude-code" in c for c in cmds) and any("tests/data/mooncake" in c for c in cmds)
    assert "run scenarios/" in cmds   # the Quickstart's own command, with its output
    assert any(c.startswith("run ") and "-v" in c.split() for c in cmds)
    assert any(c.startswith("breakeven ") for c in cmds)


def _writes_nowhere(args, tmp):
    """The example's own arguments, with its report files sent to `tmp` (the output is the same)."""
    if args[0] in ("run", "advise"):
        return [*args, "--no-write"]
    if args[0] == "breakeven":
        return [*args, "--out", str(tmp)]
    return args


@pytest.mark.slow
@pytest.mark.parametrize("args,shown", examples(), ids=lambda x: " ".join(x)[-60:])
def test_readme_example_runs_and_prints_what_the_readme_shows(args, shown, monkeypatch, no_network, tmp_path):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, _writes_nowhere(args, tmp_path))
    assert result.exit_code == 0, result.output
    printed = [DATE.sub("DATE", line.rstrip()) for line in result.output.splitlines()]
    assert shown, f"the README shows nothing after `prefixsim {' '.join(args)}`"
    for line in shown:
        assert DATE.sub("DATE", line.rstrip()) in printed, \
            f"README shows {line!r}; `prefixsim {' '.join(args)}` does not print it"
