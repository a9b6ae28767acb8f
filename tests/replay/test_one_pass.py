"""`prefixsim replay` prints its money from three replays of the traffic: as recorded, a what-if, and
the oracle that measures what was lost. A serial replay steps all three in one pass over the traffic
(advise/one_pass.py), so a transcript is read and calibrated once: the results must be those
of the three separate replays, and an error the one they raise first."""
import pytest
from conftest import data_file
from walk_counting import Counting, count_command_walks

from prefixsim.advise.attribution import losses
from prefixsim.commands.common import read_traffic
from prefixsim.errors import UserError
from prefixsim.replay import WhatIf, replay
from prefixsim.advise.one_pass import replay_with_losses
from prefixsim.replay.paired import replay_traffic

CLAUDE = str(data_file("claude-code", "spotter", "short.jsonl").parent.parent)   # every Claude Code folder
SOURCES = [CLAUDE, str(data_file("anthropic-api", "test_anthropic_cache_real_api.yaml")),
           str(data_file("openai-api", "test_openai_chat_prompt_cache_e2e.yaml")),
           str(data_file("gemini-api", "test_google_model_cached_content.yaml")),
           str(data_file("litellm", "standard_logging_payload.json")),
           str(data_file("router-api", "test_openrouter_cache_messages_anthropic_real_api.yaml"))]


def _traffic(path):
    return read_traffic([path], None, False, partial=True)[0]


@pytest.mark.slow
@pytest.mark.parametrize("path", SOURCES)
@pytest.mark.parametrize("variant", [None, WhatIf(ttl="1h"), WhatIf(provider="openai")])
def test_one_pass_gives_the_separate_replays(path, variant):
    traffic = _traffic(path)
    base, what_if = replay_traffic(traffic, variant)
    lost = losses(traffic, base)
    b, w, x = replay_with_losses(traffic, variant)
    assert b == base
    assert w == what_if
    assert x == lost
    assert sum(x) > 0 or path != CLAUDE   # the Claude Code folders lose money somewhere: the oracle ran


def test_the_traffic_is_walked_once(monkeypatch):
    traffic = _traffic(CLAUDE)
    counted = Counting(traffic.parts)
    Counting.walks = 0
    replay_with_losses(counted, WhatIf(ttl="1h"))
    assert Counting.walks == 1


def test_the_command_walks_a_serial_replay_once(monkeypatch, capsys):
    """`prefixsim replay` (money shown, a what-if asked) reads and calibrates the traffic once: it
    walked it three times before without a what-if (recorded, oracle, the attribution beside them), four with one."""
    from prefixsim.cli import cli

    count_command_walks(monkeypatch)
    with pytest.raises(SystemExit) as e:
        cli.main(["replay", CLAUDE, "--ttl", "1h", "--width", "100"], standalone_mode=True)
    assert e.value.code == 0
    assert "lost to the cache" in capsys.readouterr().out
    assert Counting.walks == 1


def _broken(model):
    """A what-if whose model no table lists fails at the first request it steps."""
    return WhatIf(model=model)


def test_an_error_is_the_one_the_separate_replays_raise_first():
    traffic = _traffic(CLAUDE)
    with pytest.raises(UserError) as separate:
        replay(traffic, _broken("claude-nonexistent-9"))
    with pytest.raises(UserError) as together:
        replay_with_losses(traffic, _broken("claude-nonexistent-9"))
    assert (together.value.message, together.value.path, together.value.line) == \
        (separate.value.message, separate.value.path, separate.value.line)


def test_a_walk_that_keeps_no_rows_gives_each_and_holds_none():
    """The oracle's rows are read once, by the attribution: its walk holds none (a third of the rows a
    1 GB folder's replay held)."""
    from prefixsim.replay.run import Walk

    traffic = _traffic(CLAUDE)
    kept, dropped = Walk(traffic), Walk(traffic, keep=False)
    for i, rec in enumerate(traffic):
        assert dropped.step(i, rec) == kept.step(i, rec)
    assert dropped.rows == [] and len(kept.rows) == len(traffic)
    with pytest.raises(ValueError):
        dropped.result()
