"""A replay's price line names each price origin once and each model once under it, however many
days the traffic spans."""
from conftest import data_file

from prefixsim.replay import joined_sources, replay
from prefixsim.sources import load_many

BUNDLED = "genai-prices 0.2.3 bundled data"
G = f"{BUNDLED}: anthropic/claude-sonnet-4-5"
H = f"{BUNDLED}: anthropic/claude-haiku-4-5"


def test_one_date_is_named_as_it_was():
    assert joined_sources({f"{G}, prices as of 2025-10-19"}) == f"{G}, prices as of 2025-10-19"


def test_several_dates_of_one_model_become_a_range_and_the_origin_is_named_once():
    got = joined_sources({f"{G}, prices as of 2025-10-19", f"{G}, prices as of 2025-09-30",
                          f"{G}, prices as of 2025-10-02", f"{H}, prices as of 2025-10-01"})
    assert got == (f"{BUNDLED}: anthropic/claude-haiku-4-5, prices as of 2025-10-01; "
                   "anthropic/claude-sonnet-4-5, prices at each request's date (2025-09-30 to 2025-10-19, 3 dates)")


def test_a_price_sheet_source_without_a_date_is_kept():
    assert joined_sources({"price sheet prices.yaml", f"{G}, prices as of 2025-10-19"}) == \
        f"price sheet prices.yaml; {G}, prices as of 2025-10-19"


def test_a_folder_over_several_days_names_each_model_once():
    res = replay(load_many([data_file("claude-code", "claude-code-sidekick")]))
    src = res.summary.price_source
    assert src.count("genai-prices") == 1 and "prices at each request's date" in src
    models = [p.split(",")[0].split(": ")[-1] for p in src.split("; ")]
    assert len(models) == len(set(models))


def test_prices_that_change_during_the_day_are_named_by_time():
    D = f"{BUNDLED}: deepseek/deepseek-chat"
    assert joined_sources({f"{D}, prices as of 2026-06-10 16:29 UTC", f"{D}, prices as of 2026-06-10 16:31 UTC"}) == \
        f"{D}, prices at each request's time (2026-06-10 16:29 UTC to 2026-06-10 16:31 UTC, 2 times)"
