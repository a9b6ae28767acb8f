"""LiteLLM StandardLoggingPayload JSONL and Langfuse observation exports, built to the fields of the
projects' sources (tests/gateway_fixtures.py): no public log with cache usage was found."""
import json
from pathlib import Path

import pytest

from prefixsim.errors import UserError
from click.testing import CliRunner
from gateway_fixtures import SYSTEM, generation, litellm, lines

from prefixsim.cli import cli, main
from prefixsim.replay import replay
from prefixsim.sources import detect, load
from prefixsim.sources.problems import collecting

DATA = Path(__file__).resolve().parents[1] / "data"
U1 = {"role": "user", "content": "hello " * 50}
A1 = {"role": "assistant", "content": "hi"}
U2 = {"role": "user", "content": "more " * 50}


def test_litellm_payloads_replay_their_messages_and_audit_the_rest(tmp_path):
    p = tmp_path / "litellm.jsonl"
    cached = litellm(9, 50, 4800, 0, 0, messages=[SYSTEM, U1], cache_hit=True)   # LiteLLM's own cache: no call
    p.write_text(lines(litellm(1, 0, 4500, 0, 4490, messages=[SYSTEM, U1], model="anthropic/claude-sonnet-4-20250514"),
                       litellm(2, 20, 4800, 4490, 300, messages=[SYSTEM, U1, A1, U2]),
                       litellm(3, 40, 4800, 4490, 300), cached))
    assert detect(p) == "litellm"
    records = load(p)
    assert [(r.audit, r.provider, r.call.stream) for r in records] == [(False, "anthropic", "t1")] * 2 + \
        [(True, "anthropic", "t1")]
    assert records[0].call.request.model == "claude-sonnet-4-20250514"   # the gateway's prefix dropped
    # prompt_tokens counts the cached tokens: uncached = 4800 - 4490 - 300
    assert records[1].observed.input_tokens == 10
    res = replay(records)
    assert [r.predicted.cache_read for r in res.rows[:2]] == [0, 4490]
    assert res.summary.audited == 1 and res.summary.prefixsim.compared == 2
    out = CliRunner().invoke(cli, ["replay", str(p)])
    assert out.exit_code == 0, out.output
    assert "1 of 3 requests record usage only" in out.output


def test_litellm_reads_the_openai_cached_tokens_detail(tmp_path):
    row = litellm(1, 0, 2000, 0, 0, model="gpt-4o-2024-08-06", provider="openai")
    row["metadata"]["usage_object"] = {"prompt_tokens": 2000, "completion_tokens": 5,
                                       "prompt_tokens_details": {"cached_tokens": 1920}}
    p = tmp_path / "litellm.jsonl"
    p.write_text(lines(row))
    (rec,) = load(p, "litellm")
    assert (rec.provider, rec.observed.cache_read, rec.observed.input_tokens) == ("openai", 1920, 80)


def test_a_langfuse_export_replays_generations_with_messages(tmp_path):
    system = {"role": "system", "content": "Be brief. " * 400}
    span = {"id": "sp", "traceId": "tr1", "type": "SPAN", "startTime": "2025-12-02T10:00:00Z"}
    p = tmp_path / "observations.json"
    p.write_text(json.dumps([generation(1, 0, 1500, 0, messages=[system, U1], session="S"),
                             generation(2, 20, 300, 1408, messages=[system, U1, A1, U2], session="S"), span,
                             generation(3, 30, 100, 1000)], indent=1))
    assert detect(p) == "langfuse"
    records = load(p)
    assert [(r.audit, r.call.stream) for r in records] == [(False, "S"), (False, "S"), (True, "tr1")]
    # usageDetails keys sum to total: `input` is the uncached part
    assert (records[1].observed.input_tokens, records[1].observed.cache_read) == (300, 1408)
    res = replay(records)
    assert res.summary.prefixsim.exact == 2


def test_a_langfuse_api_page_is_read(tmp_path):
    p = tmp_path / "page.json"
    p.write_text(json.dumps({"data": [generation(1, 0, 100, 1000)], "meta": {"page": 1}}, indent=1))
    (rec,) = load(p)
    assert rec.audit and rec.observed.cache_read == 1000


def test_a_malformed_line_is_skipped_and_named_and_the_rest_replays(tmp_path):
    bad = litellm(2, 10, 4800, 4490, 300)
    bad["startTime"] = "yesterday"
    p = tmp_path / "litellm.jsonl"
    p.write_text(lines(litellm(1, 0, 4500, 0, 4490), bad, "{oops", litellm(3, 40, 4800, 4490, 300)))
    with collecting() as found:
        records = load(p, "litellm")
    assert len(records) == 2
    named = [str(s) for s in found.skipped]
    assert any(":2: skipped:" in s and "startTime" in s for s in named), named
    assert any(":3: skipped: not valid JSON" in s for s in named), named
    lf = tmp_path / "langfuse.jsonl"
    broken = generation(2, 10, 5, 5)
    broken["usageDetails"]["input"] = -4
    lf.write_text(lines(generation(1, 0, 100, 1000), broken, generation(3, 20, 100, 1000)))
    with collecting() as found:
        assert len(load(lf, "langfuse")) == 2
    assert any(":2: skipped:" in str(s) and "negative" in str(s) for s in found.skipped)
    for path in (p, lf):
        res = CliRunner().invoke(cli, ["replay", str(path)])
        assert res.exit_code == 0, res.output


def test_a_real_litellm_payload_replays_its_messages():
    """BerriAI/litellm's own expected StandardLoggingPayload (tests/data/SOURCES.md): one pretty-printed
    gpt-4o call with its messages and `startTime` as text."""
    p = DATA / "litellm" / "standard_logging_payload.json"
    assert detect(p) == "litellm"
    (rec,) = load(p)
    assert not rec.audit and rec.provider == "openai" and rec.call.stream == "main"
    assert (rec.observed.prompt_tokens, rec.observed.output_tokens) == (10, 20)
    assert rec.timestamp.startswith("2025-01-24T09:20:46")
    (row,) = replay([rec]).rows
    assert row.predicted.cache_read == row.observed.cache_read == 0
    out = CliRunner().invoke(cli, ["replay", str(p)])
    assert out.exit_code == 0, out.output


def test_another_format_given_as_litellm_or_langfuse_is_refused_naming_what_it_is(tmp_path, capsys):
    p = tmp_path / "observations.jsonl"
    p.write_text(lines(generation(1, 0, 100, 1000)))
    with pytest.raises(UserError, match="--source litellm, but the file looks like langfuse"):
        load(p, "litellm")
    q = tmp_path / "litellm.jsonl"
    q.write_text(lines(litellm(1, 0, 4500, 0, 4490)))
    with pytest.raises(SystemExit) as e:
        main(["replay", str(q), "--source", "langfuse"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--source langfuse, but the file looks like litellm" in err.splitlines()[-1]
