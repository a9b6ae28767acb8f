"""Claude Code's prompt suggestion (versions.py: suggests_prompts): when a turn ends, a request the
transcript does not log sends the conversation through the reply as the next turn will (earlier
thinking dropped on the models that drop it) and caches it, so the next user turn reads all but what
the user typed. A session sends it or not (a setting, a server flag): the replay takes it as sent where
the session's latest new turn read past what its logged requests cached, and only from the version
first seen sending it. Transcripts built here; sizes follow from the rule."""
import datetime as dt

import pytest
from cc_fixtures import T0, Transcript, stamp

from conftest import replay_says
from prefixsim import sources
from prefixsim.core.tokens import get_tokenizer
from prefixsim.replay import replay

SONNET = "claude-sonnet-4-5-20250929"
THINK = {"type": "thinking", "thinking": "let me see", "signature": "s"}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
TEXT = {"type": "text", "text": "done"}
RESULT = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b c"}]
FIRST, SECOND = "next question", "and then what?"


def _typed(text: str) -> int:
    return get_tokenizer("cl100k_base").count_text(text)


def _session(first_read_past: bool = True) -> Transcript:
    """Two thinking turns of three requests each, and a third turn. Prompts (cached + written):
    r0 20,000, r1 20,600, r2 21,100; r3 20,950 (r0's 20,000, then the turn without its thinking, the
    reply, the question), r4 21,450, r5 21,850; r6 21,700."""
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model=SONNET, content=[THINK, TOOL])
    t.user(5, RESULT)
    t.call(5, "r1", 20000, 600, model=SONNET, content=[THINK, TOOL])
    t.user(10, RESULT)
    t.call(10, "r2", 20600, 500, model=SONNET, content=[THINK, TEXT])
    t.user(60, FIRST)
    # the first new turn: read all but the question (a suggestion request cached the rest), or only
    # what r0 cached (no suggestion)
    read = 20950 - _typed(FIRST) if first_read_past else 20000
    t.call(60, "r3", read, 20950 - read, model=SONNET, content=[THINK, TOOL])
    t.user(65, RESULT)
    t.call(65, "r4", 20950, 500, model=SONNET, content=[THINK, TOOL])
    t.user(70, RESULT)
    t.call(70, "r5", 21450, 400, model=SONNET, content=[THINK, TEXT])
    t.user(120, SECOND)
    read = 21700 - _typed(SECOND) if first_read_past else 20950   # as the session showed before
    t.call(120, "r6", read, 21700 - read, model=SONNET, content=[THINK, TEXT])
    return t


def _rows(t, tmp_path, version):
    for line in t.lines:
        line["version"] = version
    return {r.request_id: r for r in replay(sources.open_many([t.write(tmp_path / "s.jsonl")])).rows}


@pytest.mark.parametrize("version", ["2.0.76", "2.1.17"])
def test_a_session_that_showed_the_suggestion_reads_all_but_what_was_typed(tmp_path, version):
    rows = _rows(_session(), tmp_path, version)
    # r3 is the session's first new turn: nothing showed the suggestion yet, so r0's entry (the turn's
    # thinking left out after it); its read past that shows it
    assert rows["r3"].predicted.cache_read == 20000
    # r6: the suggestion request cached the turn through r5's reply as r6 sends it: all but the question
    assert rows["r6"].predicted.cache_read == 21700 - _typed(SECOND)
    assert rows["r6"].predicted.cache_creation == _typed(SECOND)


def test_a_session_whose_latest_turn_read_only_what_was_logged_is_replayed_without_it(tmp_path):
    rows = _rows(_session(first_read_past=False), tmp_path, "2.1.17")
    assert rows["r6"].predicted.cache_read == 20950   # r3's entry: the turn's thinking left out after it


@pytest.mark.parametrize("version", ["2.0.28", "unknown"])
def test_versions_before_the_first_seen_suggesting_do_not(tmp_path, version):
    rows = _rows(_session(), tmp_path, version)
    assert rows["r6"].predicted.cache_read == 20950


def test_the_output_says_how_many(tmp_path):
    t = _session()
    for line in t.lines:
        line["version"] = "2.1.17"
    summary, text, _ = replay_says(t.write(tmp_path / "s.jsonl"))
    assert summary["prompt_suggestion_requests"] == 1
    assert "1 new user turn read what a prompt-suggestion request cached" in " ".join(text.split())


def test_past_the_apis_lookback_the_suggestion_still_reads_the_whole_turn(tmp_path):
    # a0 opens a turn reading past s's prompt (a suggestion cached s's reply): the session suggests. Its
    # turn runs 13 requests, so at b the turn's first thinking request (a0) lies more blocks back than the
    # API looks: without a suggestion only the static prefix is found; with one, all but what was typed.
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "s", 0, 20000, model=SONNET, content=[THINK, TEXT])
    t.user(30, FIRST)
    t.call(30, "a0", 20100, 200, model=SONNET, content=[THINK, TOOL])
    prompt = 20300
    for k in range(1, 13):
        t.user(30 + 5 * k - 2, RESULT)
        t.call(30 + 5 * k, f"a{k}", prompt, 300, model=SONNET, content=[THINK, TOOL if k < 12 else TEXT])
        prompt += 300
    t.user(200, SECOND)
    b = prompt - 1000   # the turn's thinking left out, its reply and the question added
    t.call(200, "b", b - _typed(SECOND), _typed(SECOND), model=SONNET, content=[THINK, TEXT])
    rows = _rows(t, tmp_path, "2.1.17")
    assert rows["b"].predicted.cache_read == b - _typed(SECOND)


def _second(session: str, at: float, cwd: str | None = None) -> Transcript:
    """Another session of the same shape, `at` seconds later, its first new turn reading all but the question."""
    t = _session()
    t.session = session
    for line in t.lines:
        line["sessionId"] = session
        if "uuid" in line:
            line["uuid"] = f"{session}-{line['uuid']}"
        if line.get("parentUuid"):
            line["parentUuid"] = f"{session}-{line['parentUuid']}"
        if "requestId" in line:
            line["requestId"] = f"{session}-{line['requestId']}"
            line["message"]["id"] = f"{session}-{line['message']['id']}"
        if cwd:
            line["cwd"] = cwd
        when = dt.datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00"))
        line["timestamp"] = stamp((when - T0).total_seconds() + at)
    return t


@pytest.mark.parametrize("cwd", [None, "/elsewhere"])
def test_a_sessions_first_turn_takes_what_earlier_sessions_showed(tmp_path, cwd):
    # The setting and the server's flag are the user's: a later session's first new turn, where its own
    # turns have shown nothing yet, is replayed as its project's latest session showed (else any's)
    first, later = _session(), _second("s2", 1000, cwd)
    for t in (first, later):
        for line in t.lines:
            line["version"] = "2.1.17"
    folder = tmp_path / "proj"
    first.write(folder / "s1.jsonl")
    later.write(folder / "s2.jsonl")
    rows = {r.request_id: r for r in replay(sources.open_many([folder])).rows}
    assert rows["s2-r3"].predicted.cache_read == 20950 - _typed(FIRST)
    assert rows["r3"].predicted.cache_read == 20000   # the first session's first turn: nothing shown before it
