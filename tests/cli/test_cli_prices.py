"""`prefixsim prices MODEL [--provider P] [--endpoint E] [--date D]`: every rate with its source
(prefixsim/commands/prices.py, prefixsim/core/price_report.py, api.model_prices)."""
import json

import pytest
from click.testing import CliRunner

from conftest import unversioned

from prefixsim.cli import cli


def _run(*args):
    r = CliRunner().invoke(cli, ["prices", *args])
    return r.exit_code, r.output


def test_every_rate_names_its_source():
    rc, out = _run("claude-opus-4-1", "--provider", "vertex", "--date", "2026-11-30")
    assert rc == 0, out
    lines = out.splitlines()
    assert lines[0] == "claude-opus-4-1 on vertex, global endpoint, 2026-11-30 07:00 UTC (USD per MTok)"
    assert lines[1].split()[:2] == ["input", "15"] and "genai-prices <release> bundled data: google/" in unversioned(lines[1])
    assert lines[5].startswith("1h write       30  A-PR (2026-08-21) documented multiplier: 1h write = 2 x base input")


def test_an_overlay_row_and_a_lifecycle_step_are_named():
    rc, out = _run("deepseek-chat", "--date", "2026-06-10", "--format", "json")
    assert rc == 0, out
    d = json.loads(out)
    assert d["provider"] == "deepseek" and d["at"] == "2026-06-10T07:00:00Z"
    rates = {r["class"]: r for r in d["rates"]}
    assert rates["input"]["usd_per_mtok"] == "0.14"
    assert rates["input"]["source"].startswith("prefixsim overlay 2026-12-01: deepseek-v4-flash launch price")
    assert "deepseek-chat → deepseek-v4-flash from 2026-04-24" in d["source"]
    assert d["time_of_day"] is None            # peak hours began on 2026-08-16


def test_the_endpoint_premium_is_shown():
    rc, out = _run("claude-sonnet-4-5", "--provider", "vertex", "--endpoint", "regional", "--date", "2026-11-30",
                   "--format", "json")
    d = json.loads(out)
    assert d["endpoint"] == "regional" and d["rates"][0]["usd_per_mtok"].startswith("3.3;")
    assert "x 1.1" in d["rates"][0]["source"]


@pytest.mark.parametrize("args,message", [
    (["gpt-5", "--provider", "nope"], "unknown provider 'nope'"),
    (["claude-sonnet-4-5", "--provider", "vertex", "--endpoint", "moon"], "unknown endpoint 'moon'"),
    (["claude-sonnet-4-5", "--endpoint", "regional"], "--endpoint applies to provider vertex or bedrock"),
    (["claude-sonnet-4-5", "--date", "2026-13-01"], "--date '2026-13-01' is not YYYY-MM-DD"),
    (["deepseek-chat", "--date", "2026-11-30"], "deepseek-chat was retired on 2026-07-24 15:59 UTC"),
    (["mystery-model"], "no provider known for model 'mystery-model'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    from prefixsim.cli import main

    with pytest.raises(SystemExit) as e:
        main(["prices", *args])
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
