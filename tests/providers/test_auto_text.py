"""What a run says of an automatic-caching rule (providers/auto_text.py), pinned key by key and clause by
clause (issue 37): each figure applied, and where the documentation and public traffic disagree, both
(docs/rules.md#google-gemini for the measured rules)."""
from dataclasses import replace

import pytest

from prefixsim.providers.auto_text import best_effort, describe_rule, disagreement
from prefixsim.providers.deepseek_tables import DEEPSEEK_RULE
from prefixsim.providers.gemini_tables import GEMINI_RULES
from prefixsim.providers.tables import AutoRule, Measured

PLAIN = AutoRule(1024, 128, 300.0, 600.0, 3600.0, False, "SRC")
GEMINI_RETENTION = ("best effort, a documented range from nothing read (pessimistic: no hit is promised) to 86400 s "
                    "idle (optimistic: the *_optimistic figures); the figures shown: 600 s idle, as public traffic "
                    "shows; refreshed by a read; cap 86400 s from the write")
GEMINI_CACHING = ("automatic; cached at every position past the minimum; longest cached prefix read, "
                  "at block boundaries")
REPLY = "the reply not read back with its prompt (undocumented)"
KEPT = "retention documented as best effort (no hit promised, kept up to 24 h), read in traffic for 10 min idle"


def test_a_documented_rule_says_its_figures_and_no_traffic():
    assert describe_rule("openai", PLAIN) == {
        "provider": "openai",
        "caching": "automatic; cached at every position past the minimum; longest cached prefix read, inside "
                   "blocks (token level)",
        "minimum cacheable tokens": "1024", "hit increment": "multiples of 128 tokens",
        "retention": "300 s idle (pessimistic: the figures shown) to 600 s idle (optimistic: the *_optimistic "
                     "figures), refreshed by a read; cap 3600 s from the write",
        "source": "SRC"}


@pytest.mark.parametrize("writes,said", [
    ("every", "every position past the minimum"), ("end", "the request's end"),
    ("breakpoints", "its breakpoints (the latest eligible message end, explicit markers)"),
])
def test_where_writes_are_cached(writes, said):
    d = describe_rule("p", replace(PLAIN, writes=writes, partial=False))
    assert d["caching"] == f"automatic; cached at {said}; longest cached prefix read, at block boundaries"
    d = describe_rule("p", replace(PLAIN, writes=writes, common_units=True))
    assert d["caching"] == (f"automatic; cached at {said}, and the common prefix of two requests (read from the "
                            "next); longest cached prefix read, inside blocks (token level)")


def test_one_retention_figure_and_no_cap():
    d = describe_rule("p", replace(PLAIN, ttl=1800.0, ttl_optimistic=1800.0, max_lifetime=float("inf"), increment=1))
    assert d["retention"] == "1800 s idle, refreshed by a read; cap none"
    assert d["hit increment"] == "exact boundary"
    assert describe_rule("p", replace(PLAIN, ttl=1800.4, ttl_optimistic=1800.4, max_lifetime=7199.6))["retention"] \
        == "1800 s idle, refreshed by a read; cap 7200 s from the write"


def test_a_documented_minimum_with_reads_below_it_in_traffic():
    d = describe_rule("p", replace(PLAIN, min_tokens_optimistic=0))
    assert d["minimum cacheable tokens"] == ("1024 documented (the figures shown); reads below it are seen in "
                                             "traffic, so the *_optimistic figures apply 0")


def test_gemini_2_5_pro_documented_minimum_measured_retention():
    r = GEMINI_RULES["gemini-2.5-pro"]
    assert describe_rule("gemini", r) == {
        "provider": "gemini", "caching": GEMINI_CACHING, "minimum cacheable tokens": "2048",
        "hit increment": "exact boundary", "retention": GEMINI_RETENTION, "source": r.source,
        "documentation vs traffic": f"{KEPT}; {REPLY}", "measured": r.measured.source}


def test_gemini_2_5_flash_reads_below_its_minimum_at_both_ends():
    d = describe_rule("gemini", GEMINI_RULES["gemini-2.5-flash"])
    assert d["minimum cacheable tokens"] == ("0 as public traffic shows (the figures shown and the *_optimistic "
                                             "ones); 2048 documented: the documentation and the traffic disagree")
    assert d["documentation vs traffic"] == f"{KEPT}; minimum documented 2,048, seen 0; {REPLY}"
    assert d["retention"] == GEMINI_RETENTION and d["hit increment"] == "exact boundary"


def test_gemini_3_flash_minimum_and_unit_as_traffic_shows():
    d = describe_rule("gemini", GEMINI_RULES["gemini-3-flash"])
    assert d["minimum cacheable tokens"] == ("4096 as public traffic shows (the figures shown); 1024 documented: the "
                                             "documentation and the traffic disagree; the *_optimistic figures apply 1024")
    assert d["hit increment"] == ("multiples of 4096 tokens as public traffic shows (the figures shown); exact "
                                  "boundary at the optimistic end")
    assert d["documentation vs traffic"] == (f"{KEPT}; minimum documented 1,024, seen 4,096; reads in whole "
                                             f"4,096-token units (undocumented); {REPLY}")


def test_a_measured_rule_that_reads_the_reply_back_says_nothing_of_it():
    r = replace(PLAIN, ttl=0.0, ttl_optimistic=7200.0, max_lifetime=7200.0, increment=1,
                measured=Measured(90.0, 1024, "EVIDENCE", output=True))
    assert disagreement(r) == ("retention documented as best effort (no hit promised, kept up to 2 h), read in "
                               "traffic for 2 min idle")
    d = describe_rule("p", r)
    assert d["measured"] == "EVIDENCE" and d["minimum cacheable tokens"] == "1024"
    assert d["retention"] == ("best effort, a documented range from nothing read (pessimistic: no hit is promised) "
                              "to 7200 s idle (optimistic: the *_optimistic figures); the figures shown: 90 s idle, "
                              "as public traffic shows; refreshed by a read; cap 7200 s from the write")
    # a printed unit coarser than the documented one, both named; the documented minimum at both ends
    r = replace(r, increment=128, measured=Measured(90.0, 1024, "EVIDENCE", output=True, increment=1024))
    assert describe_rule("p", r)["hit increment"] == ("multiples of 1024 tokens as public traffic shows (the figures "
                                                      "shown); multiples of 128 tokens at the optimistic end")
    assert disagreement(r).endswith("; reads in whole 1,024-token units (undocumented)")


def test_a_documented_range_and_a_traffic_retention_in_hours():
    # DeepSeek: "hours to days" read as 1 to 24 h, 12 h idle in traffic
    assert disagreement(DEEPSEEK_RULE) == ("retention documented as a range, read as 1 to 24 h, read in traffic for "
                                           "12 h idle")
    # an hour idle is said in hours, just under it in minutes; each figure rounded from the hours (1.5 -> 2, 3.5 -> 4)
    r = replace(PLAIN, ttl=5400.0, ttl_optimistic=12600.0, increment=1,
                measured=Measured(3600.0, 1024, "EVIDENCE", output=True))
    assert disagreement(r) == "retention documented as a range, read as 2 to 4 h, read in traffic for 1 h idle"
    r = replace(r, measured=Measured(5400.0, 1024, "EVIDENCE", output=True))
    assert disagreement(r).endswith("read in traffic for 2 h idle")
    r = replace(r, measured=Measured(3599.0, 1024, "EVIDENCE", output=True))
    assert disagreement(r).endswith("read in traffic for 60 min idle")
    # best effort, kept up to 1.5 h: said as 2 h
    r = replace(r, ttl=0.0, ttl_optimistic=5400.0)
    assert disagreement(r).startswith("retention documented as best effort (no hit promised, kept up to 2 h),")


def test_best_effort_reads_only_a_retention_that_says_so():
    assert best_effort(describe_rule("gemini", GEMINI_RULES["gemini-2.5-pro"]))
    assert not best_effort(describe_rule("deepseek", DEEPSEEK_RULE))
    # a description without a retention (a Claude policy's says "ttl") is not best effort
    assert not best_effort({"provider": "anthropic", "ttl": "5m default or 1h"})
