"""A test's cassette that starts on the cache its previous run left (issue 30; sources/earlier_run.py,
docs/rules.md#an-earlier-run-of-a-recording): the first request read cached tokens no request in the
file wrote, so the test had run a moment before; what that run sent is known as far as each request's
first model-written turn, and the replay steps it into the cache before the recording."""
import json

from click.testing import CliRunner
from log_fixtures import messages_cassette

from prefixsim.cli import cli
from prefixsim.model import Block, Layer, Request
from prefixsim.replay import replay
from prefixsim.sources import load
from prefixsim.sources.earlier_run import SUFFIX, fixed_by_the_test

SYSTEM = "You are a helpful assistant. " + "This is padding to make the prompt long enough. " * 120


def _cassette(tmp_path, name, words, reads, messages=None):
    """A vcrpy cassette (our own) of Messages calls as crewAI's caching tests make them: the breakpoint
    on the user message, which differs between the calls; `reads` is what each call's usage says it read."""
    calls = []
    for k, (word, read) in enumerate(zip(words, reads)):
        msgs = (messages or [])[:] + [{"role": "user", "content": [
            {"type": "text", "text": f"Say {word} in one word.", "cache_control": {"type": "ephemeral"}}]}]
        body = {"model": "claude-sonnet-4-5", "max_tokens": 50, "system": SYSTEM, "messages": msgs}
        resp = {"id": f"msg_{name}{k}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Hi"}],
                "usage": {"input_tokens": 3, "cache_creation_input_tokens": 0 if read else 1300,
                          "cache_read_input_tokens": read, "output_tokens": 2}}
        calls.append((body, resp, f"Tue, 10 Feb 2026 18:27:4{k} GMT"))
    return messages_cassette(tmp_path / f"{name}.yaml", calls)


def test_a_recording_that_starts_warm_is_replayed_after_an_earlier_run_of_its_test(tmp_path):
    # crewAI's test_anthropic_cached_prompt_tokens (tests/data/crewai-api): "hello" and then "goodbye",
    # each read in full on a cache no call of the file wrote. Before: both predicted cold / changed (0).
    first = replay(load(_cassette(tmp_path, "probe", ["hello", "goodbye"], [0, 0]))).rows
    full = first[0].predicted.cache_write_5m
    assert full > 1000
    path = _cassette(tmp_path, "warm", ["hello", "goodbye"], [full, full])
    res = replay(load(path))
    assert [r.predicted.cache_read for r in res.rows] == [full, full]
    assert [r.predicted.cache_write_5m for r in res.rows] == [0, 0]
    assert (res.summary.earlier_runs, res.summary.earlier_calls) == (1, 2)
    assert res.summary.outside.requests == 0            # explained, no longer "outside the data"
    assert [r.stream for r in res.rows] == ["main", "main"]   # the earlier run has no rows of its own
    assert res.summary.requests == 2


def test_a_recording_that_starts_cold_is_replayed_as_it_stands(tmp_path):
    recs = load(_cassette(tmp_path, "cold", ["hello", "goodbye"], [0, 0]))
    assert all(not r.earlier for r in recs)
    assert replay(recs).summary.earlier_runs == 0


def test_the_earlier_run_is_assumed_only_for_requests_the_test_alone_decides():
    # A request after a reply depends on what the model said (its text, the tools it called), which
    # differs from run to run: only requests without a model-written turn were surely sent before.
    blocks = (Block(Layer.SYSTEM, b'{"type":"text","text":"sys"}', "system[0]", tokens=1200),
              Block(Layer.MESSAGES, b'{"role":"user"}{"text":"q1"}', "messages[0].content[0]", tokens=10),
              Block(Layer.MESSAGES, b'{"role":"assistant"}{"text":"a1"}', "messages[1].content[0]", tokens=300),
              Block(Layer.MESSAGES, b'{"role":"user"}{"text":"q2"}', "messages[2].content[0]", tokens=10))
    assert fixed_by_the_test(Request("claude-sonnet-4-5", blocks[:2]))
    assert not fixed_by_the_test(Request("claude-sonnet-4-5", blocks))
    gemini = (blocks[0], Block(Layer.MESSAGES, b'{"role":"model","parts":[]}', "contents[1]", tokens=5))
    assert not fixed_by_the_test(Request("gemini-2.5-flash", gemini))
    assert not fixed_by_the_test(Request("gemini-2.5-flash", ()))


def test_a_later_call_carrying_the_models_reply_is_not_assumed_sent_before(tmp_path):
    # The second call sends an earlier reply back: the earlier run's reply was another, so that call
    # is not assumed sent before; its breakpoint (after the reply) was never written, and it writes.
    prior = [{"role": "user", "content": "Start."}, {"role": "assistant", "content": "Started."}]
    probe = replay(load(_cassette(tmp_path, "p2", ["hello"], [0]))).rows[0].predicted.cache_write_5m
    path = _cassette(tmp_path, "mixed", ["hello"], [probe])
    text = path.read_text()
    second = _cassette(tmp_path, "second", ["goodbye"], [0], messages=prior).read_text().split("\n", 1)[1]
    path.write_text(text + second.replace("18:27:40", "18:27:45"))
    recs = load(path)
    assert [c.stream for c in recs[0].earlier] == ["main" + SUFFIX]
    rows = replay(recs).rows
    assert rows[0].predicted.cache_read == probe
    assert rows[1].predicted.cache_read == 0 and rows[1].predicted.cache_write_5m > 0


def test_transcripts_and_logs_are_never_given_an_earlier_run(tmp_path):
    # A harness session that starts warm read another session's prefix, which no file shows: counted
    # outside the data (replay/outside.py), never invented.
    line = {"type": "message", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 3,
            "cache_read_input_tokens": 1300, "cache_creation_input_tokens": 0, "output_tokens": 2}}
    req = {"model": "claude-sonnet-4-5", "max_tokens": 50, "system": SYSTEM,
           "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi",
                                                      "cache_control": {"type": "ephemeral"}}]}]}
    p = tmp_path / "log.jsonl"
    p.write_text(json.dumps({"request": req, "response": line}) + "\n")
    recs = load(p)
    assert recs and not recs[0].earlier
    res = replay(recs)
    assert res.summary.earlier_runs == 0 and res.summary.outside.requests == 1


def test_the_output_says_the_earlier_run_was_assumed(tmp_path):
    first = replay(load(_cassette(tmp_path, "probe", ["hello"], [0]))).rows[0].predicted.cache_write_5m
    path = _cassette(tmp_path, "warm", ["hello", "goodbye"], [first, first])
    out = CliRunner().invoke(cli, ["replay", str(path), "--width", "100"])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "1 recording began on a warm cache" in text and "earlier run of the same test (2 calls" in text
    assert "docs/rules.md#an-earlier-run-of-a-recording" in text
    out = CliRunner().invoke(cli, ["replay", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert (doc["summary"]["earlier_runs"], doc["summary"]["earlier_run_calls"]) == (1, 2)
