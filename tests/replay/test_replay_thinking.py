"""Thinking blocks of earlier turns in Claude Code transcripts (A-TH, A-PC "Caching with thinking
blocks"): on models that keep only the last turn's thinking, a new user turn drops every earlier
response's thinking block, so the prompt stays as sent only up to the first request of the turn just
ended whose response held one and was sent on. A turn sent with another thinking setting than the
turn before invalidates the messages, on every model (tables.THINKING_LAYER): the setting is the user
line's `thinkingMetadata` (2.0.x a level, 2.1.x a budget); a turn without it was sent as its responses
show (sources/claude_code/thinking.py).
Transcripts built here; numbers follow from the rule; every turn below thinks unless it says otherwise."""
import pytest
from cc_fixtures import Transcript

from prefixsim import sources
from prefixsim.core.tokens import get_tokenizer
from prefixsim.replay import replay

THINK = {"type": "thinking", "thinking": "let me see", "signature": "s"}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
TEXT = {"type": "text", "text": "done"}
RESULT = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b c"}]


def _turns(tmp_path, model, first_thinks=True):
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model=model, content=[THINK, TOOL] if first_thinks else [TOOL])   # B 20,000
    t.user(5, RESULT)
    t.call(5, "r1", 20000, 600, model=model, content=[THINK, TOOL])                            # B 20,600
    t.user(10, RESULT)
    t.call(10, "r2", 20600, 500, model=model, content=[THINK, TEXT])                           # B 21,100
    return t


def _rows(t, tmp_path):
    return {r.request_id: r for r in replay(sources.open_many([t.write(tmp_path / "s.jsonl")])).rows}


def test_a_new_turn_drops_the_thinking_of_the_turn_before_on_sonnet_4_5(tmp_path):
    t = _turns(tmp_path, "claude-sonnet-4-5-20250929")
    t.user(60, "next question")
    t.call(60, "r3", 20000, 950, model="claude-sonnet-4-5-20250929", content=[THINK, TEXT])   # B 20,950: shorter than r2's
    r3 = _rows(t, tmp_path)["r3"]
    # r0's response (sent on in r1) held thinking: the prompt is as sent up to r0's, cached at 20,000
    assert (r3.predicted.cache_read, r3.predicted.cache_creation) == (20000, 950)


def test_the_prompt_stays_up_to_the_first_response_that_thought(tmp_path):
    t = _turns(tmp_path, "claude-haiku-4-5-20251001", first_thinks=False)
    t.user(60, "next question")
    t.call(60, "r3", 20600, 400, model="claude-haiku-4-5-20251001", content=[THINK, TEXT])
    r3 = _rows(t, tmp_path)["r3"]
    # r0 answered with a tool call only; r1's response is the first with thinking: r1's prompt stays
    assert (r3.predicted.cache_read, r3.predicted.cache_creation) == (20600, 400)


def test_models_that_keep_thinking_continue_the_conversation(tmp_path):
    t = _turns(tmp_path, "claude-opus-4-6")
    t.user(60, "next question")
    t.call(60, "r3", 21100, 300, model="claude-opus-4-6", content=[THINK, TEXT])
    r3 = _rows(t, tmp_path)["r3"]
    assert (r3.predicted.cache_read, r3.predicted.cache_creation) == (21100, 300)


def _versioned(t, version):
    """Every line written by Claude Code `version` (real transcripts name it on each line)."""
    for line in t.lines:
        line["version"] = version
    return t


@pytest.mark.parametrize("version", ["2.1.41", "2.1.150", "2.2.0-beta"])
def test_versions_that_keep_every_turns_thinking_read_the_whole_conversation(tmp_path, version):
    # From 2.1.41 Claude Code asks the API to keep all thinking (versions.py): on Sonnet 4.5 the new
    # turn's prompt is the previous one grown, and reads it whole
    t = _turns(tmp_path, "claude-sonnet-4-5-20250929")
    t.user(60, "next question")
    t.call(60, "r3", 21100, 300, model="claude-sonnet-4-5-20250929", content=[THINK, TEXT])
    r3 = _rows(_versioned(t, version), tmp_path)["r3"]
    assert (r3.predicted.cache_read, r3.predicted.cache_creation) == (21100, 300)


@pytest.mark.parametrize("version", ["2.0.28", "2.1.17", "2.1.40", "unknown"])
def test_versions_before_keep_the_api_default_and_drop_it(tmp_path, version):
    t = _turns(tmp_path, "claude-sonnet-4-5-20250929")
    t.user(60, "next question")
    t.call(60, "r3", 20000, 950, model="claude-sonnet-4-5-20250929", content=[THINK, TEXT])
    r3 = _rows(_versioned(t, version), tmp_path)["r3"]
    assert (r3.predicted.cache_read, r3.predicted.cache_creation) == (20000, 950)


@pytest.mark.parametrize("version,said", [("2.0.28", False), ("2.1.17", False), ("2.1.18", True), ("2.1.40", True),
                                          ("2.1.41", False), ("unknown", False)])
def test_turns_replayed_under_the_unconfirmed_thinking_band_say_so(tmp_path, version, said):
    # Between 2.1.17 (seen dropping) and 2.1.41 (seen keeping) no public transcript shows what the
    # harness sent: the replay drops the thinking there, and a note says it is unconfirmed.
    from prefixsim.sources.problems import collecting
    t = _turns(tmp_path, "claude-sonnet-4-5-20250929")
    t.user(60, "next question")
    t.call(60, "r3", 20000, 950, model="claude-sonnet-4-5-20250929", content=[THINK, TEXT])
    path = _versioned(t, version).write(tmp_path / "s.jsonl")
    with collecting() as found:
        sources.load(path)
    notes = [str(p) for p in found.notes if "unconfirmed" in p.message]
    assert notes == ([f"{path}:{notes[0].split(':')[1]}: 1 new user turn of Claude Code {version} replayed without "
                      "the earlier turns' thinking, as the API default drops it: unconfirmed (no public transcript "
                      "between 2.1.17 and 2.1.41 shows whether the harness kept it; 2.1.17 and earlier drop it, "
                      "2.1.41 and later keep it; docs/rules.md#claude-code-harness)"] if said else [])


def test_the_thinking_version_boundary_compares_as_numbers():
    from prefixsim.sources.claude_code.versions import drops_earlier_thinking
    assert [drops_earlier_thinking(v) for v in ("2.1.5", "2.1.40", "2.1.41", "2.1.100", "3.0", "")] == \
        [True, True, False, False, False, True]


def test_tool_results_are_no_new_turn(tmp_path):
    t = _turns(tmp_path, "claude-sonnet-4-5-20250929")
    rows = _rows(t, tmp_path)
    # inside the tool loop nothing is dropped: each request reads its predecessor's whole prompt
    assert [rows[k].predicted.cache_read for k in ("r1", "r2")] == [20000, 20600]


def _switch(tmp_path, model, meta=True, hook=False):
    """Turn 1 sent without thinking (B 20,000 then 20,600), turn 2 with it (B 21,000)."""
    t = Transcript()
    off = {"thinkingMetadata": {"level": "none", "disabled": True, "triggers": []}} if meta else {}
    on = {"thinkingMetadata": {"level": "high", "disabled": False, "triggers": []}} if meta else {}
    t.user(0, "hello", **off)
    t.call(0, "r0", 0, 20000, model=model, content=[TOOL])
    t.user(5, RESULT)
    t.call(5, "r1", 20000, 600, model=model, content=[TEXT])
    t.user(60, "now think about it", **on)
    if hook:   # a hook's output joins the turn as a user line without the metadata
        t.user(60, "<user-prompt-submit-hook>reminder</user-prompt-submit-hook>")
    t.call(60, "r2", 20000, 1000, model=model, content=[THINK, TEXT])
    t.user(70, "and then?", **on)
    t.call(70, "r3", 21000, 200, model=model, content=[THINK, TEXT])
    return _rows(t, tmp_path)


def test_a_turn_that_turns_thinking_on_reads_only_the_static_prefix(tmp_path):
    rows = _switch(tmp_path, "claude-sonnet-4-5-20250929")
    r2, r3 = rows["r2"], rows["r3"]
    assert r2.cause.kind == "prefix_changed" and "messages-layer parameters changed" in r2.cause.detail
    # the static prefix (no read has shown its size: r0's prompt less its text) is read, the rest written
    static = 20000 - get_tokenizer("cl100k_base").count_text("hello")
    assert (r2.predicted.cache_read, r2.predicted.cache_creation) == (static, 21000 - static)
    # the next request of the turn, with the same setting, reads what r2 wrote
    assert (r3.predicted.cache_read, r3.predicted.cache_creation) == (21000, 200)


def test_on_a_model_with_effort_a_thinking_change_keeps_tools_and_system(tmp_path):
    # issue 30: 4 of 4 thinking switches on Opus 4.5 / 4.6 in two public sources read tools and system
    r2 = _switch(tmp_path, "claude-opus-4-6")["r2"]
    static = 20000 - get_tokenizer("cl100k_base").count_text("hello")
    assert (r2.predicted.cache_read, r2.predicted.cache_creation) == (static, 21000 - static)
    assert "messages-layer parameters changed" in r2.cause.detail


def test_a_hook_line_joins_the_turn_with_its_setting(tmp_path):
    # a thinking turn and its hook's output (no metadata) are one setting: r3 still reads r2's prompt
    rows = _switch(tmp_path, "claude-sonnet-4-5-20250929", hook=True)
    assert (rows["r3"].predicted.cache_read, rows["r3"].predicted.cache_creation) == (21000, 200)


def test_without_metadata_the_responses_show_the_setting(tmp_path):
    # no line states a setting: turn 1's responses hold no thinking block, turn 2's do; on a model whose
    # thinking is a budget that is a switch (a response with thinking on begins with its thinking)
    rows = _switch(tmp_path, "claude-sonnet-4-5-20250929", meta=False)
    static = 20000 - get_tokenizer("cl100k_base").count_text("hello")
    assert rows["r2"].predicted.cache_read == static and rows["r3"].predicted.cache_read == 21000
    assert "messages-layer parameters changed" in rows["r2"].cause.detail


@pytest.mark.parametrize("model, switches", [("claude-opus-4-6", False), ("claude-sonnet-4-5-20250929", True)])
def test_without_metadata_an_adaptive_model_answering_without_thinking_says_nothing(tmp_path, model, switches):
    # turn 1 thinks, turn 2 is answered without a thinking block. Opus 4.6 decides itself whether to
    # think: turn 2 may have been sent thinking, so it continues turn 1's prompt. Sonnet 4.5 takes a
    # budget: with thinking on its response would begin with thinking, so turn 2 was sent without
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model=model, content=[THINK, TEXT])
    t.user(60, "yes")
    t.call(60, "r1", 20000, 600, model=model, content=[TEXT])
    r1 = _rows(t, tmp_path)["r1"]
    static = 20000 - get_tokenizer("cl100k_base").count_text("hello")
    assert r1.predicted.cache_read == (static if switches else 20000)


def test_a_later_thinking_block_shows_the_whole_turn_thought(tmp_path):
    # turn 2's first response has no thinking block, its second one does: the turn was sent thinking,
    # from its first request (one setting a turn), so turn 1 (thinking) -> turn 2 is no switch
    t = Transcript()
    model = "claude-sonnet-4-5-20250929"
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model=model, content=[THINK, TEXT])
    t.user(60, "again")
    t.call(60, "r1", 20000, 600, model=model, content=[TOOL])
    t.user(65, RESULT)
    t.call(65, "r2", 20600, 300, model=model, content=[THINK, TEXT])
    rows = _rows(t, tmp_path)
    assert [rows[k].predicted.cache_read for k in ("r1", "r2")] == [20000, 20600]


def _harness_line(tmp_path, meta):
    """Typed turns without metadata, answered without thinking (Opus 4.6), then a line the harness
    wrote (a background task's notification) stating `meta`."""
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, content=[TOOL])
    t.user(5, RESULT)
    t.call(5, "r1", 20000, 600, content=[TEXT])
    t.user(60, "<task-notification><task-id>b1</task-id><status>completed</status></task-notification>",
           thinkingMetadata=meta)
    t.call(60, "r2", 20000, 1000, content=[THINK, TEXT])
    return _rows(t, tmp_path)["r2"]


def test_a_harness_line_stating_thinking_after_turns_without_it_is_a_switch(tmp_path):
    # issue 30 item 2: the notification states a budget (2.1.x `maxThinkingTokens`) where the turns before
    # were sent without thinking: only the static prefix is read
    static = 20000 - get_tokenizer("cl100k_base").count_text("hello")
    r2 = _harness_line(tmp_path, {"maxThinkingTokens": 31999})
    assert (r2.predicted.cache_read, r2.predicted.cache_creation) == (static, 21000 - static)
    # a budget of 0 is thinking off: the same setting as before, the conversation is read
    assert _harness_line(tmp_path, {"maxThinkingTokens": 0}).predicted.cache_read == 20600


def test_thinking_seen_before_any_stated_level_is_that_level(tmp_path):
    # turn 1 states nothing and thinks; turn 2 states a budget: the same setting (2.1.x sessions open
    # with lines the harness wrote), so no switch
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, content=[THINK, TOOL])
    t.user(5, RESULT)
    t.call(5, "r1", 20000, 600, content=[THINK, TEXT])
    t.user(60, "next", thinkingMetadata={"maxThinkingTokens": 31999})
    t.call(60, "r2", 20600, 400, content=[THINK, TEXT])
    assert _rows(t, tmp_path)["r2"].predicted.cache_read == 20600


def test_the_compaction_call_is_sent_with_the_conversations_setting(tmp_path):
    # the conversation states a budget; the compaction call's own file states none and its response does
    # not think: it is the conversation plus an instruction, sent with its settings, and reads its cache
    m = Transcript()
    m.user(0, "hello", thinkingMetadata={"maxThinkingTokens": 31999})
    m.call(0, "r0", 0, 20000, content=[THINK, TEXT])
    m.user(10, "more", thinkingMetadata={"maxThinkingTokens": 31999})
    m.call(10, "r1", 20000, 500, content=[THINK, TEXT])
    main = m.write(tmp_path / "proj" / "s1.jsonl")
    c = Transcript(sidechain=True)
    c.user(30, "Your task is to create a detailed summary")
    c.call(30, "c0", 20500, 900, content=[TEXT])
    c.write(tmp_path / "proj" / "s1" / "subagents" / "agent-acompact-1.jsonl")
    rows = {r.request_id: r for r in replay(sources.open_many([main.parent])).rows}
    assert (rows["c0"].predicted.cache_read, rows["c0"].predicted.cache_creation) == (20500, 900)
