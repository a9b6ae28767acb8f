"""New user turns in Claude Code transcripts that find less than the conversation (issue 14): a turn
started in another working directory (the system prompt names it), and an entry further back than the
API's 20-block lookback (A-PC) once thinking was dropped. Transcripts built here; numbers follow from
the rules in docs/rules.md#claude-code-transcripts-parent-chain."""
import pytest
from cc_fixtures import Transcript

from prefixsim import sources
from prefixsim.replay import replay

SONNET = "claude-sonnet-4-5-20250929"
THINK = {"type": "thinking", "thinking": "let me see", "signature": "s"}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
TEXT = {"type": "text", "text": "done"}
RESULT = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b c"}]


def _rows(t, tmp_path):
    return {r.request_id: r for r in replay(sources.open_many([t.write(tmp_path / "s.jsonl")])).rows}


def _cwd_session():
    t = Transcript()
    t.user(0, "hello", cwd="/p")
    t.call(0, "r0", 12000, 8000)          # B 20,000; reads 12,000 another session left: the cross-session prefix
    t.user(10, "more", cwd="/p")
    t.call(10, "r1", 20000, 500)          # B 20,500
    return t


def test_a_turn_in_another_working_directory_reads_only_the_cross_session_prefix(tmp_path):
    t = _cwd_session()
    t.user(20, "and here?", cwd="/p/sub")   # a `cd` in the turn before stayed
    t.call(20, "r2", 12000, 9000)
    t.user(30, "and there?", cwd="/p/other")
    t.call(30, "r3", 12000, 9300)
    t.user(40, "go on", cwd="/p/other")
    t.call(40, "r4", 21300, 200)
    rows = _rows(t, tmp_path)
    # The session's part of the system prompt names the directory: a turn in another one finds only
    # the 12,000 every session shares and writes the rest. r0 read those 12,000 from a cache no request
    # of the data wrote, so r2 writes them (a read from outside the data); r3 finds them.
    assert (rows["r2"].predicted.cache_read, rows["r2"].predicted.cache_creation) == (0, 21000)
    assert (rows["r3"].predicted.cache_read, rows["r3"].predicted.cache_creation) == (12000, 9300)
    # the next turn in the same directory continues the conversation
    assert (rows["r4"].predicted.cache_read, rows["r4"].predicted.cache_creation) == (21300, 200)


def test_a_directory_change_inside_a_turn_renders_nothing_anew(tmp_path):
    t = _cwd_session()
    t.user(20, "run it", cwd="/p")
    t.call(20, "r2", 20500, 300, content=[TOOL])
    t.user(25, RESULT, cwd="/p/sub")         # tool results are no new turn: the prompt was rendered already
    t.call(25, "r3", 20800, 100)
    rows = _rows(t, tmp_path)
    assert [rows[k].predicted.cache_read for k in ("r2", "r3")] == [20500, 20800]


def _long_turn(rounds):
    """A Sonnet 4.5 turn whose first response thinks, then `rounds` tool calls; each response is logged
    as two lines of one block (`cc_fixtures`), each result one block: 2 + 3 per round + 2 for the answer."""
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model=SONNET, content=[THINK, TOOL])   # 2 blocks sent on (thinking dropped later)
    size = 20000
    for k in range(1, rounds + 1):
        t.user(k, RESULT)
        t.call(k, f"r{k}", size, 100, model=SONNET, content=[TOOL])
        size += 100
    t.user(rounds + 1, RESULT)
    t.call(rounds + 1, "end", size, 100, model=SONNET, content=[TEXT])
    size += 100
    t.user(60, "next question")
    return t, size


def test_the_entry_kept_after_dropping_thinking_is_found_within_the_lookback(tmp_path):
    t, size = _long_turn(5)       # blocks from r0's prompt end to the last response: 2 + 5*3 + 3 = 20
    t.call(60, "next", 20000, size - 20000 + 50, model=SONNET, content=[THINK, TEXT])   # still thinking
    r = _rows(t, tmp_path)["next"]
    assert (r.predicted.cache_read, r.predicted.cache_creation) == (20000, size - 20000 + 50)


def test_the_entry_kept_after_dropping_thinking_past_the_lookback_is_not_found(tmp_path):
    t, size = _long_turn(6)       # 2 + 6*3 + 3 = 23 blocks > 20: r0's entry is out of reach
    t.call(60, "next", 19999, size - 19999 + 50, model=SONNET, content=[THINK, TEXT])
    r = _rows(t, tmp_path)["next"]
    # only the static prefix is found: r0's size less its first message ("hello", 1 token), the
    # static estimate of sources/claude_code/transcript.py; the rest is written again
    assert (r.predicted.cache_read, r.predicted.cache_creation) == (19999, size - 19999 + 50)
    assert r.cause.kind == "prefix_changed"


def _cd_between_turns(version):
    t = Transcript()
    t.user(0, "hello", cwd="/p", version=version)
    t.call(0, "r0", 12000, 8000)
    t.user(10, "more", cwd="/p", version=version)
    t.call(10, "r1", 20000, 500)
    t.user(20, "and in dist?", cwd="/p/dist", version=version)   # a `cd dist` in the turn before stayed
    t.call(20, "r2", 20500, 300)
    for line in t.lines:   # as Claude Code writes it: every line names the version
        line["version"] = version
    return t


@pytest.mark.parametrize("version", ["2.1.19", "2.1.30", "2.1.39", "2.1.44", "2.1.146"])
def test_a_version_that_keeps_the_launch_directory_reads_the_conversation_after_a_cd(tmp_path, version):
    """From 2.1.19 Claude Code names the launch directory in its prompt whatever `cd` did (issue 30:
    the turns in another directory of public 2.1.19, 2.1.39, 2.1.44 and 2.1.146 sessions read the whole
    conversation; entireio/cli's 2.1.19 session read 102,978 and 113,447 where 2.1.38 and earlier were
    taken to re-render): nothing is rendered anew."""
    rows = _rows(_cd_between_turns(version), tmp_path)
    assert rows["r2"].predicted.cache_read == rows["r2"].observed.cache_read == 20500
    assert rows["r2"].cause.kind == ""


def test_a_version_between_the_seen_ones_re_renders_and_says_it_is_unconfirmed(tmp_path):
    rows = _rows(_cd_between_turns("2.1.18"), tmp_path)
    assert rows["r2"].predicted.cache_read == 0     # as 2.0.x-2.1.17 did: only what no read has shown is shared
    assert "unconfirmed on Claude Code 2.1.18" in rows["r2"].cause.detail
    # and the versions seen re-rendering say nothing of the kind (entireio/cli's 2.1.17 turns read only
    # the cross-session prefix after a cd)
    old = _rows(_cd_between_turns("2.1.17"), tmp_path / "old")
    assert old["r2"].predicted.cache_read == 0 and "unconfirmed" not in old["r2"].cause.detail


def test_versions_compare_as_numbers():
    from prefixsim.sources.claude_code.versions import parsed, prompt_follows_cd, uncertain_cd

    assert parsed("2.1.146") == (2, 1, 146) and parsed("2.1.x") == (2, 1) and parsed("") is None
    assert parsed("2.1.146-beta") == parsed("v2.1.146 ") == (2, 1, 146) and parsed("beta") is None
    assert not prompt_follows_cd("2.2.0-rc.1") and uncertain_cd("2.1.18-beta")
    assert prompt_follows_cd("2.1.18") and not prompt_follows_cd("2.1.19") and not prompt_follows_cd("2.2.0")
    assert prompt_follows_cd("") and prompt_follows_cd("1.0.102") and prompt_follows_cd("2.1.17")
    assert uncertain_cd("2.1.18") and not uncertain_cd("2.1.17") and not uncertain_cd("2.1.15")
    assert not uncertain_cd("2.1.19") and not uncertain_cd("2.1.39") and not uncertain_cd("")


def _parallel(calls):
    """Opus 4.6 (keeps thinking) answers with `calls` parallel tool calls. Claude Code logs the response
    as one line per block with each call's result logged right after it, but sends the response as one
    message and the results as the next."""
    t = Transcript()
    t.user(0, "read the files")
    t.call(0, "r0", 0, 20000, content=[TEXT])
    t.user(1, "now all of them")
    usage = {"input_tokens": 1, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 20000,
             "output_tokens": 5}
    for k in range(calls):
        uid = t._uuid()
        t.lines.append({"parentUuid": t.last, "type": "assistant", "requestId": "r1", "isSidechain": False,
                        "sessionId": t.session, "uuid": uid, "timestamp": f"2026-01-05T10:00:02.{k:03d}Z",
                        "message": {"id": "msg-r1", "role": "assistant", "model": "claude-opus-4-6",
                                    "content": [{**TOOL, "id": f"toolu_{k}"}], "usage": usage}})
        t.last = uid
        t.user(3, [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": "x"}])
    return t


def test_results_logged_among_a_responses_lines_do_not_count_into_its_lookback(tmp_path):
    # 12 calls: 12 blocks in the response, 12 results after it. The old code counted the results logged
    # between the response's lines (11) into the response: 23 > 20 blocks, so it predicted only the
    # static prefix (19,999 read). The entry at r1's prompt end lies 12 blocks before the breakpoint on
    # the response's message: within the lookback, so it is read. In public traffic 43 of 46 such
    # requests (a response and its results over 20 blocks, the response itself within 20) read the
    # whole previous prompt (docs/rules.md#claude-code-transcripts-parent-chain).
    t = _parallel(12)
    t.call(4, "r2", 20500, 400)
    r = _rows(t, tmp_path)["r2"]
    assert (r.predicted.cache_read, r.predicted.cache_creation) == (20500, 400)


def test_a_response_longer_than_the_lookback_is_still_past_it(tmp_path):
    t = _parallel(22)   # 22 blocks in the response itself: r1's prompt end is out of reach
    t.call(4, "r2", 19997, 903)
    r = _rows(t, tmp_path)["r2"]
    # only the static prefix is found: r0's size less its first message (3 tokens), the static estimate
    assert (r.predicted.cache_read, r.cause.kind) == (19997, "prefix_changed")
