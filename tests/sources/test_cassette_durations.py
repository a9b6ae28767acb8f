"""Recordings without timestamps (issue 30, item 6): go-vcr keeps a `duration` per call and no
time. Those calls are placed back to back by their durations (said in a note), not 10 s apart."""
import json

import pytest

from prefixsim.sources import load
from prefixsim.sources.cassette import back_to_back, duration_seconds
from prefixsim.sources.problems import collecting

SYSTEM = [{"type": "text", "text": "You are terse. " * 400, "cache_control": {"type": "ephemeral"}}]


def _anthropic(k: int) -> tuple[dict, dict]:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 50, "system": SYSTEM,
            "messages": [{"role": "user", "content": f"question {k}"}]}
    usage = {"input_tokens": 8, "cache_creation_input_tokens": 0 if k else 1600,
             "cache_read_input_tokens": 1600 if k else 0, "output_tokens": 5}
    return body, {"id": f"msg_{k}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                  "content": [{"type": "text", "text": "ok"}], "usage": usage}


def _openai(k: int) -> tuple[dict, dict]:
    body = {"model": "gpt-4o-2024-08-06", "messages": [{"role": "system", "content": "Be terse. " * 600},
                                                       {"role": "user", "content": f"question {k}"}]}
    return body, {"id": f"c{k}", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                  "usage": {"prompt_tokens": 1215, "completion_tokens": 2,
                            "prompt_tokens_details": {"cached_tokens": 1152 if k else 0}}}


def _go_vcr(tmp_path, make, url, durations):
    """A go-vcr v2 cassette (our own): `url`, bodies as JSON strings, `duration` under the response."""
    lines = ["---", "version: 2", "interactions:"]
    for k, d in enumerate(durations):
        body, resp = make(k)
        lines += [f"- id: {k}", "  request:", f"    body: {json.dumps(json.dumps(body))}", f"    url: {url}",
                  "    method: POST", "  response:", f"    body: {json.dumps(json.dumps(resp))}",
                  "    code: 200", f"    duration: {d}"]
    p = tmp_path / "calls.yaml"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("make,url", [(_anthropic, "https://api.anthropic.com/v1/messages"),
                                      (_openai, "https://api.openai.com/v1/chat/completions")])
def test_calls_without_times_are_placed_back_to_back_by_their_durations(tmp_path, make, url):
    p = _go_vcr(tmp_path, make, url, ["2.5s", "3.2s", "850ms"])
    with collecting() as seen:
        records = load(p)
    assert [r.call.t for r in records] == pytest.approx([0.0, 2.5, 5.7])
    assert any("back to back by their recorded durations" in str(x) for x in seen.notes)


def test_a_cassette_without_durations_keeps_the_default_spacing(tmp_path):
    p = _go_vcr(tmp_path, _anthropic, "https://api.anthropic.com/v1/messages", ["2.5s", "3.2s"])
    p.write_text(p.read_text().replace("    duration: 3.2s\n", ""))
    assert [r.call.t for r in load(p)] == [0.0, 10.0]


@pytest.mark.parametrize("text,seconds", [("2.5s", 2.5), ("325.616084ms", 0.325616084), ("1m2.5s", 62.5),
                                          ("850µs", 0.00085), ("1h", 3600.0), (3, 3.0), ("12ns", 1.2e-08)])
def test_go_durations_read_as_seconds(text, seconds):
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "2.5", "s", "-1s", "1.5 s", "2x", None, True, -2, "1s2"])
def test_what_is_no_duration_is_none(bad):
    assert duration_seconds(bad) is None


def test_recorded_times_win_over_durations():
    inters = [{"recorded_at": "Tue, 01 Dec 2026 10:00:00 GMT", "response": {"duration": "1s"}}]
    assert back_to_back(inters) is None
    assert back_to_back([]) is None
    assert back_to_back([{"response": {"duration": "1s"}}, {"duration": 2}]) == [0.0, 1.0]


def test_a_response_time_wins_over_the_durations_and_no_note_says_otherwise(tmp_path):
    """OpenAI's responses carry `created`: those calls keep their own times, and the replay does not
    claim it placed them back to back."""
    def timed(k):
        body, resp = _openai(k)
        return body, {**resp, "created": 1733050000 + 30 * k}
    p = _go_vcr(tmp_path, timed, "https://api.openai.com/v1/chat/completions", ["2.5s", "3.2s", "850ms"])
    with collecting() as seen:
        records = load(p)
    assert [r.call.t for r in records] == [1733050000.0, 1733050030.0, 1733050060.0]
    assert not any("back to back" in str(x) for x in seen.notes)
