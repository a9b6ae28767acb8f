"""Issue 14: replay reconstruction of Claude Code transcripts and API logs, each mechanism on a small
fixture built here (numbers follow from the rule, not from a run)."""
from prefixsim.replay import replay
from prefixsim.sources import load, load_many

from cc_fixtures import NOTIFICATION, Transcript, stamp


def _progress(t, s):
    """A `progress` record (a hook's output) chained after the last line, as 2.1.x writes them."""
    uid = t._uuid()
    t.lines.append({"parentUuid": t.last, "type": "progress", "uuid": uid, "timestamp": stamp(s),
                    "sessionId": t.session, "isSidechain": False, "data": {"type": "hook_progress"}})
    t.last = uid


def test_a_notification_after_a_turn_continues_through_system_records(tmp_path):
    t = Transcript()
    t.user(0, "run the tests in the background")
    t.call(0, "r0", 0, 20000)                       # B 20,000
    _progress(t, 2)
    t.system(2, "stop_hook_summary")
    t.system(2, "turn_duration")
    t.user(60, NOTIFICATION)                        # parent: turn_duration -> stop_hook -> progress -> r0
    t.call(60, "r1", 20000, 300)                    # the API read the whole conversation
    rows = {r.request_id: r for r in replay(load(t.write(tmp_path / "s.jsonl"), False)).rows}
    assert rows["r1"].predicted.cache_read == 20000 and rows["r1"].cause.kind == ""
    assert rows["r1"].predicted.cache_creation == 300


def test_a_message_whose_chain_reaches_no_message_starts_a_new_history(tmp_path):
    t = Transcript()
    t.user(0, "first")
    t.call(0, "r0", 0, 20000)
    t.user(30, "second")
    t.call(30, "r1", 20000, 500)                    # B 20,500
    t.system(40, "local_command")
    t.lines[-1]["parentUuid"] = None                # a record that starts a chain of its own
    t.user(50, "a new conversation")                # parent: that record, which reaches no message
    t.call(50, "r2", 15000, 6000)                   # B 21,000: larger, yet not a continuation
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    # a new history keeps only the static prefix: the history block of r1 is not carried
    assert recs["r2"].call.request.blocks[1].data != recs["r1"].call.request.blocks[1].data


def test_a_notification_queued_before_a_compaction_comes_with_a_rerender(tmp_path):
    t = Transcript()
    t.user(0, "start")
    t.call(0, "r0", 0, 20000)
    t.queue(10, NOTIFICATION)
    t.system(20, "compact_boundary")
    t.user(20, "This session is being continued...", isCompactSummary=True)
    t.call(20, "r1", 8000, 4000)
    t.user(30, NOTIFICATION)
    t.call(30, "r2", 8000, 4300)
    recs = {r.request_id: r for r in load(t.write(tmp_path / "s.jsonl"), False)}
    assert recs["r2"].call.request.blocks[1].data != recs["r1"].call.request.blocks[1].data
