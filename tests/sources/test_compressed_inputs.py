"""A gzip-compressed input replays as the text it holds, in every format (an OTel collector's file
exporter, a gateway or logrotate writes .gz files). The stream is told by its first two bytes (1f 8b),
not by its name; a cut stream is named, not half read (prefixsim/sources/files.py)."""
from __future__ import annotations

import gzip
import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import DATA
from log_fixtures import exact_log

from prefixsim.cli import cli, main
from prefixsim.sources import detect

#: One real file of each shape the readers open: YAML cassettes (Anthropic, Bedrock, OpenAI), JSON Lines
#: (a Claude Code transcript, a Codex rollout), whole JSON documents (a Gemini CLI session, a LiteLLM
#: payload, a Langfuse trace, OpenCode events).
SAMPLES = [
    "anthropic-api/test_anthropic_cache_real_api.yaml",
    "bedrock-api/test_bedrock_cache_write_and_read.yaml",
    "openai-api/test_openai_chat_prompt_cache_e2e.yaml",
    "claude-code/spotter/short.jsonl",
    "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    "gemini-cli/aim-session-2026-03-18T01-18-a86073d5.json",
    "litellm/standard_logging_payload.json",
    "langfuse/openai-agents-2025-09-30.trace.json",
    "opencode/opencode-nvim-planning.json",
]


def _summary(path, *more) -> dict:
    out = CliRunner().invoke(cli, ["replay", str(path), "--format", "json", *more])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["summary"]


def _gzip(src, dst) -> None:
    dst.write_bytes(gzip.compress(src.read_bytes(), mtime=0))


@pytest.mark.parametrize("name", SAMPLES)
def test_a_compressed_file_replays_as_the_file_it_holds(tmp_path, name):
    src = DATA / name
    plain = _summary(src)
    assert plain["requests"] > 0
    named = tmp_path / (src.name + ".gz")            # the usual name: the format's suffix, then .gz
    _gzip(src, named)
    unnamed = tmp_path / "sub" / src.name              # compressed under the plain name: the bytes tell
    unnamed.parent.mkdir()
    _gzip(src, unnamed)
    assert detect(named) == detect(unnamed) == detect(src)
    assert _summary(named) == _summary(unnamed) == plain


def test_a_log_out_of_time_order_is_read_back_in_order_from_a_compressed_file(tmp_path):
    """The time-ordered second pass seeks back to each line's offset: in a compressed file the offset
    is one in the text, and seeking back reads the stream again from its start."""
    text = "".join(reversed(exact_log(6)))
    plain = tmp_path / "log.jsonl"
    plain.write_text(text)
    packed = tmp_path / "log.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode(), mtime=0))
    want = _summary(plain)
    assert want["requests"] == 6 and want["exact_match_predicted"] == 6
    assert _summary(packed) == want


def test_a_plain_file_named_gz_is_read_as_plain(tmp_path):
    p = tmp_path / "short.jsonl.gz"
    shutil.copy(DATA / "claude-code/spotter/short.jsonl", p)
    assert _summary(p) == _summary(DATA / "claude-code/spotter/short.jsonl")


def _refused(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(["replay", *args])
    assert e.value.code not in (0, None)
    return capsys.readouterr().err


def test_a_cut_or_corrupt_stream_is_named_not_half_read(tmp_path, capsys):
    whole = gzip.compress((DATA / "claude-code/spotter/short.jsonl").read_bytes(), mtime=0)
    cut = tmp_path / "short.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    err = _refused(capsys, str(cut), "--source", "claude-code")
    assert f"{cut}: not a whole gzip file (Compressed file ended before the end-of-stream marker" in err, err
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(whole[:10] + b"\x00" * 64)
    err = _refused(capsys, str(bad), "--source", "claude-code")
    assert f"{bad}: not a whole gzip file" in err, err
