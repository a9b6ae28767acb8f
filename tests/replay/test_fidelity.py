"""The replay's fidelity on every shipped source of real traffic, next to the naive mechanism
(issue 30): a change to the replay's rules that moves any source's figures fails here, so its
author reports the before-and-after table (`python bench/fidelity.py`) rather than finding out later
that a rule for one harness version broke another."""
import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fidelity.py"
_spec = importlib.util.spec_from_file_location("fidelity", BENCH)
fidelity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fidelity)

#: source -> (requests scored, exact reads, naive's exact reads, cache-read WAPE, naive's WAPE)
PINNED = {
    # three recordings start on the cache an earlier run of their test left (sources/earlier_run.py)
    "anthropic-api": (9, 9, 6, 0.0, 0.489998),
    "bedrock-api": (8, 6, 6, 0.066644, 0.48816),
    "claude-code/claude-code-sidekick": (73, 69, 60, 0.027343, 0.053274),
    "claude-code/claude-code-stuffs": (13, 12, 12, 0.076538, 0.097964),
    "claude-code/claude-code-viewer": (170, 167, 167, 0.004234, 0.010317),
    "claude-code/claude-reliability": (70, 68, 63, 0.01797, 0.062895),
    "claude-code/entire-cli": (17, 16, 16, 0.000195, 0.000195),
    "claude-code/scripts-and-tools": (34, 30, 28, 0.042893, 0.046815),
    "claude-code/spotter": (169, 163, 160, 0.004157, 0.034985),
    "codex": (7, 5, 0, 0.028526, 0.219229),
    "deepseek-api": (7, 6, 1, 0.027778, 1.055556),
    # Gemini's printed figure is what public traffic shows: 2.5 Flash reads its kept prefix (594 of 776)
    "gemini-api": (8, 5, 4, 0.027062, 0.86064),
    "openai-api": (6, 6, 5, 0.0, 0.203336),
    # crewAI's cassettes replayed on one clock (their `Date` headers): the streamed tests read what the
    # plain ones of the same run wrote seconds before; the plain ones what an earlier run wrote
    "crewai-api": (12, 11, 5, 0.073363, 0.610044),
    # Claude and Gemini through OpenRouter exact; Cohere and Mistral read caches of earlier runs of
    # their tests (7 and 1 tokens over: the earlier run's prompt is counted, not logged)
    "router-api": (6, 4, 3, 0.000764, 0.486915),
    "litellm": (1, 1, 1, None, None),
    "gemini-cli": (48, 7, 8, 0.243914, 0.325286),
    # two real Langfuse traces (LangGraph.js, OpenAI Agents SDK) of prompts below OpenAI's minimum: no reads
    "langfuse": (4, 4, 4, None, None),
    # two real OpenCode event streams (opencode.nvim's recordings): Copilot's Claude, whose old OpenCode
    # kept the reads inside `input` (read so from the data), 312, 7 and 6 tokens over after a first read
    # of a cache the recording never shows; Anthropic's 2 tokens over
    "opencode": (6, 2, 2, 0.128386, 0.179403),
    # a real OTLP export (Claude Code under kagent): usage without prompts, its 9 calls audited, none scored
    "otel": (0, 0, 0, None, None),
}
#: source -> requests audited (usage recorded without the prompt: nothing predicted to score)
AUDITED = {"otel": 9,
           "openai-api": 1}   # a Realtime response whose usage the cassette has and whose prompt it does not
#: source -> (requests whose cause the data proves, those the replay names rightly): issue 37's
#: cause accuracy next to the token figures (bench/cause_evidence.py says what counts as proof).
PINNED_CAUSES = {
    "anthropic-api": (3, 3), "bedrock-api": (2, 2), "claude-code/claude-code-sidekick": (51, 51),
    "claude-code/claude-code-stuffs": (11, 11), "claude-code/claude-code-viewer": (164, 164),
    "claude-code/claude-reliability": (63, 63), "claude-code/entire-cli": (15, 15),
    "claude-code/scripts-and-tools": (14, 14), "claude-code/spotter": (160, 160), "codex": (0, 0),
    "crewai-api": (3, 3),
    "deepseek-api": (0, 0), "gemini-api": (0, 0), "gemini-cli": (0, 0), "langfuse": (1, 1), "litellm": (0, 0),
    "openai-api": (0, 0), "router-api": (1, 1), "opencode": (4, 4), "otel": (0, 0),
}
#: Sources the replay is known to be worse than naive on, and why; the test below fails once one is
#: no longer worse, so the entry goes when the gap closes (issue 30 asks for none).
KNOWN_WORSE = {
    # Gemini's implicit caching is best effort; the printed figure is what public traffic shows (a
    # lower WAPE than naive's, 24.4 % against 32.5 %), but a hit is not certain: one 3.1 Pro request 18 s
    # after a cold one read nothing, which naive gets by repeating that cold read (7 exact against 8;
    # tests/data/README.md, docs/rules.md#google-gemini)
    "gemini-cli": "best-effort implicit caching: a miss after a miss, which naive repeats",
}


@pytest.fixture(scope="module")
def scores():
    return fidelity.score([(s, fidelity.DATA / s) for s in fidelity.SHIPPED])


def test_every_shipped_source_is_scored(scores):
    assert sorted(scores) == sorted(PINNED)
    assert len([s for s in PINNED if s.startswith("claude-code/")]) >= 4


@pytest.mark.parametrize("source", sorted(PINNED))
def test_each_source_keeps_its_figures(scores, source):
    f = scores[source].figures()
    assert (f["requests"], f["exact"], f["naive_exact"], f["wape"], f["naive_wape"]) == PINNED[source]
    assert f["unreplayed"] == 0
    assert f["audited"] == AUDITED.get(source, 0)


def test_an_audited_source_has_its_row(scores):
    """Every format has its row: a usage-only export says how many calls it audited, not that it failed."""
    line = [ln for ln in fidelity.table(scores, "source").splitlines() if ln.startswith("otel ")]
    assert line == [f"{'otel':34} {9:8} audited: usage recorded without prompts, nothing predicted to score"]


@pytest.mark.parametrize("source", sorted(PINNED))
def test_each_source_keeps_its_cause_accuracy(scores, source):
    f = scores[source].figures()
    assert (f["causes"], f["cause_ok"]) == PINNED_CAUSES[source]


def test_the_table_prints_cause_accuracy_next_to_the_tokens(scores):
    text = fidelity.table(scores, "source")
    head = text.splitlines()[0].split()
    assert head[-4:-2] == ["causes", "right"] and head.index("WAPE") < head.index("causes")
    assert [ln for ln in text.splitlines() if ln.startswith("claude-code/spotter")][0].split()[-5:] == \
        ["160", "100.0%", "0", "of", "4"]


@pytest.mark.parametrize("source", sorted(PINNED))
def test_no_source_is_worse_than_naive(scores, source):
    if source in KNOWN_WORSE:
        assert scores[source].verdict == "WORSE than naive", f"{source} caught up: drop it from KNOWN_WORSE"
        return
    assert scores[source].verdict in ("beats naive", "ties naive"), scores[source].figures()


def test_the_verdict_needs_both_exactness_and_a_lower_wape():
    s = fidelity.Score()
    s.add(10, 10, 10)
    assert s.verdict == "beats naive"       # no error at all
    s.add(5, 8, 8)                           # naive exact, prefixsim off by 3
    assert s.verdict == "WORSE than naive"
    t = fidelity.Score()
    t.add(4, 4, 6)
    assert t.verdict == "ties naive"
    t.add(6, 5, 6)
    assert t.verdict == "beats naive"


def test_sessions_worse_than_naive_are_counted_apart_from_the_pooled_figure():
    """Issue 30's bar is per session too: a source can beat naive pooled while a session of it is worse."""
    s = fidelity.Score()
    for _ in range(9):
        s.add(100, 90, 100, "a")             # prefixsim exact, naive 10 % off
    s.add(80, 100, 100, "b")                 # 20 % worse than naive in session b alone
    s.add(0, 0, 0, "c")                      # nothing read: no WAPE, never counted
    assert s.verdict == "beats naive" and s.sessions_worse == 1 and len(s.sessions) == 3
    t = fidelity.Score()
    t.add(1000, 1000, 1000, "b")             # the same session in another group: merged, then within 0.5 points
    t.add(995, 1000, 1000, "b")
    t.merge(s)
    assert t.sessions["b"] == [25, 0, 2100] and t.sessions_worse == 1
    assert fidelity._session("p/abc/subagents/agent-1.jsonl") == fidelity._session("p/abc.jsonl") == "p/abc"


def test_shipped_sessions_worse_than_naive(scores):
    worse = {k: (v.sessions_worse, len(v.sessions)) for k, v in scores.items() if v.sessions_worse}
    # the one Gemini CLI session whose best-effort miss naive repeats (KNOWN_WORSE); the OpenCode stream
    # whose Copilot input held its reads is no longer one, read as its old OpenCode stored it
    assert worse == {"gemini-cli": (1, 4)}
    assert "worse sessions" in fidelity.table(scores, "source").splitlines()[0]
