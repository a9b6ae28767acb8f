"""Claude Code hook dumps (`logs/chat.json`: the transcript's lines as one JSON array), read as the
transcript they hold: the real sample from lvalics/claude_code_stuffs gives what its line-per-line
conversion gives."""
import json

import pytest

from click.testing import CliRunner
from conftest import data_file

from prefixsim.cli import cli
from prefixsim.errors import UserError
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting

SAMPLE = ("claude-code", "claude-code-stuffs", "chat.json")


def _jsonl(elements, path):
    path.write_text("".join(json.dumps(x) + "\n" for x in elements))
    return path


def _same(a, b):
    """Records equal but for where they came from (file, line)."""
    assert [(r.request_id, r.timestamp, r.observed, r.call.t, r.call.stream, r.call.ttft,
             tuple((x.data, x.tokens, x.breakpoint) for x in r.call.request.blocks)) for r in a] == \
           [(r.request_id, r.timestamp, r.observed, r.call.t, r.call.stream, r.call.ttft,
             tuple((x.data, x.tokens, x.breakpoint) for x in r.call.request.blocks)) for r in b]


def test_a_hook_dump_replays_as_its_line_per_line_transcript(tmp_path):
    p = data_file(*SAMPLE)
    assert detect(p) == "claude-code"
    converted = _jsonl(json.loads(p.read_text()), tmp_path / "chat.jsonl")
    dump, lines = load(p), load(converted)
    assert len(dump) == 13
    _same(dump, lines)
    rows = replay(dump).rows
    assert [r.predicted for r in rows] == [r.predicted for r in replay(lines).rows]
    assert sum(r.observed.cache_read == r.predicted.cache_read for r in rows) == 12


def test_each_request_is_named_at_the_line_its_element_starts_on():
    p = data_file(*SAMPLE)
    text = p.read_text().splitlines()
    for r in load(p):
        assert text[r.line - 1] == "  {", r.line   # json.dumps(indent=2): an element opens its line
        assert any(r.request_id in line for line in text[r.line:r.line + 40])


def test_an_array_of_other_hook_payloads_is_not_a_transcript(tmp_path):
    p = tmp_path / "post_tool_use.json"
    p.write_text(json.dumps([{"session_id": "x", "hook_event_name": "PostToolUse", "tool_name": "Bash"}], indent=2))
    try:
        detect(p)
    except UserError as e:
        assert "cannot tell the format" in str(e)
    else:
        raise AssertionError("an array of hook payloads was read as a transcript")


def test_a_malformed_element_is_skipped_and_named_and_the_rest_replays(tmp_path):
    elements = json.loads(data_file(*SAMPLE).read_text())
    text = json.dumps(elements[:3], indent=2)[:-2] + ",\n  {\"broken\": tru,\n  },\n" + \
        json.dumps(elements[3:], indent=2)[2:]
    p = tmp_path / "chat.json"
    p.write_text(text)
    bad_line = text[:text.index('{"broken"')].count("\n") + 1
    with collecting() as found:
        records = load(p)
    assert len(records) == 13
    assert [str(s) for s in found.skipped] == [f"{p}:{bad_line}: skipped: not valid JSON (Expecting value)"]
    res = CliRunner().invoke(cli, ["replay", str(p)])
    assert res.exit_code == 0, res.output
    assert f"chat.json:{bad_line}" in res.output


def test_a_truncated_dump_keeps_the_elements_before_the_cut(tmp_path):
    text = data_file(*SAMPLE).read_text()
    p = tmp_path / "chat.json"
    p.write_text(text[:len(text) // 2])
    with collecting() as found:
        records = load(p, "claude-code")
    assert 0 < len(records) < 13
    assert len(found.skipped) == 1 and "the rest of the file is not read" in str(found.skipped[0])


def test_a_folder_of_hook_dumps_replays_as_a_projects_folder(tmp_path):
    # 16 public repositories keep their sessions only as hook dumps (logs/chat.json per project):
    # `prefixsim replay FOLDER` refused them ("folder holds no .jsonl transcripts")
    elements = json.loads(data_file(*SAMPLE).read_text())
    for name in ("alpha", "beta"):
        (tmp_path / name / "logs").mkdir(parents=True)
        (tmp_path / name / "logs" / "chat.json").write_text(json.dumps(elements, indent=2))
    (tmp_path / "alpha" / "logs" / "post_tool_use.json").write_text(json.dumps([{"hook_event_name": "PostToolUse"}]))
    (tmp_path / "settings.json").write_text(json.dumps({"hooks": {}}))
    assert detect(tmp_path) == "claude-code"
    got = load(tmp_path)
    one = load(data_file(*SAMPLE))
    # the same session twice: its requests are counted once (a request id is one request)
    assert sorted(r.request_id for r in got) == sorted(r.request_id for r in one)
    res = CliRunner().invoke(cli, ["replay", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    assert len(doc["requests"]) == len(one)


def test_a_folder_without_transcripts_of_either_kind_is_refused(tmp_path):
    (tmp_path / "settings.json").write_text(json.dumps({"hooks": {}}))
    (tmp_path / "payloads.json").write_text(json.dumps([{"hook_event_name": "Stop"}]))
    with pytest.raises(UserError, match="holds no .jsonl transcripts"):   # hook payloads are no transcripts
        detect(tmp_path)
