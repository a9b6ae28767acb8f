"""The README's replay and engine examples run as written from the repository's root, against the
real traffic in tests/data, and print the lines the README shows."""
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def examples():
    """Each ```-block of the README that runs `$ prefixsim replay`: (command words, lines shown after it)."""
    text = (ROOT / "README.md").read_text()
    env = dict(re.findall(r"^\$ (\w+)=(\S+)$", text, re.M))   # shell variables the examples set
    out = []
    for block in re.split(r"^```.*$", text, flags=re.M)[1::2]:   # the insides of the fenced blocks
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ prefixsim replay"):
                cmd = re.sub(r"\$(\w+)", lambda m: env[m.group(1)], line[2:])
                shown = [x for x in lines[i + 1:] if x.strip() and x != "..." and not x.startswith("$")]
                out.append((shlex.split(cmd)[1:], shown))
    return out


def test_the_readme_has_replay_examples_on_shipped_data():
    cmds = [" ".join(c) for c, _ in examples()]
    assert any("tests/data/claude-code" in c for c in cmds) and any("tests/data/mooncake" in c for c in cmds)


@pytest.mark.parametrize("args,shown", examples(), ids=lambda x: " ".join(x)[-60:])
def test_readme_example_runs_and_prints_what_the_readme_shows(args, shown, monkeypatch, no_network):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    printed = [line.rstrip() for line in result.output.splitlines()]
    for line in shown:
        assert line.rstrip() in printed, f"README shows {line!r}; `prefixsim {' '.join(args)}` does not print it"
