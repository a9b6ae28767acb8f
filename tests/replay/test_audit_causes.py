"""Issue 32: an audit (usage recorded, no prompt) says why each request missed and what that cost, told
from its stream's usage and timing alone (replay/audit_causes.py)."""
import json
from decimal import Decimal

from click.testing import CliRunner
from otel_fixtures import api_request, lines, logs

from prefixsim.cli import cli
from prefixsim.core.pricing import PriceBook
from prefixsim.model import Usage
from prefixsim.replay import replay
from prefixsim.replay.audit_causes import lost_cost
from prefixsim.sources import load

MODEL = "claude-sonnet-4-5-20250929"


def _session(tmp_path):
    # Claude Code telemetry of one session (claude_code.api_request: usage, no prompt):
    #   0 s  cold: writes 20,000
    #  20 s  reads them, writes 500 more
    # 400 s  idle 380 s > 5 min: rebuilds the 20,500 it had (ttl_expired)
    # 420 s  reads 8,000 of the 20,600 kept 20 s before: the prefix changed (or the entry was evicted)
    # 430 s  a 600-token prompt: below Sonnet 4.5's 1,024-token minimum, nothing of it could be cached
    events = [api_request("s", 0, 10, 0, 20_000, seq=1), api_request("s", 20, 12, 20_000, 500, seq=2),
              api_request("s", 400, 14, 0, 20_600, seq=3), api_request("s", 420, 9, 8_000, 12_700, seq=4),
              api_request("s", 430, 600, 0, 0, seq=5)]
    p = tmp_path / "telemetry.jsonl"
    p.write_text(lines(logs(events)))
    return p


def test_each_audited_miss_is_named_from_usage_and_timing(tmp_path):
    res = replay(load(_session(tmp_path)))
    assert res.summary.audited == 5
    kinds = [r.cause.kind for r in res.rows]
    assert kinds == ["cold", "", "ttl_expired", "prefix_changed", "below_minimum"]
    assert [r.lost_tokens for r in res.rows] == [0, 0, 20_500, 12_600, 0]
    assert res.rows[2].cause.detail == "idle 380 s > ttl 5m; from usage"
    assert "read 8,000 of the 20,600 kept 20 s earlier" in res.rows[3].cause.detail
    assert "whether the prefix changed or the entry was evicted is unknown" in res.rows[3].cause.detail
    assert res.rows[4].cause.detail == "600 tokens < 1,024; from usage"
    # the money: what reading the lost tokens would have saved, at the request's own rates
    rates = PriceBook().rates(MODEL, "anthropic")
    expired = res.rows[2].observed
    assert res.rows[2].lost_usd == rates.cost(expired) - rates.cost(Usage(14, 100, 0, 20_500, expired.output_tokens)) > 0


def test_a_one_hour_stream_is_not_expired_by_a_six_minute_gap(tmp_path):
    from prefixsim.replay.audit_causes import UsageCauses

    recs = load(_session(tmp_path))
    causes = UsageCauses({recs[0].call.stream})   # the stream wrote 1h
    assert [causes.cause(r)[0].kind for r in recs][2] == "prefix_changed"


def test_lost_cost_moves_writes_then_uncached_input_to_reads():
    rates = PriceBook().rates(MODEL, "anthropic")
    u = Usage(input_tokens=300, cache_write_5m=1000, cache_write_1h=0, cache_read=0, output_tokens=10)
    assert lost_cost(u, 0, rates) == 0
    assert lost_cost(u, 1200, rates) == rates.cost(u) - rates.cost(Usage(100, 0, 0, 1200, 10))
    assert lost_cost(u, 10**9, rates) == rates.cost(u) - rates.cost(Usage(0, 0, 0, 1300, 10))


def test_the_audit_prints_and_exports_its_misses_by_cause(tmp_path):
    p = _session(tmp_path)
    text = CliRunner().invoke(cli, ["replay", str(p), "--requests"])
    assert text.exit_code == 0, text.output
    flat = " ".join(text.output.split())
    assert "Observed misses by cause (audit" in flat and "audit: ttl_expired (idle 380 s" in flat
    # the default's money: each cause's loss, told from usage, as the JSON below has it
    money = " ".join(CliRunner().invoke(cli, ["replay", str(p)]).output.split())
    assert "misses by cause" in money and "ttl_expired 1 $0.0780 $0.0707" in money
    doc = json.loads((r := CliRunner().invoke(cli, ["replay", str(p), "--format", "json"])).output[r.output.index("{"):])
    by = {c["cause"]: c for c in doc["summary"]["audit_misses_by_cause"]}
    assert set(by) == {"cold", "ttl_expired", "prefix_changed", "below_minimum"}
    assert (by["ttl_expired"]["requests"], by["ttl_expired"]["lost_tokens"]) == (1, 20_500)
    assert Decimal(by["prefix_changed"]["lost_usd"]) == Decimal(doc["requests"][3]["lost_usd"]) > 0
    assert by["cold"]["lost_tokens"] == 0 and Decimal(by["cold"]["lost_usd"]) == 0
