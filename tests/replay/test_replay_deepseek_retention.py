"""DeepSeek's retention as public traffic shows it (issue 30; docs/rules.md#deepseek).

DeepSeek documents only that its disk cache is cleared "hours to days" after last use; prefixsim reads
that as 1 h (pessimistic) to 24 h (optimistic) and printed the pessimistic end. In 9,797 public requests
of Claude Code on DeepSeek, the next request after 1-12 h idle read the previous prompt in 41 of 46
gaps: the printed figure is now that traffic's, 12 h, and the replay gives both documented ends."""
import json

from cc_fixtures import Transcript
from click.testing import CliRunner

from prefixsim import sources
from prefixsim.cli import cli
from prefixsim.replay import replay

MODEL = "deepseek-v4-pro"


def _session(tmp_path, gap):
    """Two requests of one conversation `gap` seconds apart: the second sends the first's prompt
    (25,254 tokens) and its 254-token reply, then a new turn."""
    t = Transcript()
    t.user(0, "observe")
    t.call(0, "r0", 0, 0, uncached=25254, model=MODEL)
    t.lines[-1]["message"]["usage"]["output_tokens"] = 254
    t.user(gap, "and now?")
    t.call(gap, "r1", 25472, 0, uncached=300, model=MODEL)   # 25,254 + 254 = 25,508, floored to 64
    return t.write(tmp_path / "proj" / "s.jsonl")


def _second(path):
    result = replay(sources.open_many([path]))
    return result, next(r for r in result.rows if r.request_id == "r1")


def test_a_follow_up_hours_later_reads_the_previous_prompt(tmp_path):
    # before: 0, ttl_expired past the pessimistic end's hour
    result, row = _second(_session(tmp_path, 2 * 3600))
    assert row.predicted.cache_read == row.observed.cache_read == 25472 and not row.cause.kind
    # the documented pessimistic end is walked too, and costs more: nothing kept past an hour
    assert row.cost_predicted_pessimistic is not None and row.cost_predicted_pessimistic > row.cost_predicted


def test_past_twelve_hours_it_is_gone_and_the_cause_says_whose_figure_decided(tmp_path):
    _, row = _second(_session(tmp_path, 13 * 3600))
    assert row.predicted.cache_read == 0 and row.cause.kind == "ttl_expired"
    assert "retention as public traffic shows, 43200 s idle; documented: a range (hours to days)" in row.cause.detail
    assert row.predicted_optimistic is not None and row.predicted_optimistic.cache_read == 25472   # kept 24 h


def test_the_output_gives_both_documented_ends(tmp_path):
    path = _session(tmp_path, 2 * 3600)
    out = CliRunner().invoke(cli, ["replay", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    s = json.loads(out.stdout)["summary"]
    assert s["cost_predicted_pessimistic_usd"] > s["cost_predicted_usd"] >= s["cost_predicted_optimistic_usd"]
    text = " ".join(CliRunner().invoke(cli, ["replay", str(path), "--width", "100"]).output.split())
    assert "retention is documented as hours to days, so the range runs from an entry kept an hour idle" in text
    assert "read in traffic for 12 h idle" in text and "docs/rules.md#deepseek" in text
