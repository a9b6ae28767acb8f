"""`prefixsim replay` reads money first (issue 34 item 2): what the traffic cost, what caching saved
against the same traffic with no cache, what was lost to the cache and to which cause, split --by
session, day, project or model, within --since / --until; the per-request table only with
--requests; every table fitted to the width with no word split and no column left out silently."""
import json
import re
from decimal import Decimal

import pytest
from cc_fixtures import Transcript
from click.testing import CliRunner

from prefixsim import sources
from prefixsim.advise.attribution import attribute, losses
from prefixsim.cli import cli, main
from prefixsim.replay import replay
from prefixsim.replay.money import BY, money, project_of, session_of, short_keys

CLAUDE_CODE = "tests/data/claude-code"
# Runs the command in a child interpreter, which a mutation run's switch does not reach.
pytestmark = pytest.mark.no_mutation


def _run(*args, env=None):
    out = CliRunner().invoke(cli, ["replay", *args], env=env, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out.output


#: What a narrow table adds that a wide one does not: footnote marks and the note naming left-out columns.
_ADDED = re.compile(r"^\[\d+\]$")


def _broken_words(narrow: str, wide: str) -> set[str]:
    """Words of `narrow` that are no word of `wide` (the same output un-wrapped): pieces of a split word."""
    kept = re.sub(r"\(not shown at [^)]*\)", "", narrow)
    return {w for w in kept.split() if not _ADDED.match(w)} - set(wide.split())


def test_the_default_is_a_money_summary_in_40_lines_at_80_columns_with_no_word_split(monkeypatch):
    # the done-criterion of issue 34: the old default printed every request first (2,382 lines here)
    monkeypatch.delenv("COLUMNS", raising=False)
    out = _run(CLAUDE_CODE)
    lines = out.splitlines()
    assert len(lines) <= 40, len(lines)
    assert max(len(line) for line in lines) <= 80
    assert not _broken_words(out, _run(CLAUDE_CODE, "--width", "400"))
    # money first, the accuracy after it, no request rows
    assert lines[0].startswith("546 requests, ") and lines[2].startswith("cost ")
    assert out.index("caching saved") < out.index("misses by cause") < out.index("by day") < out.index("Accuracy")
    assert "fe5e1c67" not in out and not re.search(r"^\s*\d+\s+\S+/main", out, re.M)


@pytest.mark.parametrize("by", BY)
@pytest.mark.parametrize("width", [60, 80, 120])
def test_every_split_fits_the_width_and_splits_no_word(by, width):
    out = _run(CLAUDE_CODE, "--by", by, "--width", str(width))
    assert max(len(line) for line in out.splitlines()) <= width
    wide = _run(CLAUDE_CODE, "--by", by, "--width", "400")
    assert not _broken_words(out, wide)
    table = out[out.index(f"\nby {by}"):out.index("Accuracy")]
    assert re.search(r"^TOTAL\s+(546\s+.*)?\$18\.2584\s", table, re.M)
    dropped = [line for line in out.splitlines() if line.startswith("(not shown at")]
    assert all(f"not shown at {width} columns:" in line for line in dropped)
    if "no-cache $" not in table.splitlines()[1]:   # a column left out is named under the table
        assert "no-cache $" in " ".join(table.split())


def test_each_split_groups_by_its_own_key():
    keys = {"model": ["claude-opus-4-6", "claude-sonnet-4-20250514"], "day": ["2026-02-12", "2025-09-03"],
            "project": ["spotter", "claude-code-viewer", "-home-scott-projects-claude-config"],
            "session": ["4d5611e5", "fe5e1c67"]}
    for by, shown in keys.items():
        out = _run(CLAUDE_CODE, "--by", by, "--width", "120")
        table = out[out.index(f"\nby {by}"):out.index("Accuracy")]
        for k in shown:
            assert re.search(rf"^{re.escape(k)}\s", table, re.M), (by, k)


def test_the_split_sums_to_the_total_and_the_loss_is_advises():
    traffic = sources.open_many([CLAUDE_CODE])
    res = replay(traffic)
    lost = losses(traffic, res)
    assert sum(lost, Decimal(0)) == attribute(traffic, res).lost_usd > 0   # what `advise` calls lost
    for by in BY:
        m = money(res, lost, by)
        for f in ("requests", "cost", "no_cache", "lost", "prompt", "read"):
            assert sum((getattr(g, f) for g in m.groups), type(getattr(m.total, f))(0)) == getattr(m.total, f), (by, f)
        assert sum((lost for *_, lost in m.lost_by_cause), Decimal(0)) == m.total.lost
        assert m.total.cost == res.summary.cost_observed_usd   # what was paid: the observed usage priced


def _two_days(tmp_path):
    """opus-4-6 ($5 input, $6.25 5m write, $0.50 read per MTok; a transcript's output is not priced)."""
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000)             # cold: 20,000 written
    t.user(10, "more")
    t.call(10, "r1", 20000, 500)          # reads r0's 20,000
    t.user(1000, "after the TTL")
    t.call(1000, "r2", 0, 20900)          # expired: r1's 20,500 written again
    t.user(86400, "the next day")
    t.call(86400, "r3", 0, 21300)         # expired again (2026-01-06)
    t.user(86410, "and more")
    t.call(86410, "r4", 21300, 200)       # reads r3's prefix
    return t.write(tmp_path / "proj" / "s1.jsonl")


def test_the_money_of_a_small_session_by_hand(tmp_path):
    path = _two_days(tmp_path)
    res = replay(sources.open_many([path]))
    assert [r.observed.cache_read == r.predicted.cache_read for r in res.rows] == [True] * 5
    m = money(res, losses(sources.open_many([path]), res), "day")
    mtok = Decimal(1_000_000)
    cost = [(20000 * Decimal("6.25") + 5) / mtok, (20000 * Decimal("0.5") + 500 * Decimal("6.25") + 5) / mtok,
            (20900 * Decimal("6.25") + 5) / mtok, (21300 * Decimal("6.25") + 5) / mtok,
            (21300 * Decimal("0.5") + 200 * Decimal("6.25") + 5) / mtok]
    no_cache = [p * 5 / mtok for p in (20001, 20501, 20901, 21301, 21501)]   # every prompt token at $5
    assert m.total.cost == sum(cost) and m.total.no_cache == sum(no_cache)
    assert m.total.saved == sum(no_cache) - sum(cost)
    # r2 could have read r1's 20,500 and written 400: it lost the difference
    r2_lost = cost[2] - (20500 * Decimal("0.5") + 400 * Decimal("6.25") + 5) / mtok
    (ttl,) = [c for c in m.lost_by_cause if c[0] == "ttl_expired"]
    assert ttl[1] == 2 and ttl[2] == cost[2] + cost[3]
    day1, day2 = m.groups
    assert (day1.key, day1.requests, day1.cost, day1.lost) == ("2026-01-05", 3, sum(cost[:3]), r2_lost)
    assert (day2.key, day2.requests, day2.cost) == ("2026-01-06", 2, sum(cost[3:]))
    out = " ".join(_run(str(path)).split())
    assert f"cost ${sum(cost):.4f}" in out and f"caching saved ${sum(no_cache) - sum(cost):.4f}" in out
    assert "2026-01-05 3 " in out and "TOTAL 5 " in out


def test_since_and_until_keep_the_window_of_a_replay_of_everything(tmp_path):
    path = _two_days(tmp_path)
    full = json.loads(_run(str(path), "--format", "json"))["requests"]
    # r4 alone: it still reads what r3, before the window, wrote
    late = json.loads(_run(str(path), "--format", "json", "--since", "2026-01-06T10:00:05Z"))
    assert [r["request_id"] for r in late["requests"]] == ["r4"] and late["requests"][0] == full[4]
    assert late["requests"][0]["predicted"]["cache_read_input_tokens"] == 21300
    assert late["summary"]["requests"] == 1 and late["summary"]["cost_observed_usd"] == full[4]["cost_observed_usd"]
    # a date is a whole UTC day, at either end; ISO's basic form too
    for args, ids in ((["--until", "2026-01-05"], ["r0", "r1", "r2"]), (["--since", "20260106"], ["r3", "r4"]),
                      (["--since", "2026-01-05", "--until", "2026-01-05T10:16:00Z"], ["r0", "r1"])):
        doc = json.loads(_run(str(path), "--format", "json", *args))
        assert [r["request_id"] for r in doc["requests"]] == ids, args
    text = _run(str(path), "--since", "2026-01-06")
    assert text.startswith("2 requests, 1 session, 1 project, 1 model, 2026-01-06 UTC;")
    assert "2026-01-05" not in text


def test_a_window_says_how_many_requests_it_left_out(tmp_path):
    """Before, `--since` printed the window's figures with nothing saying the rest of the data was
    replayed but not counted; now the first line, and the JSON, say how many were left out."""
    path = _two_days(tmp_path)
    text = " ".join(_run(str(path), "--since", "2026-01-06").split())
    assert text.startswith("2 requests, 1 session, 1 project, 1 model, 2026-01-06 UTC; 3 requests outside "
                           "--since 2026-01-06 left out of the sums (all are replayed: an earlier one still warms "
                           "the cache)")
    doc = json.loads(_run(str(path), "--format", "json", "--since", "2026-01-05", "--until", "2026-01-05T10:16:00Z"))
    assert doc["summary"]["window"] == {"options": "--since 2026-01-05 --until 2026-01-05T10:16:00Z",
                                        "left_out_requests": 3}
    assert "window" not in json.loads(_run(str(path), "--format", "json"))["summary"]
    assert "left out of the sums" not in _run(str(path))


@pytest.mark.parametrize("args,message", [
    (["--since", "yesterday"], "--since: 'yesterday' is not an ISO date or time"),
    (["--until", "2026-13-01"], "--until: '2026-13-01' is not an ISO date or time"),
    (["--since", "2026-01-06", "--until", "2026-01-05"], "--since 2026-01-06 is not before --until 2026-01-05"),
])
def test_a_bad_window_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    err = _fails(["replay", str(_two_days(tmp_path)), *args], capsys)
    assert message in err and len(err.strip().splitlines()) == 1


def _fails(args, capsys) -> str:
    """stderr of a command that must exit 2 (a user's mistake)."""
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    return capsys.readouterr().err


def test_requests_prints_every_request_and_v_is_the_same(tmp_path):
    path = _two_days(tmp_path)
    plain, full, short = _run(str(path)), _run(str(path), "--requests"), _run(str(path), "-v")
    assert full == short
    assert not re.search(r"^\s*\d+\s+main\s", plain, re.M)
    rows = re.findall(r"^\s*(\d+)\s+main\s", full, re.M)
    assert rows == ["0", "1", "2", "3", "4"]
    assert "Largest mismatches" not in plain and "cache_read exactly" in full
    assert plain[:plain.index("Accuracy")] in full   # the same money, after the requests


def test_the_request_table_fits_and_footnotes_its_causes(monkeypatch):
    S = "tests/data/claude-code/spotter/4d5611e5-241a-462a-8d15-5122611a9569"
    out = _run(f"{S}.jsonl", f"{S}/", "--requests")
    assert max(len(line) for line in out.splitlines()) <= 80
    assert not _broken_words(out, _run(f"{S}.jsonl", f"{S}/", "--requests", "--width", "1000"))
    # the cause that was cut to "idle 1150 s > tt" is whole in its footnote
    assert re.search(r"^\s*\d+\s+main\s.*ttl_expired \[\d+\]$", out, re.M)
    assert "idle 1150 s > ttl 300 s)" in " ".join(out.split())
    assert "(not shown at 80 columns: model, uncached pred, uncached obs; --width" in out


def test_columns_sets_the_width_and_width_wins(capsys):
    assert max(len(line) for line in _run(CLAUDE_CODE, env={"COLUMNS": "100"}).splitlines()) > 80
    assert max(len(line) for line in _run(CLAUDE_CODE, "--width", "70", env={"COLUMNS": "100"}).splitlines()) <= 70
    assert "--width 30 is too narrow" in _fails(["replay", CLAUDE_CODE, "--width", "30"], capsys)


def test_keys_sessions_and_projects():
    assert session_of("proj/4d5611e5-241a-462a-8d15-5122611a9569/agent-1") == "proj/4d5611e5-241a-462a-8d15-5122611a9569"
    # a session file given alone: its streams are one part, the session is the file's
    assert session_of("agent-a2898e3", "p/4d56/subagents/agent-a2898e3.jsonl") == "p/4d56"
    assert session_of("main", "p/4d56.jsonl") == "p/4d56"
    assert project_of("x/-home-me-app/4d56.jsonl") == "-home-me-app"
    assert project_of("x/-home-me-app/4d56/subagents/agent-1.jsonl") == "-home-me-app"
    assert project_of("calls.jsonl") == "."
    uuid = "4d5611e5-241a-462a-8d15-5122611a9569"
    names = short_keys([f"a/{uuid}/main", f"a/{uuid}/agent-1", "b/x/main", "r/t/transcript/main",
                        "r/u/transcript/main"])
    assert names == {f"a/{uuid}/main": "4d5611e5/main", f"a/{uuid}/agent-1": "agent-1", "b/x/main": "x/main",
                     "r/t/transcript/main": "t/transcript/main", "r/u/transcript/main": "u/transcript/main"}


@pytest.mark.parametrize("folder", ["tests/data/openai-api", "tests/data/deepseek-api", "tests/data/anthropic-api"])
def test_the_oracle_of_lost_money_walks_no_retention_range(monkeypatch, folder):
    # Attribution takes only the oracle's reads: its replay walks one simulator per provider, not a
    # second at the optimistic end of OpenAI's or DeepSeek's retention (issue 35), and loses the same.
    from prefixsim.core.simulator import Simulator

    from pathlib import Path

    traffic = sources.open_many(sorted(Path(folder).glob("*.yaml")), errors=[])
    base = replay(traffic)
    with_ranges = attribute(traffic, base, replay)
    steps = [0]
    step = Simulator.step

    def counted(self, call, at=None):
        steps[0] += 1
        return step(self, call, at)

    monkeypatch.setattr(Simulator, "step", counted)
    assert attribute(traffic, base) == with_ranges
    lean = steps[0]
    steps[0] = 0
    replay(traffic)
    assert lean == sum(1 + len(r.iterations) + len(r.unlogged) + len(r.earlier) for r in traffic if not r.audit)
    # and the full replay one more at each end of a range: the optimistic one, and the pessimistic one
    # where the printed figure is what traffic shows and that end still reads (DeepSeek's retention)
    ends = any(r.predicted_optimistic is not None for r in base.rows) + \
        any(r.cost_predicted_pessimistic is not None for r in base.rows)
    assert steps[0] == lean * (1 + ends)
