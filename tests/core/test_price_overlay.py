"""The dated price overlay (prefixsim/core/price_overlay.py) and model lifecycles
(prefixsim/core/lifecycle.py): every overlay row against its own worked example and against what
genai-prices says where the row corrects it; issue 31's cases 1 and 2, the figures hand-computed
from DeepSeek's pricing page.

The workload of cases 1 and 2 (reconstructed: the only one of the shape whose totals give every
figure of the issue): DeepSeek, tokenizer approx, a 10,000-token system prompt, two requests of
the default sizes: 10,879 uncached, 10,048 read (157 64-token units), 420 output tokens."""
import datetime as dt
from decimal import Decimal

import pytest

from conftest import unversioned

from prefixsim.api import run_file
from prefixsim.core import genai
from prefixsim.core.price_overlay import OVERLAY
from prefixsim.core.pricing import _GENAI_PROVIDER, PriceBook
from prefixsim.errors import UserError
from prefixsim.model import Usage

SCENARIO = """\
name: deepseek-small
provider: deepseek
model: {model}
tokenizer: approx
pace: 30s
{start}base:
  system: 10000
timeline:
  - request: 2
"""
TOTALS = (10_879, 10_048, 420)   # uncached, read, output


def _run(tmp_path, model, date, start=""):
    p = tmp_path / "ds.yaml"
    p.write_text(SCENARIO.format(model=model, start=f"start: {start}\n" if start else ""))
    return run_file(str(p), date).variants[0]


def _totals(v):
    return (sum(o.usage.input_tokens + o.usage.cache_creation for o in v.outcomes),
            sum(o.usage.cache_read for o in v.outcomes), sum(o.usage.output_tokens for o in v.outcomes))


def _cost(v):
    return sum((o.cost_usd for o in v.outcomes), Decimal(0)).quantize(Decimal("0.000001"))


def _prices(v):
    return next(val for k, val in v.assumptions.items() if k.startswith("prices"))


def _by_hand(rates, totals=TOTALS):
    (u, r, o), (i, c, out) = totals, rates
    return ((u * Decimal(i) + r * Decimal(c) + o * Decimal(out)) / 10**6).quantize(Decimal("0.000001"))


@pytest.mark.parametrize("row", OVERLAY, ids=lambda r: r.name)
def test_every_overlay_row_prices_its_worked_example(row):
    ex = row.example
    rates = PriceBook(when=ex.at.date()).rates(row.model, row.provider, ex.at, row.endpoint)
    assert rates.cost(Usage(input_tokens=ex.uncached, cache_read=ex.read, output_tokens=ex.output)) == ex.cost
    assert row.name in rates.origins[0] and "prefixsim overlay" in rates.source


@pytest.mark.parametrize("row", OVERLAY, ids=lambda r: r.name)
def test_genai_prices_still_says_what_each_row_corrects(row):
    """Fails when a genai-prices release changes its data where a row corrects it: the row is then
    redundant (upstream caught up: delete it) or upstream says something else (read the page again)."""
    raw = genai._from_genai_prices(row.model, _GENAI_PROVIDER[row.provider], row.example.at)
    listed = (raw.input.base, raw.cache_read.base if raw.cache_read else None, raw.output.base)
    assert listed == row.upstream, f"genai-prices changed under overlay row {row.name!r}: now {listed}"
    assert listed != (row.price("input"), row.price("cache_read"), row.price("output")), f"{row.name} is redundant"


@pytest.mark.parametrize("model", ["deepseek-chat", "deepseek-reasoner"])
def test_deepseek_legacy_ids_are_priced_as_v4_flash_from_the_alias_date(tmp_path, model):
    """Case 1: from 2026-04-24 both legacy ids route to deepseek-v4-flash (flat $0.14 / $0.0028 / $0.28
    until 2026-08-16): $0.001669, not V3's $0.004103 nor R1's $0.008310 at 07:00 UTC (peak for them)."""
    v = _run(tmp_path, model, dt.date(2026, 6, 10))
    assert _totals(v) == TOTALS
    assert _cost(v) == Decimal("0.001669")
    old = {"deepseek-chat": ("0.27", "0.07", "1.1"), "deepseek-reasoner": ("0.55", "0.14", "2.19")}[model]
    assert _by_hand(old) == {"deepseek-chat": Decimal("0.004103"), "deepseek-reasoner": Decimal("0.008310")}[model]
    assert f"{model} → deepseek-v4-flash from 2026-04-24" in _prices(v)
    assert "genai-prices <release> bundled data: deepseek/deepseek-v4-flash" in unversioned(_prices(v))
    assert "prefixsim overlay 2026-12-01" in _prices(v)


def test_deepseek_legacy_ids_before_the_alias_keep_their_own_price(tmp_path):
    v = _run(tmp_path, "deepseek-chat", dt.date(2026, 3, 10))
    assert _cost(v) == _by_hand(("0.27", "0.07", "1.1")) == Decimal("0.004103")


def test_a_retired_deepseek_id_is_refused_with_its_successor_named(tmp_path):
    with pytest.raises(UserError) as e:
        _run(tmp_path, "deepseek-chat", dt.date(2026, 11, 30))
    assert "retired on 2026-07-24 15:59 UTC" in str(e.value) and "successor deepseek-v4-flash" in str(e.value)


def test_the_docs_deepseek_recording_costs_what_v4_flash_billed():
    """Case 1, the recording docs/replay.md shows (2026-06-10 09:04 UTC, deepseek-reasoner): observed
    usage priced as V4-Flash at launch prices, $0.000216 (genai-prices' deepseek-reasoner peak: $0.0013)."""
    from pathlib import Path

    from prefixsim.replay import replay
    from prefixsim.sources import load

    path = Path(__file__).resolve().parents[1] / "data" / "deepseek-api" / \
        "test_deepseek_deferred_capability_with_thinking.yaml"
    res = replay(load(path))
    obs = [r.observed for r in res.rows]
    u = sum(x.input_tokens + x.cache_creation for x in obs)
    r = sum(x.cache_read for x in obs)
    o = sum(x.output_tokens for x in obs)
    assert _by_hand(("0.14", "0.0028", "0.28"), (u, r, o)) == Decimal("0.000216")
    assert sum(x.cost_observed for x in res.rows).quantize(Decimal("0.000001")) == Decimal("0.000216")
    assert _by_hand(("0.55", "0.14", "2.19"), (u, r, o)).quantize(Decimal("0.0001")) == Decimal("0.0013")


@pytest.mark.parametrize("date,start,cost", [
    (dt.date(2026, 6, 10), "2026-06-10T07:00:00Z", "0.001669"),    # before peak billing: the flat launch price
    (dt.date(2026, 8, 20), "2026-08-20T07:00:00Z", "0.005482"),    # peak $0.44 / $0.014 / $1.32 (08-16 .. 09-09)
    (dt.date(2026, 8, 20), "2026-08-20T12:00:00Z", "0.002741"),    # off-peak $0.22 / $0.007 / $0.66
    (dt.date(2026, 8, 16), "2026-08-16T12:00:00Z", "0.001669"),    # 16:00 UTC on 08-16 had not come yet
    (dt.date(2026, 8, 16), "2026-08-16T16:00:00Z", "0.002741"),    # and now it has (genai-prices: 08-17)
    (dt.date(2026, 9, 15), "2026-09-15T07:00:00Z", "0.003828"),    # from 09-10 genai-prices' $0.30 / $0.006 / $1.20
    (dt.date(2026, 8, 22), "2026-08-22T07:00:00Z", "0.005482"),    # a Saturday before 08-23: still peak
    (dt.date(2026, 8, 29), "2026-08-29T07:00:00Z", "0.002741"),    # a Saturday from 08-23: off-peak all day
    (dt.date(2026, 11, 28), "2026-11-28T07:00:00Z", "0.001914"),   # a Saturday in November: $0.15 / $0.003 / $0.60
])
def test_deepseek_v4_time_of_day_prices_start_when_they_did(tmp_path, date, start, cost):
    """Case 2: genai-prices bills V4's peak hours before they existed ($0.003828 in June) and the later,
    lower peak price from 2026-08-17 to 09-09 ($0.003828 where $0.005482 is right)."""
    v = _run(tmp_path, "deepseek-v4-flash", date, start)
    assert _totals(v) == TOTALS and _cost(v) == Decimal(cost)


def test_no_price_before_a_model_existed(tmp_path):
    with pytest.raises(UserError) as e:
        _run(tmp_path, "deepseek-v4-flash", dt.date(2026, 3, 10))
    assert "released on 2026-04-24" in str(e.value)


def test_a_price_sheet_still_overrides_the_overlay_and_the_bundled_data():
    book = PriceBook({"deepseek-chat": {"input": 1, "output": 2, "cache_read": "0.5"}}, sheet_source="my sheet",
                     when=dt.date(2026, 6, 10))
    r = book.rates("deepseek-chat", "deepseek")
    assert (r.input.base, r.cache_read.base, r.output.base) == (1, Decimal("0.5"), 2) and r.source == "my sheet"
    assert r.origins[0] == "my sheet" and "A-PR multiplier" in r.origins[3]
