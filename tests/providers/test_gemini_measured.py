"""Gemini's implicit cache as public traffic shows it (docs/rules.md#google-gemini): best effort, so a
range from nothing read to every prefix kept 24 h, printed as the traffic behaves: a prefix read for
10 minutes idle, the reply not read back, and on Gemini 3 whole 4,096-token units from one unit up.
The old printed figure was the range's pessimistic end, nothing read, on every request: these tests
fail on it. One rule, every path: a scenario's blocks, an API log, a Gemini CLI session and a what-if
read the same."""
import json

import pytest

from prefixsim.api import run_scenario
from prefixsim.core.simulator import Simulator
from prefixsim.model import Block, Call, CauseKind, Layer, Request
from prefixsim.providers.registry import get_policy
from prefixsim.replay import replay
from prefixsim.replay.output import summary_json
from prefixsim.replay.whatif import WhatIf
from prefixsim.report.replay import table_text
from prefixsim.sources import load

FLASH = "gemini-3-flash-preview"
#: Two requests of one conversation: a 9,000-token prompt, its 200-token reply and 500 tokens more.
FIRST, REPLY, MORE = 9000, 200, 500
UNIT_READ = FIRST // 4096 * 4096   # 8,192: the kept prefix in whole 4,096-token units


def _cli_session(tmp_path, gap: float, model: str = FLASH):
    """A user turn, a 9,000-token request whose tool call ends `gap` s later, and the next request."""
    def at(t):
        return f"2026-03-01T10:{int(t) // 60:02d}:{int(t) % 60:02d}.000Z"
    msgs = [{"id": "u0", "timestamp": at(0), "type": "user", "content": [{"text": "fix the bug"}]},
            {"id": "g1", "timestamp": at(3), "type": "gemini", "content": "ok", "model": model,
             "tokens": {"input": FIRST, "output": REPLY, "cached": 0, "thoughts": 50, "tool": 0, "total": 0},
             "toolCalls": [{"id": "c1", "name": "read_file", "args": {}, "status": "success", "timestamp": at(3 + gap)}]},
            {"id": "g2", "timestamp": at(4 + gap), "type": "gemini", "content": "ok", "model": model,
             "tokens": {"input": FIRST + REPLY + MORE, "output": 30, "cached": 8000, "thoughts": 0, "tool": 0,
                        "total": 0}}]
    p = tmp_path / "session-2026-03-01T10-00-abc.json"
    p.write_text(json.dumps({"sessionId": "abc", "projectHash": "p", "startTime": at(0), "messages": msgs}))
    return p


def test_a_gemini_cli_follow_up_within_a_minute_reads_its_prefix(tmp_path):
    rows = replay(load(_cli_session(tmp_path, gap=2))).rows
    # printed: what traffic shows (the old code printed 0: "best effort, no hit assumed")
    assert [r.predicted.cache_read for r in rows] == [0, UNIT_READ]
    # the range's optimistic end: every prefix kept, the reply with it, at block boundaries
    assert rows[1].predicted_optimistic.cache_read == FIRST + REPLY
    text = " ".join(table_text(replay(load(_cli_session(tmp_path, gap=2)))).split())
    assert "from nothing read (cost $" in text and "neither end but what public traffic shows" in text
    assert "minimum documented 1,024, seen 4,096" in text and "4,096-token units" in text
    summary = summary_json(replay(load(_cli_session(tmp_path, gap=2))))["summary"]
    assert summary["retention_bound"] == "measured"
    assert summary["cost_predicted_pessimistic_usd"] > summary["cost_predicted_usd"] > summary["cost_predicted_optimistic_usd"]


def test_after_ten_minutes_idle_the_printed_figure_reads_nothing_and_says_why(tmp_path):
    late = replay(load(_cli_session(tmp_path, gap=660))).rows[1]
    assert late.predicted.cache_read == 0 and late.cause.kind == CauseKind.TTL_EXPIRED
    assert "retention as public traffic shows, 600 s idle; documented: best effort" in late.cause.detail
    assert late.predicted_optimistic.cache_read == FIRST + REPLY   # up to 24 h at the optimistic end


def test_gemini_3_flash_keeps_nothing_below_one_unit_though_1024_is_documented():
    sim = Simulator("gemini", tokenizer="approx")
    opt = Simulator("gemini", tokenizer="approx", policy=get_policy("gemini", "optimistic"))
    req = Request(FLASH, (Block(Layer.SYSTEM, b"s", "system", tokens=3000), Block(Layer.MESSAGES, b"m", "contents[0]", tokens=500)))
    for s in (sim, opt):
        s.step(Call(0.0, req))
    again = sim.step(Call(5.0, req))
    assert again.usage.cache_read == 0 and again.cause.kind == CauseKind.BELOW_MINIMUM
    assert opt.step(Call(5.0, req)).usage.cache_read == 3500


def _api_log(tmp_path, model: str):
    system = " ".join(f"Rule {i}: answer about section {i} of the catalogue and cite it." for i in range(500))
    ask = {"role": "user", "parts": [{"text": "What does section 12 say?"}]}
    said = {"role": "model", "parts": [{"text": "Section 12: returns within 30 days."}]}
    more = {"role": "user", "parts": [{"text": "And section 40?"}]}
    def line(i, t, contents, prompt, cached):
        return {"id": f"r{i}", "timestamp": t, "request": {"model": f"models/{model}", "systemInstruction": {
            "parts": [{"text": system}]}, "contents": contents}, "response": {
            "candidates": [{"content": said, "finishReason": "STOP"}], "usageMetadata": {
                "promptTokenCount": prompt, "cachedContentTokenCount": cached, "candidatesTokenCount": REPLY,
                "totalTokenCount": prompt + REPLY}}}
    p = tmp_path / "gemini.jsonl"
    p.write_text(json.dumps(line(1, "2026-11-30T10:00:00Z", [ask], FIRST, 0)) + "\n"
                 + json.dumps(line(2, "2026-11-30T10:00:05Z", [ask, said, more], FIRST + REPLY + MORE, 8000)) + "\n")
    return p


def _scenario(tmp_path):
    p = tmp_path / "gemini.yaml"
    p.write_text(f"name: g\nmodel: {FLASH}\nprovider: gemini\ntokenizer: cl100k_base\npace: 5s\n"
                 "base:\n  system: 9000\n  history: {turns: 0}\ntimeline:\n  - request: 2\n")
    return p


@pytest.mark.parametrize("path", ["scenario", "log", "cli", "what-if"])
def test_one_gemini_rule_on_every_path(tmp_path, path):
    if path == "scenario":
        v = run_scenario(str(_scenario(tmp_path))).variants[0]
        first, second = v.outcomes[0].usage, v.outcomes[1].usage
        prompt, read = first.prompt_tokens, second.cache_read
    else:
        source = {"log": lambda: _api_log(tmp_path, FLASH), "cli": lambda: _cli_session(tmp_path, gap=2),
                  "what-if": lambda: _api_log(tmp_path, "gemini-2.5-flash")}[path]()
        rows = replay(load(source), WhatIf(model=FLASH) if path == "what-if" else WhatIf()).rows
        prompt, read = rows[0].predicted.prompt_tokens, rows[1].predicted.cache_read
    # the second request reads the first one's prompt (not its reply) in whole 4,096-token units
    assert read == prompt // 4096 * 4096 > 0
