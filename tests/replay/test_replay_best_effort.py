"""A best-effort cache's printed figure says its own uncertainty (issue 30, gemini-cli): Gemini's
implicit cache read nothing in 116 of 2,700 public follow-ups within the 10 minutes it otherwise
keeps a prefix, and nothing a session records tells those apart; a replay says so, and how many of
its own requests read nothing where it predicts a read, instead of presenting the read as certain."""
import json

from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.providers.gemini_tables import MEASURED_UNREAD, gemini_rule
from prefixsim.replay.ranges import unread


def _gemini(i, t, prompt, cached):
    return {"id": f"g{i}", "timestamp": f"2026-03-26T09:38:{t:02d}.000Z", "type": "gemini", "content": "ok",
            "model": "gemini-3.1-pro-preview",
            "tokens": {"input": prompt, "output": 60, "cached": cached, "thoughts": 100, "tool": 0,
                       "total": prompt + 160}}


def _session(tmp_path, second_read):
    # BrianV1981/aim's control_pro_run4 (tests/data/gemini-cli) in small: a 9,000-token prompt, then,
    # 15 s later, a follow-up that read nothing of it, then one that read again
    msgs = [{"id": "u0", "timestamp": "2026-03-26T09:38:00.000Z", "type": "user", "content": [{"text": "hello"}]},
            _gemini(1, 5, 9000, 0),
            {"id": "u1", "timestamp": "2026-03-26T09:38:20.000Z", "type": "user", "content": [{"text": "read it"}]},
            _gemini(2, 24, 9076, second_read), _gemini(3, 30, 9370, 8828)]
    p = tmp_path / "session-2026-03-26T09-38-abc.json"
    p.write_text(json.dumps({"sessionId": "abc", "projectHash": "p", "startTime": "2026-03-26T09:38:00.000Z",
                             "lastUpdated": "2026-03-26T09:39:00.000Z", "messages": msgs}))
    return p


def _text(path):
    out = CliRunner().invoke(cli, ["replay", str(path), "--width", "400"])
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())   # the note is wrapped; its words are what counts


def test_the_measured_miss_rate_belongs_to_the_measured_rule():
    assert gemini_rule("gemini-3.1-pro-preview").measured.unread == MEASURED_UNREAD == (116, 2700)
    assert unread("gemini", "gemini-3.1-pro-preview") == (116, 2700)
    assert unread("anthropic", "claude-sonnet-4-5") is None     # a documented cache: no such figure


def test_a_best_effort_read_predicted_is_said_to_be_uncertain_and_the_misses_here_counted(tmp_path):
    missed = _text(_session(tmp_path, 0))
    assert ("A read it predicts is not certain: in that traffic 116 of 2,700 follow-ups within the retention "
            "it shows read nothing, and nothing recorded tells which; here 1 request read nothing where a read "
            "is predicted.") in missed
    (tmp_path / "session-2026-03-26T09-38-abc.json").unlink()
    read = _text(_session(tmp_path, 8192))
    assert "116 of 2,700 follow-ups" in read and "read nothing where a read is predicted" not in read
