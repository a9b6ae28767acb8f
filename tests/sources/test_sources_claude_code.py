import json

import pytest
from cc_fixtures import Transcript, session

from prefixsim.errors import UserError
from prefixsim.sources import detect, load, load_many
from prefixsim.sources.claude_code import transcript as claude_code
from prefixsim.sources.problems import collecting


def test_single_file_is_that_file_only_and_deduplicated(tmp_path):
    main = session(tmp_path)
    recs = load(main)
    assert [r.request_id for r in recs] == ["r0", "r1", "r2", "r3", "r4", "r5"]
    assert {r.call.stream for r in recs} == {"main"}
    assert recs[1].observed.cache_read == 20000 and not recs[1].output_final


def test_session_folder_and_file_plus_folder_include_subagents(tmp_path):
    main = session(tmp_path)
    folder = main.with_suffix("")
    for recs in (load(folder), load_many([main, folder])):
        streams = {r.call.stream for r in recs}
        assert streams == {"main", "agent-abc", "compact-acompact-1"}
        assert len(recs) == 9


def test_projects_folder_keeps_sessions_apart(tmp_path):
    session(tmp_path, with_agent=False)
    other = Transcript(session="s2")
    other.user(0, "hi")
    other.call(0, "x0", 0, 5000)
    other.write(tmp_path / "proj" / "s2.jsonl")
    recs = load(tmp_path / "proj")
    assert {r.call.stream for r in recs} == {"s1/main", "s2/main"}


def test_calibrated_blocks_follow_the_observed_sizes(tmp_path):
    recs = {r.request_id: r for r in load(session(tmp_path).with_suffix(""))}
    r1 = recs["r1"].call.request
    sizes = [b.tokens for b in r1.blocks]
    assert sum(sizes) == 20501 and sizes[-1] == 1                      # tail after the last breakpoint
    # cross-session prefix, the session's own static part, two history blocks, the tail
    assert [b.breakpoint for b in r1.blocks] == ["5m", "5m", None, "5m", None]
    # the compaction call forks the main conversation: same blocks, then its own
    c0 = recs["c0"].call
    assert c0.parent == "main" and c0.request.blocks[:4] == recs["r2"].call.request.blocks[:4]
    # after compact_boundary and after an injected task-notification a new epoch starts
    assert recs["r3"].call.event == "compaction"
    assert recs["r5"].call.request.blocks[2].data != recs["r4"].call.request.blocks[2].data


def test_static_prefix_learned_from_an_earlier_partial_read(tmp_path):
    recs = {r.request_id: r for r in load(session(tmp_path))}
    # r3 (after compaction) read 8,000: the static size used from r5 on, not before
    def static(rid):
        return sum(b.tokens for b in recs[rid].call.request.blocks[:2])

    assert static("r5") == 8000 and static("r3") != 8000


def test_inline_sidechains_of_1_0_x(tmp_path):
    t = Transcript()
    t.user(0, "orchestrate")
    t.call(0, "m0", 0, 9000, model="claude-sonnet-4-20250514",
           content=[{"type": "tool_use", "name": "Task", "id": "tu1",
                     "input": {"subagent_type": "general-purpose", "prompt": "task one"}}])
    for k, prompt in enumerate(["task one", "task two"]):
        root = t.user(5, prompt, parent=None, sidechain=True)
        t.call(5, f"s{k}", 0, 3000, model="claude-sonnet-4-20250514", sidechain=True)
        assert root
    recs = load(t.write(tmp_path / "v.jsonl"), with_subagents=True)
    assert sorted({r.call.stream for r in recs}) == ["agent-1", "agent-2", "main"]


def test_detect_and_errors(tmp_path):
    main = session(tmp_path)
    assert detect(main) == "claude-code" and detect(tmp_path / "proj") == "claude-code"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(main.read_text().splitlines()[0] + "\n{oops\n")
    with collecting(strict=True), pytest.raises(UserError) as e:
        claude_code.load(bad, False)
    assert e.value.path == str(bad) and e.value.line == 2
    with collecting() as found:   # lenient (the default): skipped, counted, named
        claude_code.load(bad, False)
    assert [(p.path, p.line) for p in found.skipped] == [(str(bad), 2)]


def test_detects_engine_traces(tmp_path):
    mc = tmp_path / "m.jsonl"
    mc.write_text(json.dumps({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}) + "\n")
    bl = tmp_path / "b.jsonl"
    bl.write_text(json.dumps({"chat_id": 1, "parent_chat_id": -1, "turn": 1, "timestamp": 0.0,
                              "input_length": 20, "output_length": 3, "hash_ids": [7]}) + "\n")
    assert detect(mc) == "mooncake" and detect(bl) == "bailian"


def test_the_harness_own_messages_are_no_calls_and_no_unusable_lines(tmp_path):
    """Claude Code writes an API error or a usage limit into the conversation as an assistant message
    of model `<synthetic>`, with an all-zero usage (2.0.x) or none: not a request, and nothing wrong
    with the line."""
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 5000)
    t.user(10, "more")
    zero = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    for k, usage in enumerate((zero, None)):
        t.lines.append({"parentUuid": t.last, "type": "assistant", "uuid": f"syn{k}", "isSidechain": False,
                        "sessionId": t.session, "timestamp": "2026-01-05T10:00:11.000Z", "isApiErrorMessage": True,
                        "message": {"id": f"syn-{k}", "model": "<synthetic>", "role": "assistant",
                                    "content": [{"type": "text", "text": "Session limit reached"}],
                                    **({"usage": usage} if usage else {})}})
        t.last = f"syn{k}"
    t.user(20, "again")
    t.call(20, "r1", 5000, 300)
    with collecting() as problems:
        recs = load(t.write(tmp_path / "s.jsonl"))
    assert [r.request_id for r in recs] == ["r0", "r1"]
    assert problems.skipped == [] and problems.notes == []


def test_a_request_responded_at_its_earliest_line(tmp_path):
    """A response's content blocks are not always logged in time order (2.0.x stamped a thinking
    block after the tool call it precedes, and after the tool's result): the response began at the
    earliest, and the next request, sent with the result, finds the entry written."""
    from cc_fixtures import stamp

    from prefixsim.replay import replay

    t = Transcript()
    t.user(0, "run the tests")
    t.call(0, "r0", 0, 30000, ttft=2.0)
    t.lines[-2]["timestamp"] = stamp(12.0)     # the thinking line, stamped after the tool's result
    t.user(2.5, [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}])
    t.call(2.5, "r1", 30000, 400)
    recs = load(t.write(tmp_path / "s.jsonl"))
    assert recs[0].call.ttft == pytest.approx(2.1) and recs[0].timestamp == stamp(0)   # the tool call line
    row = replay(recs).rows[1]
    assert (row.predicted.cache_read, row.predicted.cache_creation, row.cause.kind) == (30000, 400, "")
