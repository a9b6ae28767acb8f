"""Mooncake / bailian trace replay, capacity curves, export and the Mooncake figures."""
import json

import pytest
from conftest import data_file

from prefixsim.engines.export import export_mooncake
from prefixsim.engines.kvsize import capacity_tokens, kv_bytes_per_token, parse_capacity
from prefixsim.engines.trace import load_trace, replay, replay_trace
from prefixsim.errors import UserError
from prefixsim.model import Block, Call, Layer, Request
from prefixsim.report.traces import curve_figure, render_text

MOONCAKE = ("mooncake", "conversation_trace.jsonl")


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def small(tmp_path):
    # 512-token blocks: r2 extends r1, r3 is another conversation on the same system block 0,
    # r4 repeats r1 after r3 (LRU pressure at small capacity).
    return write_jsonl(tmp_path / "small.jsonl", [
        {"timestamp": 0, "input_length": 1500, "output_length": 10, "hash_ids": [0, 1, 2]},
        {"timestamp": 1000, "input_length": 2000, "output_length": 10, "hash_ids": [0, 1, 2, 3]},
        {"timestamp": 2000, "input_length": 1024, "output_length": 10, "hash_ids": [0, 4]},
        {"timestamp": 3000, "input_length": 1500, "output_length": 10, "hash_ids": [0, 1, 2]},
    ])


def test_unlimited_counts_leading_runs(small):
    out = replay_trace(small)
    reads = [r["predicted"]["cache_read_input_tokens"] for r in out["requests"]]
    assert reads == [0, 1536, 512, 1500]          # min(run x 512, input_length)
    assert [r["cause"] for r in out["requests"]] == ["cold", "", "", ""]
    s = out["summary"]
    assert (s["hit_tokens"], s["input_tokens"], s["hit_blocks"], s["blocks"]) == (3548, 6024, 7, 12)
    assert s["hit_rate"] == round(3548 / 6024, 6) and s["block_hit_rate"] == round(7 / 12, 6)
    r = out["requests"][1]
    assert r["timestamp"] == 1.0 and r["observed"] is None and r["model"] is None
    assert r["predicted"]["input_tokens"] == 464 and r["predicted"]["cache_creation_input_tokens"] == 0


def test_small_capacity_evicts_and_says_so(small):
    out = replay_trace(small, capacities=[4 * 512])
    causes = [r["cause"] for r in out["requests"]]
    # r2 fills the 4 blocks; r3 needs one more and evicts r2's tail (block 3), not blocks 0-2, so r4 still hits.
    assert [r["predicted"]["cache_read_input_tokens"] for r in out["requests"]] == [0, 1536, 512, 1500]
    assert causes == ["cold", "", "", ""]
    out = replay_trace(small, capacities=[2 * 512])
    assert [r["predicted"]["cache_read_input_tokens"] for r in out["requests"]] == [0, 1024, 512, 512]
    assert out["requests"][3]["cause"] == "evicted"


def test_sweep_gives_a_curve_and_text(small):
    out = replay_trace(small, capacities=[512, 1024, None], fmt="table")
    assert out["requests"] == []
    curve = out["summary"]["curve"]
    assert [p["capacity_tokens"] for p in curve] == [512, 1024, None]
    assert [p["hit_rate"] for p in curve] == sorted(p["hit_rate"] for p in curve)
    text = render_text(out)
    assert "unlimited" in text and "hit rate (tokens)" in text and "1,024" in text


def test_chart_is_titled_and_labelled(small, tmp_path):
    fig = curve_figure(replay_trace(small, capacities=[512, 1024, 2048, None]))
    ax = fig.axes[0]
    assert ax.get_title() and "tokens" in ax.get_xlabel() and "%" in ax.get_ylabel()
    assert ax.get_xscale() == "log"
    fig.savefig(tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_bailian_format(tmp_path):
    p = write_jsonl(tmp_path / "bailian.jsonl", [
        {"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 40, "output_length": 5,
         "type": "text", "turn": 1, "hash_ids": [7, 8, 9]},
        {"chat_id": 2, "parent_chat_id": 1, "timestamp": 2.0, "input_length": 60, "output_length": 5,
         "type": "text", "turn": 2, "hash_ids": [7, 8, 9, 10]},
    ])
    tr = load_trace(p)
    assert tr.format == "bailian" and tr.block_size == 16
    assert tr.requests[1].stream == tr.requests[0].stream == "bailian.jsonl#1"
    out = replay_trace(p)
    assert out["summary"]["block_size"] == 16
    assert out["requests"][1]["predicted"]["cache_read_input_tokens"] == 48  # min(3 x 16, 60)
    assert out["requests"][1]["timestamp"] == 2.0


def test_files_do_not_share_hash_ids(small, tmp_path):
    other = write_jsonl(tmp_path / "other.jsonl", [{"timestamp": 5000, "input_length": 1500, "hash_ids": [0, 1, 2]}])
    out = replay_trace([small, other])
    assert out["requests"][-1]["predicted"]["cache_read_input_tokens"] == 0


@pytest.mark.parametrize("line,msg", [
    ("{not json", "not JSON"),
    ('{"timestamp": 0, "input_length": 5}', "missing field 'hash_ids'"),
    ('[1, 2]', "must be a JSON object"),
])
def test_bad_lines_are_located(tmp_path, line, msg):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"timestamp": 0, "input_length": 5, "hash_ids": [1]}\n' + line + "\n")
    with pytest.raises(UserError, match=msg) as e:
        replay_trace(p)
    assert e.value.line == 2 and e.value.path == str(p)


def test_export_round_trip(small, tmp_path):
    out_path = tmp_path / "again.jsonl"
    assert export_mooncake(load_trace(small).requests, out_path) == 4
    assert replay_trace(out_path)["summary"] == replay_trace(small)["summary"]


def test_export_calls_share_ids_where_prompts_share_tokens(tmp_path):
    sys_block = Block(Layer.SYSTEM, b"s", tokens=1200)
    r1 = Request("m", (sys_block, Block(Layer.MESSAGES, b"u1", tokens=100)))
    r2 = Request("m", (*r1.blocks, Block(Layer.MESSAGES, b"u2", tokens=700)))
    r3 = Request("other-model", r1.blocks)
    p = tmp_path / "calls.jsonl"
    export_mooncake([Call(0, r1, output_tokens=3), Call(2.5, r2), Call(3, r3)], p)
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    assert lines[0] == {"timestamp": 0, "input_length": 1300, "output_length": 3, "hash_ids": [0, 1, 2]}
    assert lines[1]["timestamp"] == 2500 and lines[1]["hash_ids"] == [0, 1, 3, 4]  # 1024 shared tokens
    assert lines[2]["hash_ids"] == [5, 6, 7]                                      # another model


def test_kv_sizes_and_capacity_parsing():
    assert kv_bytes_per_token("qwen2.5-7b") * 512 == 28 * 2**20   # 28 MiB per 512-token block
    assert kv_bytes_per_token("llama-3.1-8b") == 128 * 1024
    assert capacity_tokens(1, "llama-3.1-8b") == 8192
    assert parse_capacity("unlimited") is None
    assert parse_capacity("10^6") == parse_capacity("1e6") == parse_capacity("1M") == 10**6
    assert parse_capacity("4GiB", "llama-3.1-8b") == 4 * 8192
    with pytest.raises(UserError, match="which model"):
        parse_capacity("4GiB")
    with pytest.raises(UserError, match="bad capacity"):
        parse_capacity("lots")


@pytest.mark.no_mutation
def test_mooncake_figures_unlimited():
    path = data_file(*MOONCAKE)
    s = replay_trace(path)["summary"]
    assert s["requests"] == 12031
    # tests/data/README.md: 0.3736 of input tokens, 0.3664 of blocks
    assert round(s["hit_rate"], 4) == 0.3736 and round(s["block_hit_rate"], 4) == 0.3664


@pytest.mark.no_mutation
@pytest.mark.slow
def test_mooncake_lru_curve_is_monotone_and_reaches_the_ceiling():
    trace = load_trace(data_file(*MOONCAKE))
    points = [replay(trace, 10**k)[1] for k in range(4, 9)]
    rates = [t.hit_rate for t in points]
    assert rates == sorted(rates) and rates[0] < 0.1
    assert points[-1].evictions == 0 and round(rates[-1], 4) == 0.3736  # 10^8 tokens hold every block


@pytest.mark.no_mutation
@pytest.mark.slow
def test_mooncake_with_running_requests_holding_their_blocks():
    # The README's figures: at 50 output tokens/s per request the held blocks change what LRU evicts
    trace = load_trace(data_file(*MOONCAKE))
    rates = {cap: round(replay(trace, cap, decode_tokens_per_s=50)[1].hit_rate, 4) for cap in (10**6, 10**7)}
    assert rates == {10**6: 0.0519, 10**7: 0.2913}


def test_export_takes_runner_outcomes(prices, tmp_path):
    from conftest import make_request

    from prefixsim.core.simulator import Simulator

    s = Simulator("prefix", tokenizer="approx", prices=prices)
    outs = [s.step(Call(t, make_request([600, 600, 100 * (t + 1)]))) for t in range(2)]
    p = tmp_path / "outcomes.jsonl"
    assert export_mooncake(outs, p) == 2
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    assert [x["input_length"] for x in lines] == [1300, 1400]
    assert lines[1]["hash_ids"][:2] == lines[0]["hash_ids"][:2] == [0, 1]  # 1,024 shared leading tokens


def test_running_requests_hold_their_blocks(small):
    # At 1 output token/s each request runs 10 s, so all four overlap. With 2 blocks: r1 caches
    # blocks 0-1 and holds them; nothing r2 or r3 adds can evict them, so r4 still reads 2 blocks
    # (instantaneous requests: r3 evicts block 1 and r4 reads 512, test above).
    trace = load_trace(small)
    rows, t = replay(trace, 2 * 512, decode_tokens_per_s=1)
    assert [r.hit_tokens for r in rows] == [0, 1024, 512, 1024]
    assert t.evictions == 0
    # Spaced out (1000 output tokens/s: 10 ms each) they are instantaneous again
    rows, _ = replay(trace, 2 * 512, decode_tokens_per_s=1000)
    assert [r.hit_tokens for r in rows] == [0, 1024, 512, 512]
    out = replay_trace(small, capacities=[1024], decode_tokens_per_s=1)
    assert out["summary"]["decode_tokens_per_s"] == 1 and out["summary"]["hit_tokens"] == 2560
