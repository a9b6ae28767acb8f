"""A compaction call whose conversation's transcript is not in the folder (docs/rules.md#claude-code-harness).

Claude Code's `cleanupPeriodDays` sweep (30 days by default) deletes a session's main transcript and
leaves its `subagents/` folder (anthropics/claude-code issues 47717, 58154), and a copy of a projects
folder can leave large files out: a session's `subagents/agent-acompact-*.jsonl` then stands
without its `<session>.jsonl`. The compaction still forks that conversation, whose latest request
cached it; before, the replay took the compaction for a cold start and predicted no read (12 of 13
such calls in a public source read 93.5-99.1 % of their prompt)."""

from cc_fixtures import Transcript
from conftest import replay_says

from prefixsim.replay import replay
from prefixsim.sources import load

INSTRUCTION = "Your task is to create a detailed summary of the conversation so far"


def _folder(tmp_path, with_main):
    """Session s1: a main conversation of three requests (written only `with_main`), its compaction
    call 5 s after the last (read 30,950 of 31,600: the conversation), and a sub-agent."""
    m = Transcript()
    m.user(0, "hello")
    m.call(0, "r0", 0, 20000)
    m.user(10, "more")
    m.call(10, "r1", 20000, 10000)
    m.user(20, "and more")
    m.call(20, "r2", 30000, 950)
    if with_main:
        m.write(tmp_path / "proj" / "s1.jsonl")
    a = Transcript(sidechain=True)
    a.user(12, "explore the code")
    a.call(12, "a0", 0, 6000, model="claude-haiku-4-5-20251001")
    a.write(tmp_path / "proj" / "s1" / "subagents" / "agent-abc.jsonl")
    c = Transcript(sidechain=True)
    c.user(26, INSTRUCTION)
    c.call(26, "c0", 30950, 650)
    c.write(tmp_path / "proj" / "s1" / "subagents" / "agent-acompact-1.jsonl")
    return tmp_path / "proj"


def _row(folder, rid):
    return next(r for r in replay(load(folder, False)).rows if r.request_id == rid)


def test_a_compaction_without_its_conversation_reads_what_that_conversation_cached(tmp_path):
    row = _row(_folder(tmp_path, with_main=False), "c0")
    prompt = row.observed.cache_read + row.observed.cache_creation
    # the conversation as the compaction sends it, less its instruction (the latest reply, which the
    # conversation's latest request did not cache, is within it: the data does not size it)
    assert prompt - 30 < row.predicted.cache_read < prompt
    assert row.predicted.cache_read >= row.observed.cache_read   # before: 0, a cold start
    assert row.cause.kind == ""   # no miss to explain


def test_with_the_conversation_in_the_folder_nothing_is_added(tmp_path):
    folder = _folder(tmp_path, with_main=True)
    result = replay(load(folder, False))
    assert result.summary.absent_conversations == 0
    assert next(r for r in result.rows if r.request_id == "c0").predicted.cache_read == 30950


def test_each_compaction_of_an_absent_conversation_forks_its_own(tmp_path):
    # two compactions of one absent conversation an hour apart: the second reads its own conversation,
    # not the first one's (which expired; the two share no history)
    folder = _folder(tmp_path, with_main=False)
    c = Transcript(sidechain=True)
    c.user(3626, INSTRUCTION)
    c.call(3626, "c1", 25000, 400)
    c.write(folder / "s1" / "subagents" / "agent-acompact-2.jsonl")
    result = replay(load(folder, False))
    second = next(r for r in result.rows if r.request_id == "c1")
    assert 25400 - 30 < second.predicted.cache_read < 25400
    assert result.summary.absent_conversations == 2


def test_the_output_says_how_many(tmp_path):
    summary, text, with_requests = replay_says(_folder(tmp_path, with_main=False))
    assert summary["absent_conversation_requests"] == 1
    assert "1 compaction call forked a conversation whose transcript is not in the data" in text
    assert "replayed after that conversation's latest request" in with_requests
