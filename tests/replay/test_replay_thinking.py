"""Thinking blocks of earlier turns in Claude Code transcripts (A-TH, A-PC "Caching with thinking
blocks"): on models that keep only the last turn's thinking, a new user turn drops every earlier
response's thinking block, so the prompt stays as sent only up to the first request of the turn just
ended whose response held one and was sent on. A turn sent with another thinking setting than the
turn before invalidates the messages (A-PC; on models that take an effort parameter, everything): the
setting is the user line's `thinkingMetadata` (2.0.x); a transcript without it is one setting throughout.
Transcripts built here; numbers follow from the rule; every turn below thinks unless it says otherwise."""
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


def test_on_a_model_with_effort_a_thinking_change_invalidates_everything(tmp_path):
    r2 = _switch(tmp_path, "claude-opus-4-6")["r2"]
    assert (r2.predicted.cache_read, r2.predicted.cache_creation) == (0, 21000)


def test_a_hook_line_joins_the_turn_with_its_setting(tmp_path):
    # a thinking turn and its hook's output (no metadata) are one setting: r3 still reads r2's prompt
    rows = _switch(tmp_path, "claude-sonnet-4-5-20250929", hook=True)
    assert (rows["r3"].predicted.cache_read, rows["r3"].predicted.cache_creation) == (21000, 200)


def test_without_metadata_the_setting_is_taken_as_unchanged(tmp_path):
    # no line says how the turns were sent: r2 continues r1's prompt as before the rule
    rows = _switch(tmp_path, "claude-sonnet-4-5-20250929", meta=False)
    assert rows["r2"].predicted.cache_read == 20600 and rows["r3"].predicted.cache_read == 21000
