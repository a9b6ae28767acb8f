"""`replay --latency` on real traffic: the fit per model id, the held-back check against a constant,
the wall time caching saved, the fitted file a scenario reads, and what untimed traffic says."""
import datetime as dt
import json

import pytest

from conftest import cli_exit, cli_run, data_file
from prefixsim.api import run_scenario
from prefixsim.commands.common import read_traffic

SESSION = data_file("claude-code", "spotter", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
CASSETTE = data_file("anthropic-api", "test_anthropic_cache_real_api.yaml")


def _section(out: str) -> str:
    return out[out.index("time to first token (overhead"):]


def test_a_claude_code_session_is_fitted_and_checked_against_a_constant(capsys, tmp_path):
    out_file = tmp_path / "fitted.json"
    code, out, err = cli_run(["replay", str(SESSION), str(SESSION.with_suffix("")), "--latency",
                              "--latency-out", str(out_file)], capsys)
    assert code == 0, err
    text = _section(out)
    assert "claude-opus-4-6: 140 requests" in text and "claude-sonnet-4-5: 12 requests" in text
    # each of the 140 held back once, predicted by the fit on the other 112: it beats their median's error
    assert "held back  each request once (140, 5 folds by position), predicted by the fit\n             on the " \
           "others: median absolute error 0.468 s; a constant (the\n             others' median, about 3.56 s) " \
           "0.814 s: beats it" in text
    # the first line's block is generated at 189 characters a second, not part of the time to first token
    assert "generated  the first line's block at 189 characters/s (about 47 tokens/s at 4" in text
    # the sub-agent's 12 requests: the fit beats the constant too
    assert "0.267 s; a constant (the\n             others' median, about 2.77 s) 0.306 s: beats it" in text
    assert "caching saved 128 s (24.5%)" in text
    doc = json.loads(out_file.read_text())
    opus = doc["models"]["claude-opus-4-6"]
    assert doc["format"] == "prefixsim-latency" and opus["requests"] == 140 and opus["held_back"] == 140
    assert (opus["mae_held_s"], opus["mae_constant_s"], opus["beats_constant"]) == (0.4682, 0.814, True)
    assert opus["generation_s_per_1k_chars"] == pytest.approx(5.3019, abs=1e-4)
    assert opus["left_out_generation_unknown"] == 0
    assert "wrote the fitted latency model of 2 model id(s)" in err
    # the file is what a scenario's `latency: {from: ...}` reads, for the same model id
    (tmp_path / "s.yaml").write_text("name: fitted\nmodel: claude-opus-4-6\nlatency: {from: fitted.json}\n"
                                     "base: {system: 2000}\ntimeline: [request: 1]\n")
    v = run_scenario(str(tmp_path / "s.yaml"), dt.date(2026, 11, 30)).variants[0]
    row = v.rows()[0]
    uncached = row["input_tokens"] + row["cache_creation_input_tokens"]
    assert row["ttft_s"] == pytest.approx(opus["overhead_s"] + opus["uncached_s_per_1k"] * uncached / 1000, abs=1e-3)


def test_traffic_whose_source_logs_no_response_time_is_not_fitted(capsys, tmp_path):
    code, out, _ = cli_run(["replay", str(CASSETTE), "--latency"], capsys)
    assert code == 0
    assert "2 requests not fitted: their source logs no response time" in out and "nothing to fit" in out
    code, _, err = cli_exit(["replay", str(CASSETTE), "--latency-out", str(tmp_path / "f.json")], capsys)
    assert code == 2 and "no model id could be fitted, nothing written" in err and not (tmp_path / "f.json").exists()


def test_latency_with_json_is_refused_in_one_line(capsys):
    code, _, err = cli_exit(["replay", str(CASSETTE), "--latency", "--format", "json"], capsys)
    assert code == 2 and err.strip().count("\n") == 0 and "--latency-out FILE writes the fit as JSON" in err


def test_only_sources_that_time_a_request_say_so():
    cc, _ = read_traffic([str(SESSION)], None, False, partial=True)
    codex, _ = read_traffic([str(data_file("codex"))], None, False, partial=True)
    log, _ = read_traffic([str(CASSETTE)], None, False, partial=True)
    assert all(r.timed for r in cc) and all(r.timed for r in codex) and not any(r.timed for r in log)


@pytest.mark.slow
def test_held_back_error_against_a_constant_on_every_claude_code_session_of_tests_data(capsys):
    """The figures docs/rules.md#latency reports: with the first line's block's generation fitted beside
    the time to first token, the fit beats a constant on every model id (on 2 of 6 without it)."""
    code, out, _ = cli_run(["replay", str(data_file("claude-code")), "--latency"], capsys)
    assert code == 0
    text = _section(out).replace("\n             ", " ")
    got = {}
    for block in text.split("\n\n")[1:]:
        model = block.split(":")[0]
        held = block.split("median absolute error ")[1]
        got[model] = (float(held.split(" s;")[0]), float(held.split(") ")[1].split(" s:")[0]), "beats it" in held)
    assert got == {"claude-sonnet-4": (0.287, 0.485, True), "claude-opus-4-6": (0.446, 0.788, True),
                   "claude-opus-4-5": (0.305, 0.522, True), "claude-sonnet-4-5": (0.553, 1.353, True),
                   "claude-haiku-4-5": (0.249, 0.709, True), "claude-opus-4": (0.424, 0.575, True)}


def test_a_fit_that_does_not_beat_the_constant_says_so():
    from prefixsim.latency.fit import Fit
    from prefixsim.latency.model import LatencyModel
    from prefixsim.replay.latency import LatencyFits
    from prefixsim.report.replay_latency import latency_text
    fit = Fit("m", 12, latency=LatencyModel(1.0, 0.1, 0.01), residuals={"p5": -0.1, "p50": 0.0, "p95": 0.2}, held=12,
              mae_held=0.376, mae_constant=0.306, constant=2.77)
    text = " ".join(latency_text(LatencyFits(fits=[fit], saved={"m": (10.0, 12.0)}), 100).split())
    assert "median absolute error 0.376 s; a constant (the others' median, about 2.77 s) 0.306 s: does not beat it: " \
           "these times carry too little of the prompt's size to fit" in text
