"""The Python API as a notebook meets it: short reprs, DataFrames for the summary, the requests, the
comparison and the cost by stream; a sweep's parameter as a column; cause / cause_detail split as in
replay results."""
import datetime as dt
from pathlib import Path

import pytest

from prefixsim.api import run_scenario
from prefixsim.scenario.results import stream_group

ROOT = Path(__file__).resolve().parents[2]
WHEN = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def stagger():
    return run_scenario(str(ROOT / "scenarios" / "parallel-children-stagger.yaml"), WHEN)


@pytest.fixture(scope="module")
def economics():
    return run_scenario(str(ROOT / "scenarios" / "seed-fork-economics.yaml"), WHEN)


def test_reprs_are_one_short_line(stagger):
    r = repr(stagger)
    assert r == ("<ScenarioResult 'parallel-children-stagger': 8 variants, cheapest "
                 "'fresh sub-agents of one type [stagger=3]' $0.3173>")
    v = repr(stagger.variants[0])
    assert v.startswith("<VariantResult 'fork children [stagger=0]': 16 requests, hit ") and "\n" not in v


def test_sweep_parameter_is_a_column_and_the_variant_its_plain_name(stagger):
    for df in (stagger.summary, stagger.comparison, stagger.requests, stagger.by_stream):
        assert "stagger" in df.columns
        assert set(df["variant"]) == {"fork children", "fresh sub-agents of one type"}
    assert sorted(set(stagger.summary["stagger"])) == [0, 1, 3, 5]


def test_comparison_is_a_dataframe_and_called_gives_rows(stagger):
    df = stagger.comparison
    assert len(df) == 8 and list(df.columns[:3]) == ["scenario", "variant", "stagger"]
    # x cheapest within each swept value: at stagger=0 the sub-agents ($0.4087) beat the forks ($0.4120)
    at0 = df[df["stagger"] == 0].set_index("variant")["vs_cheapest"]
    assert at0["fresh sub-agents of one type"] == 1.0
    assert at0["fork children"] == pytest.approx(0.411967 / 0.408741, abs=1e-5)
    rows = stagger.comparison()
    assert isinstance(rows, list) and rows[0]["variant"] == "fork children" and rows[0]["stagger"] == 0


def test_comparison_called_gives_the_frames_rows_column_for_column(stagger):
    """`res.comparison()` and `res.comparison` are one table: the same keys in the same order, the
    same values (vs_cheapest within each swept value in both), plain Python numbers."""
    df, rows = stagger.comparison, stagger.comparison()
    assert [list(r) for r in rows] == [list(df.columns)] * len(df)
    assert rows == df.to_dict("records")
    assert all(type(r["cost_usd"]) is float and type(r["requests"]) is int for r in rows)
    at0 = {r["variant"]: r["vs_cheapest"] for r in rows if r["stagger"] == 0}
    assert at0["fresh sub-agents of one type"] == 1.0


def test_summary_holds_no_private_decimals(stagger):
    """A variant's summary() is what its table and JSON show: no `_cost` / `_no_cache` Decimals; the
    exact total is `cost_exact`."""
    from decimal import Decimal

    for v in stagger.variants:
        s = v.summary()
        assert not [k for k in s if k.startswith("_")]
        assert not [k for k, x in s.items() if isinstance(x, Decimal)]
        assert isinstance(v.cost_exact, Decimal) and float(round(v.cost_exact, 6)) == s["cost_usd"]


def test_requests_split_cause_and_detail_like_replay(economics):
    df = economics.requests
    assert "cause_detail" in df.columns
    kinds = set(df["cause"].dropna())
    assert kinds <= {"cold", "ttl_expired", "prefix_changed", "below_minimum", "not_yet_available",
                     "lookback_exceeded", "model_switch", "evicted", "compaction"}
    together = df[df["variant"] == "fork, 5 children launched together"]
    late = together[together["cause"] == "not_yet_available"]
    assert len(late) == 4 and late["cause_detail"].notna().all()


def test_cost_by_stream_sets_the_parent_apart_and_sums_to_the_variant(economics):
    by = economics.by_stream
    fork = by[by["variant"] == "fork, 5 children launched together"].set_index("stream")
    assert list(fork.index) == ["main", "fork1"] and fork.loc["fork1", "streams"] == 5
    total = economics.summary.set_index("variant").loc["fork, 5 children launched together", "cost_usd"]
    assert fork["cost_usd"].sum() == pytest.approx(total, abs=2e-6)
    assert fork["cost_share"].sum() == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("stream,group", [("fork1.3", "fork1"), ("sub2.12", "sub2"), ("main", "main"),
                                          ("compact", "compact"), ("a.b", "a.b")])
def test_stream_groups(stream, group):
    assert stream_group(stream) == group
