import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError
from prefixsim.providers.gemini_explicit import CachedContent, storage, storage_cost

ROOT = Path(__file__).resolve().parents[2]
#: the last day Gemini 2.5 Pro and 2.5 Flash were live on the Gemini API (prefixsim/core/lifecycle.py)
LIVE = PriceBook(when=dt.date(2026, 11, 30))


def test_storage_two_hours_2_5_pro():
    # G-PR: 2.5 Pro storage $4.50 / MTok / h; 100 K tokens kept 2 h = 0.1 × 2 × 4.50 = $0.90
    s, _ = storage("gemini-2.5-pro", LIVE)
    c = CachedContent.create("ctx", 0.0, ttl_s=7200)
    assert storage_cost(100_000, c.kept_s, s) == Decimal("0.90")


def test_default_ttl_one_hour_and_expiry():
    c = CachedContent.create("ctx", 10.0)
    assert c.end == 3610.0 and c.alive(3609.9) and not c.alive(3610.0)
    s, _ = storage("gemini-2.5-flash", LIVE)   # $1.00 / MTok / h
    assert storage_cost(1_000_000, c.kept_s, s) == Decimal("1.00")


def test_update_ttl_counts_from_update_and_delete_ends_billing():
    c = CachedContent.create("ctx", 0.0)     # expires at 1 h
    c.update_ttl(1800.0, 7200)               # now expires at 2.5 h
    assert c.end == 9000.0
    c.delete(5400.0)                         # kept 1.5 h
    s, _ = storage("gemini-2.5-pro", LIVE)
    assert storage_cost(100_000, c.kept_s, s) == Decimal("0.675")   # 0.1 × 1.5 × 4.50
    with pytest.raises(UserError):
        c.update_ttl(6000.0, 60)


def test_bad_ttl():
    with pytest.raises(UserError):
        CachedContent.create("ctx", 0.0, ttl_s=0)


def test_simulator_creation_storage_and_read_by_reference():
    from prefixsim.core.simulator import Simulator
    from prefixsim.model import Block, CachedRef, Call, Layer, Request
    prefix = Block(Layer.SYSTEM, b"p" * 64, "system", None, 100_000)
    turn = Block(Layer.MESSAGES, b"q" * 64, "messages[0]", None, 1_000)
    # 2026-11-30: before Gemini 2.5 Pro's retirement on the Gemini API (prefixsim/core/lifecycle.py)
    sim = Simulator("gemini", tokenizer="approx", prices=PriceBook(when=dt.date(2026, 11, 30)))   # no implicit hit
    made = sim.step(Call(0.0, Request("gemini-2.5-pro", (prefix,)), stream="cache c",
                         cached=CachedRef("c", 1, create=True, kept_s=7200)))
    assert made.usage.input_tokens == 100_000 and made.storage_usd == Decimal("0.90")
    assert made.cost_usd == Decimal("0.125")          # 0.1 MTok at $1.25 input (≤200K)
    read = sim.step(Call(60.0, Request("gemini-2.5-pro", (prefix, turn)), cached=CachedRef("c", 1)))
    assert read.usage.cache_read == 100_000 and read.usage.input_tokens == 1_000


STORAGE_SCENARIO = """\
name: storage-table
model: gemini-2.5-pro
provider: gemini
tokenizer: cl100k_base
base:
  system: 100000
timeline:
  - create_cache: {name: ctx, messages: 0, ttl: 2h}
  - request: 1
"""


def _run(tmp_path, *args):
    from click.testing import CliRunner

    from prefixsim.cli import cli

    r = CliRunner().invoke(cli, ["run", *args, "--out", str(tmp_path / "reports"), "--price-date", "2026-11-30"])
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.slow
def test_run_table_shows_explicit_cache_storage(tmp_path):
    # The cache holds the system instruction: 100,000 tokens of text + 8 of framing = 100,008, kept its
    # 2 h TTL (never deleted) at 2.5 Pro's $4.50 / MTok / h: 100,008 × 2 × 4.50 / 1e6 = $0.900072.
    path = tmp_path / "s.yaml"
    path.write_text(STORAGE_SCENARIO)
    out = _run(tmp_path, str(path), "-v")
    head = next(line for line in out.splitlines() if line.startswith("label"))
    assert "storage $" in head
    create = next(line for line in out.splitlines() if line.startswith("create ctx"))
    assert "0.9001" in create.split() and "100,008" in create.split()
    # the variant's cost includes storage: creation 100,008 × $1.25/MTok = 0.125010, storage 0.900072
    summary = next(line for line in out.splitlines() if line.startswith("default "))
    assert "0.9001" in summary.split()
    assert "storage $: an explicit cache's storage" in out
    doc = json.loads(_run(tmp_path, str(path), "--format", "json"))
    v = doc["scenarios"][0]["variants"][0]
    assert v["summary"]["storage_usd"] == 0.900072


def test_run_table_has_no_storage_column_without_explicit_caches(tmp_path):
    for scenario in ("scenarios/ttl-expiry.yaml", "scenarios/multi-cloud.yaml"):
        out = _run(tmp_path, str(ROOT / scenario), "-v")
        assert "storage $" not in out and "storage_usd" not in out, scenario


@pytest.mark.parametrize("model,least", [
    ("gemini-2.5-flash", 1024),        # the API's own 400 (G-ERR), below the 2026-10-13 page's 2,048
    ("gemini-2.5-flash-lite", 2048),   # the API's own 400 (G-ERR); no page lists it
    ("gemini-2.5-pro", 2048), ("models/gemini-2.5-pro-preview-05-06", 2048),
    ("gemini-3-pro-preview", 4096), ("gemini-3-flash-preview", 1024), ("gemini-3.1-pro-preview", 4096),
    # a Vertex AI resource name: the model is its last path segment
    ("projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash-lite", 2048),
])
def test_explicit_minimum_by_model(model, least):
    from prefixsim.providers.gemini_tables import gemini_explicit_minimum

    assert gemini_explicit_minimum(model).value == least


def test_explicit_minimum_of_an_unknown_model_names_the_known_families():
    from prefixsim.errors import UserError
    from prefixsim.providers.gemini_tables import gemini_explicit_minimum

    with pytest.raises(UserError) as e:
        gemini_explicit_minimum("gemini-2.0-flash")
    assert str(e.value) == ("unknown Gemini model 'gemini-2.0-flash' for explicit caching (known families: "
                            "gemini-2.5-flash, gemini-2.5-flash-lite, gemini-2.5-pro, gemini-3-flash, gemini-3-pro, "
                            "gemini-3.1, gemini-3.5, gemini-3.6, gemini-3.7, gemini-3.8, gemini-4)")

@pytest.mark.slow
def test_explicit_cache_below_the_minimum_is_refused(tmp_path):
    # 2.5 Pro: 2,048 tokens at least. A 1,000-token system instruction (+ 8 framing) is refused with
    # the API's wording; 2,040 + 8 = 2,048 is created.
    import subprocess
    import sys

    small = tmp_path / "small.yaml"
    small.write_text(STORAGE_SCENARIO.replace("system: 100000", "system: 1000"))
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "run", str(small),
                        "--out", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2
    # at the create_cache step's own line (issue 33: it was file:1)
    assert (f"{small}:8:5: create ctx: Cached content is too small. total_token_count=1008, "
            "min_total_token_count=2048 (gemini-2.5-pro;" in p.stderr)
    assert "Traceback" not in p.stderr
    edge = tmp_path / "edge.yaml"
    edge.write_text(STORAGE_SCENARIO.replace("system: 100000", "system: 2040"))
    assert "2,048" in _run(tmp_path, str(edge), "-v")


def test_gemini_2_5_after_its_shutdown_is_billed_as_its_successor_and_its_storage_refused():
    """Issue 31, case 5: from 2026-12-01 the Gemini API routes gemini-2.5-pro to gemini-3.8-flash and
    gemini-2.5-flash to gemini-3.5-flash-lite, billed at their rates; neither successor has a published
    storage price, so an explicit cache is refused with the successor named, not billed at 2.5's rate."""
    after = PriceBook(when=dt.date(2026, 12, 2))
    for old, new in (("gemini-2.5-pro", "gemini-3.8-flash"), ("gemini-2.5-flash", "gemini-3.5-flash-lite")):
        r, succ = after.rates(old, "gemini"), after.rates(new, "gemini")
        assert r.per_mtok() == succ.per_mtok()
        if old == "gemini-2.5-pro":   # 3.8 Flash's rates, not 2.5 Pro's (3.5 Flash-Lite lists 2.5 Flash's own)
            assert r.per_mtok() != LIVE.rates(old, "gemini").per_mtok()
        assert f"{old} retired 2026-12-01 00:00 UTC: routed to {new}, billed at its rates" in r.source
        with pytest.raises(UserError) as e:
            storage(old, after)
        assert f"no explicit-cache storage price for {new!r} ({old} retired" in str(e.value)


def test_the_explicit_study_default_is_live_on_every_price_date():
    """Issue 34 item 1: `breakeven gemini-explicit` defaulted to gemini-2.5-pro, which from its shutdown
    (2026-12-01) is routed to gemini-3.8-flash, a model without a storage price, so the documented study
    exited 2 with its defaults. The default is chosen from the data by date: on any day from 2.5 Pro's
    release to two years on it is billed as itself (not routed) and has a storage price."""
    from prefixsim.providers.gemini_explicit import default_study_model

    assert default_study_model(LIVE) == "gemini-2.5-pro"
    assert default_study_model(PriceBook(when=dt.date(2026, 12, 1))) == "gemini-3.1-pro-preview"
    day = dt.date(2025, 6, 17)
    while day <= dt.date(2028, 12, 31):
        book = PriceBook(when=day, designs=True)
        model = default_study_model(book)
        assert book.priced_as(model, "gemini") == (model, ""), day
        rate, source = storage(model, book)
        assert rate > 0 and source.startswith("G-PR"), day
        day += dt.timedelta(days=29)


def test_gemini_3_storage_prices():
    """G-PR as secondary copies of the pricing page give them: 3.1 Pro Preview $4.50, 3 Flash Preview $1.00
    per MTok-hour; the 3.5-3.8 Flash models publish none (still refused, naming the price sheet key)."""
    now = PriceBook(when=dt.date(2026, 12, 2))
    assert storage("gemini-3.1-pro-preview", now)[0] * 1_000_000 == Decimal("4.50")
    assert storage("gemini-3-flash-preview", now)[0] * 1_000_000 == Decimal("1.00")
    with pytest.raises(UserError, match="storage_mtok_hour"):
        storage("gemini-3.8-flash", now)


def test_explicit_study_prints_its_table_with_words_in_a_money_column(tmp_path):
    """Issue 34 item 1: the table's text output formatted `never cheaper` (and money already shown as
    "$0.4500") with a money format: exit 70 after the files were written; only the JSON was tested."""
    from prefixsim.report.breakeven import run_breakeven

    b = run_breakeven("gemini-explicit", tmp_path, price_date=dt.date(2026, 11, 30))
    text = b.text()
    assert "never cheaper" in text and "$0.4500" in text


# --- the rule's numbers, sources and refusals exactly (issue 37) ---------------------------------

G_PR = "G-PR 2026-11-30, docs/rules.md#gemini-explicit-context-caching"
KNOWN = "known: gemini-2.5-flash, gemini-2.5-pro, gemini-3-flash, gemini-3.1-pro"


def test_storage_rate_is_per_token_hour_with_its_source():
    # G-PR: $4.50 and $1.00 per 1,000,000 tokens per hour; a dated preview or a Vertex AI resource name,
    # any case, is the family its last path segment starts with
    assert storage("gemini-2.5-pro", LIVE) == (Decimal("0.0000045"), G_PR)
    assert storage("gemini-2.5-flash", LIVE) == (Decimal("0.000001"), G_PR)
    assert storage("models/gemini-2.5-pro-preview-05-06", LIVE) == (Decimal("0.0000045"), G_PR)
    assert storage("projects/p/locations/us/publishers/google/models/Gemini-2.5-Flash", LIVE)[0] == Decimal("0.000001")


def test_a_sheets_storage_price_wins_and_names_the_sheet():
    book = PriceBook({"gemini-2.5-pro": {"input": 1.25, "output": 10, "storage_mtok_hour": "9"}},
                     sheet_source="prices.yaml", when=dt.date(2026, 11, 30))
    assert storage("gemini-2.5-pro", book) == (Decimal("0.000009"), "prices.yaml")
    # a model the sheet gives no storage price keeps the table's
    assert storage("gemini-2.5-flash", book) == (Decimal("0.000001"), G_PR)


def test_no_storage_price_is_refused_naming_the_known_families_and_the_sheet_key():
    with pytest.raises(UserError) as e:
        storage("gemini-2.0-flash", LIVE)
    assert e.value.message == (f"no explicit-cache storage price for 'gemini-2.0-flash' ({KNOWN}); give "
                               "storage_mtok_hour (USD per MTok per hour) in a price sheet")
    # a retired model: the successor it is billed as is named, with why and on which price date
    with pytest.raises(UserError) as e:
        storage("gemini-2.5-pro", PriceBook(when=dt.date(2026, 12, 2)))
    assert e.value.message == ("no explicit-cache storage price for 'gemini-3.8-flash' (gemini-2.5-pro retired "
                               "2026-12-01 00:00 UTC: routed to gemini-3.8-flash, billed at its rates; on 2026-12-02) "
                               f"({KNOWN}); give storage_mtok_hour (USD per MTok per hour) in a price sheet")


def test_without_a_live_study_model_the_refusal_names_each_tried_and_why(monkeypatch):
    import prefixsim.providers.gemini_explicit as gx

    # on 2026-12-02 2.5 Pro is routed to 3.8 Flash (not itself), and 3.8 Flash has no storage price
    monkeypatch.setattr(gx, "EXPLICIT_STUDY_MODELS", ("gemini-2.5-pro", "gemini-3.8-flash"))
    with pytest.raises(UserError) as e:
        gx.default_study_model(PriceBook(when=dt.date(2026, 12, 2)))
    assert e.value.message == (
        "no default model for gemini-explicit on 2026-12-02 (gemini-2.5-pro: gemini-2.5-pro retired 2026-12-01 "
        "00:00 UTC: routed to gemini-3.8-flash, billed at its rates; gemini-3.8-flash: no explicit-cache storage "
        f"price for 'gemini-3.8-flash' ({KNOWN}); give storage_mtok_hour (USD per MTok per hour) in a price "
        "sheet); name one with --model and its storage_mtok_hour in a --prices sheet")


def test_storage_cost_is_tokens_times_hours_times_rate():
    rate = Decimal("0.0000045")
    assert storage_cost(100_000, 1800.0, rate) == Decimal("0.225")      # half an hour
    assert storage_cost(1, 3600.0, rate) == rate
    assert storage_cost(100_000, 0.1, rate) == Decimal("0.0000125")     # a float's own digits, not its binary
    assert storage_cost(0, 3600.0, rate) == 0


def test_a_cache_lives_from_its_creation_to_its_ttl():
    c = CachedContent.create("ctx", 5.0, ttl_s=0.5)
    assert (c.name, c.created, c.expires, c.deleted) == ("ctx", 5.0, 5.5, None)
    assert c.alive(5.0) and c.alive(5.25) and not c.alive(4.999) and not c.alive(5.5)
    assert c.kept_s == 0.5
    assert CachedContent.create("d", 100.0).kept_s == 3600.0     # G-CC: 1 h by default


def test_bad_ttls_are_refused_with_the_name_and_the_value():
    for ttl in (0, -1):
        with pytest.raises(UserError) as e:
            CachedContent.create("ctx", 0.0, ttl_s=ttl)
        assert e.value.message == f"cached content 'ctx': ttl must be positive, got {ttl}"
    c = CachedContent.create("ctx", 0.0)
    for ttl in (0, -5):
        with pytest.raises(UserError) as e:
            c.update_ttl(10.0, ttl)
        assert e.value.message == f"cached content 'ctx': ttl must be positive, got {ttl}"
    assert c.expires == 3600.0


def test_update_and_delete_only_while_alive():
    c = CachedContent.create("ctx", 100.0, ttl_s=60)
    for act in (lambda: c.update_ttl(99.0, 60), lambda: c.delete(99.0)):   # before its creation
        with pytest.raises(UserError) as e:
            act()
        assert e.value.message == "cached content 'ctx' is gone at t=99 s (ended 160 s)"
    c.update_ttl(100.0, 10)            # at its creation: alive; expiry counts from the update
    assert c.end == 110.0
    with pytest.raises(UserError) as e:
        c.delete(110.0)                # at its expiry: gone
    assert e.value.message == "cached content 'ctx' is gone at t=110 s (ended 110 s)"
    c.delete(105.5)
    assert (c.deleted, c.end, c.kept_s) == (105.5, 105.5, 5.5)
    with pytest.raises(UserError) as e:
        c.delete(106.0)
    assert e.value.message == "cached content 'ctx' is gone at t=106 s (ended 105.5 s)"


def test_an_expiry_before_the_delete_ends_the_billing():
    # the earlier of delete and expiry ends it (G-PR bills the time kept)
    c = CachedContent("ctx", 0.0, 100.0, deleted=150.0)
    assert c.end == 100.0 and c.kept_s == 100.0
    assert CachedContent("ctx", 0.0, 100.0, deleted=40.0).end == 40.0


def test_a_bad_storage_price_in_a_sheet_names_the_model_and_the_key():
    book = PriceBook({"gemini-2.5-pro": {"input": 1.25, "output": 10, "storage_mtok_hour": "lots"}})
    with pytest.raises(UserError) as e:
        storage("gemini-2.5-pro", book)
    assert e.value.message.startswith("price sheet for gemini-2.5-pro: storage_mtok_hour ")


def test_a_ttl_under_a_second_is_positive():
    c = CachedContent.create("ctx", 0.0, ttl_s=0.5)
    c.update_ttl(0.25, 0.5)
    assert c.end == 0.75
