"""Claude Code served by another provider's automatic cache (issue 30; sources/claude_code/automatic.py,
docs/rules.md#claude-code-on-an-automatic-cache): with ANTHROPIC_BASE_URL at DeepSeek's Anthropic
endpoint the transcript names `deepseek-v4-pro`, nothing is reported written, and each request reads
the previous prompt and its reply in 64-token units. Figures: the first requests of a public session
of LeoDChen's (claude-mem observer, 2026-05-04)."""
from cc_fixtures import Transcript

from prefixsim import sources
from prefixsim.replay import replay

MODEL = "deepseek-v4-pro"


def _call(t, at, rid, read, uncached, output):
    t.call(at, rid, read, 0, uncached=uncached, model=MODEL)
    t.lines[-1]["message"]["usage"]["output_tokens"] = output   # the two lines of a call share one usage


def _session(tmp_path):
    t = Transcript()
    t.user(0, "observe")
    _call(t, 0, "r0", 8064, 17190, 231)      # prompt 25,254 (8,064 read from an earlier session)
    t.user(20, "more")
    _call(t, 20, "r1", 25472, 105, 549)      # prompt 25,577: r0's prompt and its 231-token reply, floored to 64
    t.user(40, "more")
    _call(t, 40, "r2", 26112, 6204, 2215)    # prompt 32,316: r1's 25,577 + 549 = 26,126 -> 26,112
    t.user(60, "after a compaction")
    _call(t, 60, "r3", 0, 28343, 572)        # shorter than r2's: the history anew, nothing to read
    return replay(sources.open_many([t.write(tmp_path / "s.jsonl")]))


def test_each_request_reads_the_previous_prompt_and_its_reply(tmp_path):
    # Before: under Claude's breakpoints calibrated from read + write (always 0 written here), every
    # prediction lagged one request: r1 8,064, r2 25,472.
    rows = {r.request_id: r for r in _session(tmp_path).rows}
    assert [rows[k].observed.cache_read for k in ("r1", "r2", "r3")] == [25472, 26112, 0]
    assert [rows[k].predicted.cache_read for k in ("r1", "r2", "r3")] == [25472, 26112, 0]
    assert all(r.predicted.cache_creation == 0 for r in rows.values())   # DeepSeek reports no writes
    assert {r.provider for r in rows.values()} == {"deepseek"}


def test_it_is_priced_and_scored_as_deepseek(tmp_path):
    res = _session(tmp_path)
    assert not res.summary.unpriced and all(r.priced for r in res.rows)
    assert "deepseek/deepseek-v4-pro" in res.summary.price_source
    assert res.summary.prefixsim.exact > res.summary.naive.exact


def test_claude_models_keep_the_breakpoint_calibration(tmp_path):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model="claude-sonnet-4-5")
    t.user(20, "more")
    t.call(20, "r1", 20000, 500, model="claude-sonnet-4-5")
    rows = replay(sources.open_many([t.write(tmp_path / "c.jsonl")])).rows
    assert [r.provider for r in rows] == ["anthropic", "anthropic"] and rows[1].predicted.cache_read == 20000
