import json

from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.replay.diff import diff_requests
from prefixsim.wire.anthropic import render_anthropic

BASE = {"model": "claude-sonnet-4-5", "system": "You are terse. " * 50,
        "messages": [{"role": "user", "content": "What is 2+2? Answer briefly."}]}


def test_parting_in_the_system_layer():
    other = {**BASE, "system": "You are terse! " + "You are terse. " * 49}
    d = diff_requests(render_anthropic(BASE), render_anthropic(other))
    assert (d.block, d.layer, d.path, d.byte) == (0, "system", "system[0]", 36)
    assert d.shared_tokens == 0 and d.rewritten_tokens > 0 and d.cost_usd > 0
    assert "terse." in d.before and "terse!" in d.after


def test_extension_and_parameter_change():
    longer = {**BASE, "messages": BASE["messages"] + [{"role": "assistant", "content": "4"}]}
    assert diff_requests(render_anthropic(BASE), render_anthropic(longer)).block is None
    tc = {**longer, "tool_choice": {"type": "auto"}}
    d = diff_requests(render_anthropic(longer), render_anthropic(tc))
    assert d.block == 1 and "parameters changed" in d.path


def test_cli_two_files_and_log_indices(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(BASE))
    b.write_text(json.dumps({**BASE, "messages": [{"role": "user", "content": "What is 3+3?"}]}))
    out = CliRunner().invoke(cli, ["diff", str(a), str(b)])
    assert out.exit_code == 0 and "messages layer, messages[0].content[0]" in out.output
    log = tmp_path / "log.jsonl"
    log.write_text(a.read_text() + "\n" + b.read_text() + "\n")
    js = CliRunner().invoke(cli, ["diff", str(log), "--index", "0", "1", "--format", "json"])
    assert json.loads(js.output)["block"] == 1
    bad = CliRunner().invoke(cli, ["diff", str(log), "--index", "0", "9"])
    assert bad.exit_code != 0 and "out of range" in str(bad.exception)
