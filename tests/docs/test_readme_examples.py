"""The examples of README.md and docs/*.md run as written from the repository's root, against the
shipped scenarios and the real traffic in tests/data, and print the lines the page shows: the
Quickstart output, the `run`, `advise`, `breakeven` and `replay` examples are the tool's real output.
Dates (genai-prices' "prices as of") and genai-prices' version are compared as DATE and VERSION
(doc_pages.comparable), so the pages stay true on any day and release of the same rates; report files
go to a temporary folder."""

import pytest
from click.testing import CliRunner
from doc_pages import README, ROOT, cli_examples, comparable, name

from prefixsim.cli import cli

def examples():
    """Each `$ prefixsim ...` example of README.md and docs/*.md: (page, command words, lines shown after it)."""
    return cli_examples()


def test_the_pages_have_examples_on_shipped_data():
    cmds = [" ".join(c) for _, c, _ in examples()]
    assert any("tests/data/claude-code" in c for c in cmds) and any("tests/data/mooncake" in c for c in cmds)
    assert any(c.startswith("run ") and "-v" in c.split() for c in cmds)
    assert any(c.startswith("breakeven ") for c in cmds)
    assert len(cmds) >= 23, f"{len(cmds)} examples: one was lost (19 moved from the README to docs/, 4 new in it)"


def test_the_readme_shows_run_replay_and_advise():
    cmds = [" ".join(c) for p, c, _ in examples() if p == name(README)]
    assert "run scenarios/" in cmds   # the Quickstart's own command, with its output
    for command in ("run", "replay", "advise"):
        assert any(c.startswith(command + " ") for c in cmds), f"the README shows no `prefixsim {command}`"


def _writes_nowhere(args, tmp):
    """The example's own arguments, with its report files sent to `tmp` (the output is the same)."""
    if args[0] in ("run", "advise", "search"):
        return [*args, "--no-write"]
    if args[0] == "breakeven":
        return [*args, "--out", str(tmp)]
    return args


@pytest.mark.slow
@pytest.mark.parametrize("page,args,shown", examples(),
                         ids=lambda x: (x.split("/")[-1] if isinstance(x, str) else " ".join(x)[-60:]))
def test_doc_example_runs_and_prints_what_the_page_shows(page, args, shown, monkeypatch, no_network, tmp_path):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, _writes_nowhere(args, tmp_path))
    assert result.exit_code == 0, result.output
    printed = [comparable(line) for line in result.output.splitlines()]
    assert shown, f"{page} shows nothing after `prefixsim {' '.join(args)}`"
    for line in shown:
        assert comparable(line) in printed, \
            f"{page} shows {line!r}; `prefixsim {' '.join(args)}` does not print it"
