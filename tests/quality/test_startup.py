"""Start-up: a command imports and loads only what it uses (pyplot never; pandas only for a
DataFrame). Checked in a fresh interpreter."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import data_file

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.slow
def test_help_loads_no_pandas_matplotlib_nor_tiktoken():
    mods = _modules_after("import contextlib, io\nfrom prefixsim.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
                          "    main(['--help'])")
    assert "prefixsim.cli" in mods
    # pydantic (the scenario schema) was 71 of --help's 146 ms, through the breakeven command's study list
    assert not {m for m in mods if m.split(".")[0] in ("pandas", "matplotlib", "tiktoken", "pydantic", "pydantic_core")}
    # nor a command's module: the list comes from cli.SUMMARIES (their imports were a third of --help's own)
    assert not {m for m in mods if m.startswith("prefixsim.commands.") or m.startswith("prefixsim.io.fs")}


@pytest.mark.slow
def test_charts_are_drawn_without_pyplot():
    mods = _modules_after("from prefixsim.report import charts as c\n"
                          "c.render_both(c.line_figure(c.LineChart('t', 'x', 'y', [c.Series('a', [1, 2], [2, 1])])))")
    assert "matplotlib.figure" in mods and "matplotlib.pyplot" not in mods


@pytest.mark.slow
def test_replay_json_needs_no_pandas_nor_matplotlib():
    path = data_file("claude-code", "spotter", "short.jsonl")
    mods = _modules_after("import contextlib, io\nfrom prefixsim.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
                          f"    main(['replay', {str(path)!r}, '--format', 'json'])")
    assert "prefixsim.replay" in mods
    assert not {m for m in mods if m.split(".")[0] in ("pandas", "matplotlib", "numpy")}



@pytest.mark.slow
def test_replay_text_loads_no_engines_results_nor_price_tables_it_does_not_use():
    """A transcript replay printed as text: no serving-engine modules (only trace replays and GPU
    columns use them), no scenario results or report tables; genai-prices and tiktoken only when the
    start-up memo is off (tests/perf/test_diskcache.py: with it filled, neither)."""
    path = data_file("claude-code", "spotter", "short.jsonl")
    mods = _modules_after("import contextlib, io\nfrom prefixsim.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
                          f"    main(['replay', {str(path)!r}])")
    assert "prefixsim.replay" in mods
    assert not {m for m in mods if m.startswith(("prefixsim.engines", "prefixsim.scenario.results", "prefixsim.report.tables"))}
    # nor the readers of API logs and cassettes (a transcript is told from its first line)
    assert not mods & {"prefixsim.sources.anthropic_log", "prefixsim.sources.openai_log", "prefixsim.sources.gemini_log",
                       "prefixsim.wire.anthropic",
                       # nor the JSON document's module, nor the rules of the automatic caches (OpenAI, ...)
                       "prefixsim.replay.output", "prefixsim.providers.automatic"}
