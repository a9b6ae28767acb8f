"""Gemini's caching rules as data (providers/gemini_tables.py), each family's figures, sources and
evidence pinned exactly (issue 37): the documented minimum and where traffic shows another, the 4,096-token
unit of the Gemini 3 generation, the explicit-cache minimum per family (docs/rules.md#google-gemini,
#gemini-explicit-context-caching)."""
import pytest

from prefixsim.errors import UserError
from prefixsim.providers import gemini_tables as g
from prefixsim.providers.gemini_tables import GEMINI_RULES, _gemini, gemini_explicit_minimum, gemini_rule

HEAD = ("G-CC, docs/rules.md#google-gemini: implicit caching on 2.5 and later, automatic and best effort "
        "('no guarantee' of a hit): pessimistic = nothing read, optimistic = every prefix kept up to 24 h "
        "from its write (G-VX); ")
TAIL = "; writes cost plain input; read at block boundaries"


def test_a_documented_rule_prints_its_minimum_and_the_traffics_retention():
    r = _gemini(2048, "a note")
    assert r.source == HEAD + "min 2,048 tokens (a note)" + TAIL
    assert r.min_tokens_optimistic is None and r.minimum("optimistic") == 2048
    m = r.measured
    assert (m.ttl, m.min_tokens, m.source, m.increment, m.output) == (600.0, 2048, g.OBS, 1, False)
    # how often a follow-up within those 10 minutes read nothing (the replay's ranges print it)
    assert m.unread == g.MEASURED_UNREAD == (116, 2700)
    assert r.idle("printed") == 600.0 and r.idle("pessimistic") == 0.0 and r.idle("optimistic") == 86400.0


def test_reads_seen_below_the_minimum_drop_it_at_the_optimistic_end_and_in_the_printed_figure():
    r = _gemini(2048, "a note", seen_below="a 594-token read")
    assert r.source == (HEAD + "min 2,048 tokens (a note)" + TAIL +
                        "; OBS: a 594-token read, so the optimistic end applies no minimum")
    assert (r.min_tokens, r.min_tokens_optimistic, r.measured.min_tokens) == (2048, 0, 0)
    assert r.measured.source == g.OBS + "; a 594-token read"


def test_a_minimum_measured_in_traffic_is_the_printed_one_with_its_evidence():
    r = _gemini(1024, "doc", measured_min=4096, traffic="4,096 as traffic shows", unit=4096)
    assert r.source == HEAD + "min 1,024 tokens (doc)" + TAIL     # the source states the documented figure
    assert (r.min_tokens, r.min_tokens_optimistic, r.measured.min_tokens, r.measured.increment) == \
        (1024, None, 4096, 4096)
    assert r.increment == 1 and r.step("printed") == 4096 and r.step("optimistic") == 1
    assert r.measured.source == f"{g.OBS}; {g._G3_UNIT}; minimum: 4,096 as traffic shows"
    # a measured minimum of 0 is a figure, not "none given"
    assert _gemini(2048, "doc", measured_min=0).measured.min_tokens == 0
    # any unit above one token is the cache's own, and its evidence is given
    assert _gemini(2048, "doc", unit=2).measured.source == f"{g.OBS}; {g._G3_UNIT}"


@pytest.mark.parametrize("family,minimum,note,printed_min,optimistic_min,unit,evidence", [
    ("gemini-2.5-flash", 2048, g._G25, 0, 0, 1, (g.OBS, g._G25_FLASH_BELOW)),
    ("gemini-2.5-flash-lite", 2048, g._G25, 2048, 2048, 1, (g.OBS,)),
    ("gemini-2.5-pro", 2048, g._G25, 2048, 2048, 1, (g.OBS,)),
    ("gemini-3-flash", 1024, "G-CC 2026-05-07 only: Gemini 3 Flash Preview", 4096, 1024, 4096,
     (g.OBS, g._G3_UNIT, "minimum: " + g._G3_FLASH_TRAFFIC)),
    ("gemini-3-pro", 4096, "G-CC 2026-05-07: Gemini 3 Pro Preview", 4096, 4096, 4096, (g.OBS, g._G3_UNIT)),
    ("gemini-3.1", 4096, "G-CC 2026-10-13: Gemini 3.1 Pro Preview", 4096, 4096, 4096, (g.OBS, g._G3_UNIT)),
    ("gemini-3.8", 4096, "G-CC 2026-10-13: Gemini 3.5-3.8 Flash", 4096, 4096, 4096, (g.OBS, g._G3_UNIT)),
    ("gemini-4", 4096, "G-CC 2026-10-13: Gemini 4 Argon", 4096, 4096, 4096, (g.OBS, g._G3_UNIT)),
])
def test_each_family_rule(family, minimum, note, printed_min, optimistic_min, unit, evidence):
    r = GEMINI_RULES[family]
    below = f"; OBS: {g._G25_FLASH_BELOW}, so the optimistic end applies no minimum" if printed_min == 0 else ""
    assert r.source == HEAD + f"min {minimum:,} tokens ({note})" + TAIL + below
    assert (r.min_tokens, r.minimum("printed"), r.minimum("optimistic")) == (minimum, printed_min, optimistic_min)
    assert (r.step("printed"), r.measured.ttl, r.measured.source) == (unit, 600.0, "; ".join(evidence))


def test_the_unknown_model_refusal_keeps_the_name_as_given():
    with pytest.raises(UserError) as e:
        gemini_rule(" Gemini-1.5-Pro ")
    assert e.value.message.startswith("unknown Gemini model ' Gemini-1.5-Pro ' for implicit caching (2.5 and later")


@pytest.mark.parametrize("model,family", [
    ("gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"),   # longest prefix wins
    ("gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
    (" MODELS/Gemini-2.5-Pro ", "gemini-2.5-pro"),
    ("projects/p/locations/global/publishers/google/models/gemini-3-pro-preview", "gemini-3-pro"),
])
def test_explicit_minimum_row_and_its_source(model, family):
    assert gemini_explicit_minimum(model) is g.GEMINI_EXPLICIT_MINIMUM[family]


def test_explicit_minimums_name_where_they_come_from():
    gx = "docs/rules.md#gemini-explicit-context-caching"
    assert gemini_explicit_minimum("gemini-2.5-flash").source == f"G-ERR (litellm#17696, 2025-12-09), {gx}"
    assert gemini_explicit_minimum("gemini-2.5-flash-lite").source == f"G-ERR (discuss.ai.google.dev t/178942), {gx}"
    assert gemini_explicit_minimum("gemini-3.1-pro-preview").source == f"G-CC 2026-10-13 / 2026-05-07 table, {gx}"
    with pytest.raises(UserError) as e:
        gemini_explicit_minimum(" Gemini-2.0-Flash")
    assert e.value.message.startswith("unknown Gemini model ' Gemini-2.0-Flash' for explicit caching (known families: ")
