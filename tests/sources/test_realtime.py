"""OpenAI Realtime API sessions recorded over WebSocket (pydantic-ai's realtime cassettes): each
`response.done` with usage is an audited row (docs/rules.md#openai-realtime-api). The real recording is
Azure voice-live's (tests/data/openai-api); the others are built from it, event by event."""
import json

import genai_prices
import pytest
from conftest import DATA, cli_run

from prefixsim.core.pricing import PriceBook
from prefixsim.model import Usage
from prefixsim.replay import replay
from prefixsim.replay.output import to_json
from prefixsim.report.replay import table_text
from prefixsim.sources import bedrock_log, detect, gemini_log, load, openai_cassette
from prefixsim.sources.cassette import interactions, load_document
from prefixsim.sources.problems import collecting

VOICE_LIVE = DATA / "openai-api/test_azure_voice_live_ws_message_history_seeding.yaml"
SESSION = "sess_E4BAwpeEqR1fZDn5U9AxF"


def _usage(text_in, cached, text_out, audio_in=0, audio_out=0, image_in=0):
    return {"total_tokens": text_in + audio_in + image_in + text_out + audio_out,
            "input_tokens": text_in + audio_in + image_in, "output_tokens": text_out + audio_out,
            "input_token_details": {"text_tokens": text_in, "audio_tokens": audio_in, "image_tokens": image_in,
                                    "cached_tokens": cached,
                                    "cached_tokens_details": {"text_tokens": cached, "audio_tokens": 0,
                                                              "image_tokens": 0}},
            "output_token_details": {"text_tokens": text_out, "audio_tokens": audio_out}}


def _cassette(tmp_path, *usages, model="gpt-realtime", name="session.yaml"):
    """A session as the recorder writes it: session.created, then per usage a response.create sent and
    its response.done received (JSON is YAML: the cassette reader reads it as the recorder's YAML)."""
    msgs = [{"kind": "message", "direction": "received",
             "data": {"type": "session.created", "session": {"id": "sess_1", "model": model}}}]
    for i, u in enumerate(usages):
        msgs += [{"kind": "message", "direction": "sent", "data": {"type": "response.create"}},
                 {"kind": "message", "direction": "received",
                  "data": {"type": "response.done", "response": {"id": f"resp_{i}", "status": "completed",
                                                                 "conversation_id": "conv_1", "usage": u}}}]
    p = tmp_path / name
    p.write_text(json.dumps({"version": 1, "interactions": msgs}, indent=1))
    return p


def test_a_recorded_session_is_one_audited_row_per_response_with_its_usage():
    with collecting() as probs:
        (rec,) = load(VOICE_LIVE)
    # usage: input_tokens 149 (the cached 128 inside, as OpenAI counts), output 27, all text
    assert rec.audit and rec.provider == "openai" and rec.unpriced == ""
    assert rec.observed == Usage(input_tokens=21, cache_read=128, output_tokens=27)
    assert (rec.request_id, rec.call.stream) == ("resp_E4BAw18ZvlnLr5fYfudww", SESSION)
    assert rec.call.request.model == "gpt-realtime-global-standard"   # session.created's model, as Azure names it
    assert [b.tokens for b in rec.call.request.blocks] == [149]        # one block the size of the prompt
    assert rec.timestamp == "+0s"
    assert [n.message for n in probs.notes] == ["no times recorded: responses placed in recorded order, 1 s apart"]
    assert probs.skipped == []
    res = replay([rec])
    row = res.rows[0]
    assert row.audit and row.observed == rec.observed and res.summary.read_share_observed == 128 / 149
    # an Azure deployment name genai-prices does not list: replayed, its cost missing and named
    assert not row.priced and row.cost_observed is None
    assert [(m, n) for m, _, n, _ in res.summary.unpriced] == [("gpt-realtime-global-standard", 1)]


def test_responses_are_placed_in_order_one_second_apart_on_their_session(tmp_path):
    p = _cassette(tmp_path, _usage(63, 0, 22), _usage(103, 64, 13))
    recs = load(p)
    assert [(r.request_id, r.call.t, r.timestamp, r.call.stream) for r in recs] == [
        ("resp_0", 0.0, "+0s", "sess_1"), ("resp_1", 1.0, "+1s", "sess_1")]


def test_a_realtime_cassette_is_detected_as_realtime_and_never_as_another_format(capsys):
    # was: "cannot tell the format: no call of a known format"
    assert detect(VOICE_LIVE) == "realtime"
    assert not gemini_log.sniff_cassette(VOICE_LIVE) and not bedrock_log.sniff_cassette(VOICE_LIVE)
    assert openai_cassette.sniff_cassette(VOICE_LIVE) is None
    code, _, err = cli_run(["replay", "--source", "openai", str(VOICE_LIVE)], capsys)
    assert code == 2 and "--source openai, but the file looks like realtime" in err
    code, _, err = cli_run(["replay", "--source", "realtime", str(DATA / "openai-api/test_openai_chat_prompt_cache_e2e.yaml")],
                        capsys)
    assert code == 2 and "--source realtime, but the file looks like openai" in err
    code, out, _ = cli_run(["replay", "--source", "realtime", str(VOICE_LIVE), "--requests"], capsys)
    assert code == 0 and "audit: no prompt" in " ".join(out.split())


def test_a_cassette_of_http_calls_and_a_realtime_session_is_read_by_both_readers(tmp_path):
    doc = load_document(DATA / "openai-api/test_openai_chat_prompt_cache_e2e.yaml")
    doc["interactions"] = [*interactions(doc, VOICE_LIVE), *interactions(load_document(VOICE_LIVE), VOICE_LIVE)]
    p = tmp_path / "both.yaml"
    p.write_text(json.dumps(doc, default=str))
    assert detect(p) == "openai"
    recs = load(p)
    assert [(r.provider, r.audit) for r in recs] == [("openai", False), ("openai", False), ("openai", True)]


@pytest.mark.parametrize("field, value, why", [
    ("input_tokens", -5, "usage field input_tokens is negative"),
    ("output_tokens", 12.5, "usage field output_tokens is not a whole number of tokens: 12.5"),
    ("input_tokens", "149", "usage field input_tokens is not a whole number of tokens"),
])
def test_a_response_with_a_bad_token_count_is_skipped_and_named_and_the_others_replay(tmp_path, capsys, field,
                                                                                      value, why):
    bad = {**_usage(63, 0, 22), field: value}
    p = _cassette(tmp_path, _usage(63, 0, 22), bad, _usage(103, 64, 13))
    with collecting() as probs:
        recs = load(p)
    assert [r.request_id for r in recs] == ["resp_0", "resp_2"]
    (skipped,) = probs.skipped
    assert str(skipped).startswith(f"{p}: skipped: interaction 4: {why}")
    code, out, err = cli_run(["replay", str(p), "--format", "json"], capsys)
    assert code == 0 and f"interaction 4: {why}" in err
    assert [r["request_id"] for r in json.loads(out)["requests"]] == ["resp_0", "resp_2"]
    code, _, err = cli_run(["replay", str(p), "--strict"], capsys)
    assert code == 2 and f"interaction 4: {why}" in err.splitlines()[-1]


def test_cached_tokens_above_the_input_are_skipped_and_named(tmp_path):
    p = _cassette(tmp_path, _usage(10, 64, 3))
    with collecting() as probs:
        assert load(p) == []
    assert "cached_tokens 64 exceed input_tokens 10" in str(probs.skipped[0])


def test_a_text_response_is_priced_and_one_with_audio_or_image_tokens_gets_no_made_up_cost(tmp_path):
    p = _cassette(tmp_path, _usage(63, 0, 22), _usage(14, 0, 27, audio_in=30, audio_out=72), _usage(20, 0, 5, image_in=85))
    recs = load(p)
    assert [r.unpriced for r in recs] == ["", "audio tokens", "image tokens"]
    res = replay(recs)
    rates = PriceBook().rates("gpt-realtime", "openai")   # the replay's clock: no times recorded
    text, audio, image = res.rows
    assert text.priced and text.cost_observed == rates.cost(text.observed)
    # genai-prices prices the audio apart from the text (gpt-realtime: audio input 8x, output 4x): the
    # text rates would make up a cost three times too low, so none is given
    paid = genai_prices.calc_price(genai_prices.Usage(input_tokens=44, input_audio_tokens=30, output_tokens=99,
                                                      output_audio_tokens=72), model_ref="gpt-realtime",
                                   provider_id="openai").total_price
    assert rates.cost(audio.observed) < paid / 2
    assert not audio.priced and audio.cost_observed is None and not image.priced and image.cost_observed is None
    assert res.summary.cost_observed_usd == text.cost_observed
    assert [(m, n, why.rsplit(": ", 1)[-1]) for m, _, n, why in res.summary.unpriced] == [
        ("gpt-realtime", 1, "audio tokens"), ("gpt-realtime", 1, "image tokens")]
    doc = to_json(res)
    assert [r["cost_observed_usd"] for r in doc["requests"]][1:] == [None, None]
    text_out = " ".join(table_text(res, requests=True).split())
    assert "gpt-realtime (openai): 1 request count audio tokens, which genai-prices prices apart from text" in text_out
    assert "+ 2 unpriced" in text_out
    # the money leaves the two out and says so, never as $0
    assert "2 requests of unpriced models left out" in " ".join(table_text(res).split())


def test_usage_that_does_not_show_its_tokens_are_text_is_not_priced(tmp_path):
    bare = {"input_tokens": 40, "output_tokens": 5}   # no details: text or audio, it does not say
    odd = _usage(30, 0, 5)
    odd["input_token_details"]["text_tokens"] = 20     # 10 input tokens of no modality
    recs = load(_cassette(tmp_path, bare, odd, _usage(30, 0, 5)))
    assert [r.unpriced for r in recs] == ["tokens not shown to be text"] * 2 + [""]
    rows = replay(recs).rows
    assert [r.priced for r in rows] == [False, False, True]


def test_the_model_is_the_latest_session_events_and_a_response_without_usage_is_noted(tmp_path):
    p = _cassette(tmp_path, _usage(63, 0, 22), _usage(103, 64, 13))
    doc = load_document(p)
    msgs = doc["interactions"]
    msgs.insert(3, {"kind": "message", "direction": "received",
                    "data": {"type": "session.updated", "session": {"id": "sess_1", "model": "gpt-realtime-2.1"}}})
    msgs.append({"kind": "message", "direction": "received",
                 "data": {"type": "response.done", "response": {"id": "resp_x", "status": "failed", "usage": None}}})
    p.write_text(json.dumps(doc))
    with collecting() as probs:
        recs = load(p)
    assert [r.call.request.model for r in recs] == ["gpt-realtime", "gpt-realtime-2.1"]
    assert "1 response.done event without usage (nothing to audit)" in [n.message for n in probs.notes]
    # before any session event nothing names the model: that response is skipped and named
    p.write_text(json.dumps({"interactions": msgs[1:3]}))
    with collecting() as probs:
        assert load(p, "realtime") == []
    assert "no session.created or session.updated before it names the model" in str(probs.skipped[0])
