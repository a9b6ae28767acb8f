"""Where a sub-agent's static prefix ends (docs/rules.md "### Where a sub-agent's system entry ends").

Claude Code puts a breakpoint on the system prompt and on the last message. A sub-agent's first
message carries what the harness adds (CLAUDE.md, reminders) before its task, so the prompt less the
task's text runs past the system entry: siblings, whose tasks differ, read only the system entry."""
from cc_fixtures import Transcript

from prefixsim.replay import replay
from prefixsim.sources import load

SONNET = "claude-sonnet-4-6"


def _agent(root, session, name, calls, task):
    a = Transcript(session=session, sidechain=True)
    for i, (t, read, write) in enumerate(calls):
        a.user(t, task if i == 0 else [{"type": "tool_result", "tool_use_id": f"toolu_{name}{i}", "content": "ok"}])
        a.call(t, f"{name}{i}", read, write, uncached=3, model=SONNET)
    for line in a.lines:
        line["version"] = "2.1.41"
    a.write(root / session / "subagents" / f"agent-{name}.jsonl")


def _folder(tmp_path):
    """Session s0's sub-agents x, y (y's read shows the 10,000-token system entry); an hour later
    session s1's p, q, r of the same type and model, each with a task of its own; p's second epoch
    (after an expiry) follows r, which, cold, wrote the system entry again 5 s before."""
    root = tmp_path / "proj"
    _agent(root, "s0", "x", [(0, 0, 30000)], "find the parser")
    _agent(root, "s0", "y", [(4, 10000, 20100)], "find every caller of the tokenizer")
    _agent(root, "s1", "p", [(3600, 0, 30000), (3610, 30000, 400), (5000, 10000, 20700)], "list the tests")
    _agent(root, "s1", "q", [(3603, 10000, 20050), (3612, 30050, 300)], "read the README and summarise it")
    _agent(root, "s1", "r", [(4995, 0, 30090)], "where is the cache configured")
    return root


def test_a_sibling_reads_the_system_entry_not_the_first_message(tmp_path):
    rows = {r.request_id: r for r in replay(load(_folder(tmp_path), False)).rows}
    # q starts 3 s after p: of p's prompt it reads the system entry another session's read showed,
    # not p's first message (before: 29,990 of it, p's prompt less q's task)
    assert rows["q0"].predicted.cache_read == 10000
    # the streams' own histories still read whole
    assert rows["p1"].predicted.cache_read == 30000 and rows["q1"].predicted.cache_read == 30050


def test_a_later_epoch_reads_the_system_entry_a_sibling_kept(tmp_path):
    rows = {r.request_id: r for r in replay(load(_folder(tmp_path), False)).rows}
    # p's history expired; r wrote the system entry 5 s before: p reads that, not r's first message
    assert rows["p2"].predicted.cache_read == 10000
    assert rows["p2"].cause.kind == "ttl_expired"


def test_without_a_read_showing_it_the_estimate_stands(tmp_path):
    # s1 alone: nothing showed where the system entry ends before q starts; q reads p's estimate
    rows = {r.request_id: r for r in replay(load(_folder(tmp_path) / "s1", False)).rows}
    assert rows["q0"].predicted.cache_read > 10000
    # p's second epoch: q's read showed where the entry ends, r wrote it
    assert rows["p2"].predicted.cache_read == 10000
