"""What a replay says of a rule that is partly or wholly the stated default (providers/others.py:
`rules_note`, `cause_note`), and which row of a provider's rules a model id takes (`other_rule`).

The shipped rows have one row per provider and sources of one shape, so these tests give the functions
the other shapes their docstrings promise (issue 37: a mutant that changes only a note is alive
unless a test fails): sources with two undocumented clauses, a figure inside parentheses, a source
that says nothing of which figure, model-specific rows, and Gemini's measured retention."""
import pytest

from prefixsim.providers import others
from prefixsim.providers.others import STATED_DEFAULT, cause_note, other_rule, rules_note, undocumented


class Described:
    """A policy that only describes itself (all `rules_note` and `cause_note` read of a policy)."""

    def __init__(self, **fields: str) -> None:
        self.fields = {k.replace("_", " "): v for k, v in fields.items()}

    def describe(self, model: str) -> dict[str, str]:
        return dict(self.fields)


@pytest.mark.parametrize("source, note", [
    # the first undocumented clause is named, after its source key's ": "
    ("X-PC: automatic; minimum undocumented: 1,024; retention undocumented: 5 min",
     "minimum undocumented: stated default"),
    ("X-PC, docs: minimum and retention undocumented: 1,024 tokens", "minimum and retention undocumented: stated default"),
    # a figure in parentheses (Bedrock's "caching (minimum undocumented)")
    ("BR-PC: cached models listed (minimum undocumented)", "minimum undocumented: stated default"),
    # a source of the stated default, or one that names no figure, is the whole rule
    ("UNDOC, docs: figures undocumented; stated default", "rules undocumented: stated default"),
    ("UNDOC, nothing is said", "rules undocumented: stated default"),
    ("X-PC: (undocumented)", "rules undocumented: stated default"),
    # the clause is the text after the last ": " and the last "(", its trailing commas stripped
    ("X-PC, docs: automatic: minimum undocumented", "minimum undocumented: stated default"),
    ("BR-PC: cached models (listed) (minimum undocumented)", "minimum undocumented: stated default"),
    ("X-PC: retention, undocumented: 5 min", "retention undocumented: stated default"),
    # a source without the ": " after its key keeps its whole head (the key's letters included)
    ("X-PC retention undocumented", "X-PC retention undocumented: stated default"),
    ("X-PC: automatic, documented", ""),
])
def test_a_note_names_the_first_figure_its_source_leaves_undocumented(source, note):
    assert rules_note(Described(source=source), "m") == note


def test_the_source_is_found_in_any_field_that_carries_one_and_only_there():
    assert rules_note(Described(minimum_cacheable_tokens="1,024 (minimum undocumented)"), "m") == \
        "minimum undocumented: stated default"
    assert rules_note(Described(platform_rules="CV-PC: retention undocumented"), "m") == \
        "retention undocumented: stated default"
    assert rules_note(Described(retention="retention undocumented", caching="minimum undocumented"), "m") == ""
    # the first sourced field that is undocumented, in the description's order
    assert rules_note(Described(source="A-PC: documented", platform_rules="B-PC: retention undocumented"), "m") == \
        "retention undocumented: stated default"


def test_undocumented_is_either_marker():
    assert undocumented("UNDOC, x") and undocumented("X-PC: retention undocumented")
    assert not undocumented("X-PC: all documented") and not undocumented("undoc")


@pytest.mark.parametrize("source, kind, note", [
    # a note is added only to the causes the undocumented figure decides
    ("X-PC: minimum undocumented: 1,024", "below_minimum", "minimum undocumented: stated default"),
    ("X-PC: minimum undocumented: 1,024", "ttl_expired", ""),
    ("X-PC: retention undocumented: 5 min", "evicted", "retention undocumented: stated default"),
    ("X-PC: retention undocumented: 5 min", "below_minimum", ""),
    ("X-PC: minimum and retention undocumented", "ttl_expired", "minimum and retention undocumented: stated default"),
    # a clause that names neither figure, or the whole rule, concerns every cause
    ("X-PC: caching undocumented", "ttl_expired", "caching undocumented: stated default"),
    ("UNDOC, x", "below_minimum", "rules undocumented: stated default"),
    # a kind no figure decides takes the note as it is
    ("X-PC: retention undocumented", "", "retention undocumented: stated default"),
])
def test_a_cause_note_concerns_only_the_figure_that_decided_the_cause(source, kind, note):
    assert cause_note(Described(source=source), "m", kind) == note


def test_a_measured_rule_says_what_public_traffic_shows_beside_the_documentation():
    policy = Described(source="G-IC: documented", measured="yes", minimum_cacheable_tokens="2,048",
                       retention="best effort; the figures shown: 3-5 min idle (OBS), 10 min idle at most")
    assert cause_note(policy, "m", "below_minimum") == "minimum 2,048 (docs/rules.md#google-gemini)"
    assert cause_note(policy, "m", "ttl_expired") == ("retention as public traffic shows, 3-5 min idle; documented: "
                                                      "best effort, no hit promised (docs/rules.md#google-gemini)")
    # a retention that names no figures shown is quoted up to its idle time
    bare = Described(source="G-IC: documented", measured="yes", retention="60 min idle")
    assert cause_note(bare, "m", "evicted").startswith("retention as public traffic shows, 60 min idle;")
    # the idle time is the first one after "the figures shown: ", and a rule that is not best effort
    # names its own provider's page
    twice = Described(source="DS: documented", measured="yes", provider="deepseek",
                      retention="1 h idle; the figures shown: 12 h idle (the figures shown: 3 h idle at most)")
    assert cause_note(twice, "m", "ttl_expired") == ("retention as public traffic shows, 12 h idle; documented: "
                                                     "a range (hours to days) (docs/rules.md#deepseek)")
    # an unmeasured, documented rule adds nothing
    assert cause_note(Described(source="G-IC: documented", retention="x"), "m", "ttl_expired") == ""


def test_a_model_takes_the_longest_row_its_id_or_its_last_path_part_starts_with(monkeypatch):
    rows = {"": "any", "kimi": "kimi", "kimi-k2": "k2", "moonshotai/": "routed", "a-router/": "a-router"}
    monkeypatch.setitem(others.OTHER_RULES, "fake", rows)
    rule_for = other_rule("fake")
    assert rule_for("kimi-k2-instruct") == "k2"                  # the longest prefix, not the first
    assert rule_for("kimi-latest") == "kimi"
    assert rule_for("  Kimi-K2-Instruct ") == "k2"                 # ids compared stripped and lower-cased
    assert rule_for("groq/kimi-k2-0905") == "k2"                   # a router's id: its last path part
    assert rule_for("moonshotai/other") == "routed"                # or the whole id
    assert rule_for("openrouter/moonshotai/kimi-k2") == "k2"       # the part after the last slash
    assert rule_for("a-router/kimi-k2") == "a-router"              # longest, not greatest: "kimi-k2" > "a-router/"
    assert rule_for("llama-3") == "any"
    monkeypatch.setitem(others.OTHER_RULES, "fake", {"kimi": "kimi"})
    assert other_rule("fake")("llama-3") is STATED_DEFAULT         # no row matches: the stated default
    assert other_rule("no-such-provider")("kimi") is STATED_DEFAULT
