"""When a recording's calls ran, and what follows from it (issue 30): a cassette's server `Date`
headers put its calls on the clock they ran on, so the cassettes one test run recorded minutes apart
share one cache, as they shared the account's; and a request that starts at the instant its
predecessor's response was stamped reads that response's write however the times were shifted."""
import datetime as dt

from log_fixtures import messages_cassette

from prefixsim.core.simulator import Simulator
from prefixsim.model import Block, Call, Layer, Request
from prefixsim.replay import replay
from prefixsim.sources import load, load_many
from prefixsim.sources.cassette import recorded_stamp

SYSTEM = "You are a helpful assistant. " + "This is padding to make the prompt long enough. " * 120


def _cassette(tmp_path, name, dates, stream=False):
    """A vcrpy cassette (our own) of two Messages calls, the breakpoint on the user message as crewAI's
    tests put it, each response with the server's `Date` header; every call writes its prompt."""
    calls = []
    for k, date in enumerate(dates):
        body = {"model": "claude-sonnet-4-5", "max_tokens": 50, "system": SYSTEM, "stream": stream,
                "messages": [{"role": "user", "content": [{"type": "text", "text": f"Say word {k}.",
                                                           "cache_control": {"type": "ephemeral"}}]}]}
        resp = {"id": f"msg_{name}{k}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Hi"}],
                "usage": {"input_tokens": 3, "cache_creation_input_tokens": 1300, "cache_read_input_tokens": 0,
                          "output_tokens": 2}}
        calls.append((body, resp, date))
    return messages_cassette(tmp_path / f"{name}.yaml", calls)


def test_a_date_header_is_when_the_call_ran():
    inter = {"response": {"headers": {"date": ["Tue, 10 Feb 2026 18:27:40 GMT"]}}}
    assert recorded_stamp(inter) == "2026-02-10T18:27:40Z"
    assert recorded_stamp({"recorded_at": "Tue, 10 Feb 2026 18:27:41 GMT"}) == "2026-02-10T18:27:41Z"
    assert recorded_stamp({"response": {"headers": {"Date": "not a date"}}}) is None
    assert recorded_stamp({"response": {}}) is None


def test_cassettes_of_one_run_share_the_cache_by_their_date_headers(tmp_path):
    # crewAI's Anthropic tests (tests/data/crewai-api): the streamed test sends the non-streamed test's
    # two requests three seconds later, and reads what they left. Replayed together (`prefixsim replay
    # A B`, bench/fidelity.py for a folder of timed recordings), the second cassette's calls read the
    # first's writes; placed at t = 0 and 10 s each, they ran at once and missed (`not_yet_available`).
    a = _cassette(tmp_path, "plain", ["Tue, 10 Feb 2026 18:27:40 GMT", "Tue, 10 Feb 2026 18:27:41 GMT"])
    b = _cassette(tmp_path, "streamed", ["Tue, 10 Feb 2026 18:27:43 GMT", "Tue, 10 Feb 2026 18:27:44 GMT"], True)
    assert [r.timestamp for r in load(a)] == ["2026-02-10T18:27:40Z", "2026-02-10T18:27:41Z"]
    rows = replay(load_many([a, b])).rows
    assert [r.stream.rsplit("/", 2)[-2] for r in rows] == ["plain.yaml", "plain.yaml", "streamed.yaml", "streamed.yaml"]
    reads = [r.predicted.cache_read for r in rows]
    assert reads[:2] == [0, 0]                    # "Say word 1." never came before
    assert reads[2] == rows[0].predicted.cache_write_5m > 1000 and reads[3] == rows[1].predicted.cache_write_5m


def _epoch(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_a_request_at_its_predecessors_response_instant_reads_it_whatever_the_clock_offset():
    # A Gemini CLI request starts at the previous response's stamp (BrianV1981/aim's session of
    # 2026-03-18T01-18, tests/data/gemini-cli). Its times are epoch floats; a replay of several paths
    # counts them from the first request (rounded to the ms), and start + (response - start) then lands
    # 5e-8 s past the response: the same session read 3,729 alone and 0 (`not_yet_available`) beside
    # another. Availability is decided to the microsecond, so both read.
    start, response = _epoch("2026-03-18T01:18:31.592Z"), _epoch("2026-03-18T01:18:34.361Z")
    t0 = _epoch("2026-03-18T01:18:22.049Z")
    blocks = (Block(Layer.SYSTEM, b"system", path="system", tokens=5000),
              Block(Layer.MESSAGES, b"turn", path="contents[0]", tokens=1000))
    first = Request("gemini-2.5-flash", blocks)
    second = Request("gemini-2.5-flash", (*blocks, Block(Layer.MESSAGES, b"more", path="contents[1]", tokens=900)))
    for shift in (0.0, t0):
        sim = Simulator("gemini", tokenizer="approx")
        sim.step(Call(t=round(start - shift, 3), request=first, stream="main", ttft=response - start))
        out = sim.step(Call(t=round(response - shift, 3), request=second, stream="main"))
        assert not out.cause.kind and out.usage.cache_read == 6000, (shift, out.cause)
