"""Prices that depend on the hour (genai-prices' TimeOfDateConstraint): DeepSeek's off-peak window.

genai-prices 0.2.3 data, deepseek-chat (before it became an alias of deepseek-v4-flash on 2026-04-24,
prefixsim/core/lifecycle.py, so these tests price March 2026): peak UTC 00:30-16:30 at input $0.27, cache read $0.07,
output $1.10 per MTok; off-peak (16:30-00:30) $0.135 / $0.035 / $0.55. A request is priced at its
own time: the clock's start (default 07:00 UTC on the price date) plus its t."""
import datetime as dt
from decimal import Decimal

from click.testing import CliRunner

from prefixsim.api import run_file
from prefixsim.cli import cli
from prefixsim.core.pricing import PriceBook

#: a Monday before deepseek-chat became an alias of deepseek-v4-flash (2026-04-24)
PRICE_DATE = dt.date(2026, 3, 30)
PEAK = (Decimal("0.27"), Decimal("0.07"), Decimal("1.1"))
OFF_PEAK = (Decimal("0.135"), Decimal("0.035"), Decimal("0.55"))

SCENARIO = """\
name: deepseek-clock
provider: deepseek
model: deepseek-chat
tokenizer: approx
pace: 30s
output: 200
{start}base:
  system: 3000
  history: {{turns: 2}}
timeline:
  - request: 3
"""


def _cost(o, rates):
    inp, read, out = rates
    u = o.usage
    return (u.input_tokens * inp + u.cache_creation * inp + u.cache_read * read + u.output_tokens * out) / Decimal(10**6)


def _run(tmp_path, start=""):
    p = tmp_path / "ds.yaml"
    p.write_text(SCENARIO.format(start=f"start: {start}\n" if start else ""))
    return run_file(str(p), PRICE_DATE).variants[0]


def test_default_start_is_a_peak_hour(tmp_path):
    v = _run(tmp_path)
    assert [o.cost_usd for o in v.outcomes] == [_cost(o, PEAK) for o in v.outcomes]
    assert all(o.usage.cache_read for o in v.outcomes[1:])     # the read rate is exercised too
    assert v.assumptions["clock start"] == "2026-03-30T07:00:00Z (t = 0)"
    assert "00:30-16:30 UTC input 0.27" in v.assumptions["time-of-day prices [deepseek-chat]"]


def test_an_off_peak_start_prices_at_the_discount(tmp_path):
    v = _run(tmp_path, "2026-03-24T16:30:00Z")
    assert [o.cost_usd for o in v.outcomes] == [_cost(o, OFF_PEAK) for o in v.outcomes]


def test_each_request_is_priced_at_its_own_time(tmp_path):
    # t = 0, 30, 60 s from 16:29:15: the first two at peak, the third (16:30:15) off-peak
    v = _run(tmp_path, "2026-03-24T16:29:15Z")
    assert [o.call.t for o in v.outcomes] == [0, 30, 60]
    expected = [_cost(o, r) for o, r in zip(v.outcomes, (PEAK, PEAK, OFF_PEAK))]
    assert [o.cost_usd for o in v.outcomes] == expected


def test_cli_start_overrides_the_scenario(tmp_path):
    p = tmp_path / "ds.yaml"
    p.write_text(SCENARIO.format(start=""))
    res = {}
    for start in (None, "2026-03-24T17:00:00Z"):
        args = ["run", str(p), "--format", "json", "--no-write", "--price-date", "2026-03-24"]
        r = CliRunner().invoke(cli, args + (["--start", start] if start else []))
        assert r.exit_code == 0, r.output
        import json
        v = json.loads(r.output)["scenarios"][0]["variants"][0]
        res[start] = sum(x["cost_usd"] for x in v["requests"])
    # every rate halves off-peak (each request's cost is rounded to 6 decimals in the JSON)
    assert res[None] > 0.001 and abs(res["2026-03-24T17:00:00Z"] - res[None] / 2) < 3e-6


def test_bad_start_is_a_located_error(tmp_path, capsys):
    import pytest

    from prefixsim.cli import main

    p = tmp_path / "ds.yaml"
    p.write_text(SCENARIO.format(start="start: 2026-11-24T25:00:00Z\n"))
    for args in (["run", str(p), "--no-write"], ["run", str(p), "--no-write", "--start", "tuesday"]):
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"{p}:7:1: start '2026-11-24T25:00:00Z' is not a date and time" in err
    assert "--start 'tuesday' is not a date and time" in err and "Traceback" not in err


def test_price_book_keys_by_window_not_by_request():
    book = PriceBook(when=dt.date(2026, 3, 24))
    assert book.rates_at("deepseek-chat", "deepseek", 0).input.base == Decimal("0.27")          # 07:00
    assert book.rates_at("deepseek-chat", "deepseek", 9.5 * 3600 - 1).input.base == Decimal("0.27")  # 16:29:59
    assert book.rates_at("deepseek-chat", "deepseek", 9.5 * 3600).input.base == Decimal("0.135")     # 16:30
    assert book.rates_at("deepseek-chat", "deepseek", 17.5 * 3600).input.base == Decimal("0.27")     # 00:30 next day
    # V4: peak 01:00-04:00 and 06:00-10:00 UTC (genai-prices 0.2.3); 07:00 is peak, 10:00 is not
    book = PriceBook(when=dt.date(2026, 11, 24))
    assert book.rates_at("deepseek-v4-pro", "deepseek", 0).input.base == Decimal("1.32")
    assert book.rates_at("deepseek-v4-pro", "deepseek", 3 * 3600).input.base == Decimal("0.66")


def test_replay_prices_each_request_at_its_own_timestamp():
    from conftest import make_request

    from prefixsim.model import Call
    from prefixsim.replay import WhatIf, replay
    from prefixsim.sources.record import Record

    def rec(i, stamp, t):
        return Record(Call(t, make_request([3000, 200], {2: "5m"}, model="deepseek-chat"), label=str(i),
                           output_tokens=100), str(i), stamp, None, "log.jsonl", i + 1)

    recs = [rec(0, "2026-03-24T16:29:00Z", 0.0), rec(1, "2026-03-24T16:31:00.500Z", 120.5)]
    res = replay(recs, WhatIf(provider="deepseek"))
    a, b = res.rows
    assert a.cost_predicted == (a.predicted.input_tokens * PEAK[0] + a.predicted.cache_creation * PEAK[0]
                                + a.predicted.cache_read * PEAK[1] + 100 * PEAK[2]) / Decimal(10**6)
    assert b.cost_predicted == (b.predicted.input_tokens * OFF_PEAK[0] + b.predicted.cache_creation * OFF_PEAK[0]
                                + b.predicted.cache_read * OFF_PEAK[1] + 100 * OFF_PEAK[2]) / Decimal(10**6)
    assert "16:29 UTC" in res.summary.price_source and "16:31 UTC" in res.summary.price_source


def test_default_clock_is_a_weekday_and_a_weekend_is_off_peak_all_day():
    from prefixsim.core.pricing import _last_weekday, clock_start

    assert _last_weekday(dt.date(2026, 11, 28)) == dt.date(2026, 11, 27)      # Saturday -> Friday
    assert _last_weekday(dt.date(2026, 11, 29)) == dt.date(2026, 11, 27)      # Sunday -> Friday
    assert _last_weekday(dt.date(2026, 11, 24)) == dt.date(2026, 11, 24)      # Tuesday stays
    assert clock_start(dt.date(2026, 11, 24)) == dt.datetime(2026, 11, 24, 7, tzinfo=dt.UTC)
    assert clock_start().weekday() < 5
    # DeepSeek bills off-peak all day at weekends from 2026-08-23 (prefixsim/core/price_overlay.py): a
    # Saturday clock has one price all day, the weekday's off-peak one
    sat = PriceBook(when=dt.date(2026, 11, 28))
    assert sat.windows("deepseek-v4-pro", "deepseek") is None
    assert sat.rates("deepseek-v4-pro", "deepseek").input.base == Decimal("0.66")
    fri = PriceBook(when=dt.date(2026, 11, 27))
    assert fri.rates("deepseek-v4-pro", "deepseek").input.base == Decimal("1.32")               # 07:00: peak
    assert fri.windows("deepseek-v4-pro", "deepseek").endswith("(USD/MTok; each request priced at its own time)")
