"""Claude on Bedrock and Vertex, and Gemini (docs/rules.md#bedrock-and-vertex-claude, #google-gemini).
Every expected number is the documented one, written here by hand from the rule."""
from dataclasses import replace
from decimal import Decimal

import pytest
from conftest import PRICE_DATE, make_request, split

from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.model import Call, CauseKind
from prefixsim.providers.registry import get_policy
from prefixsim.providers.tables import canonical_model

# Runs the command in a child interpreter, which a mutation run's switch does not reach.
pytestmark = pytest.mark.no_mutation


def sim(provider, **kw):
    return Simulator(provider, tokenizer="approx", prices=PriceBook(when=PRICE_DATE), **kw)


# --- model ids as the platforms write them ---------------------------------------------------

@pytest.mark.parametrize("given,canonical", [
    ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
    ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
    ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
    ("us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-sonnet-3-7"),
    ("regional.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
    ("claude-3-5-sonnet-v2@20241022", "claude-sonnet-3-5"),
    ("claude-opus-4-1@20250805", "claude-opus-4-1"),
])
def test_bedrock_and_vertex_model_ids_map_to_our_tables(given, canonical):
    assert canonical_model(given) == canonical


# --- Bedrock -----------------------------------------------------------------------------------

def test_bedrock_second_checkpoint_needs_the_minimum_past_the_first():
    # Claude 3.7 Sonnet, minimum 1,024: checkpoints at 1,500 and 2,300 cumulative. On the Claude API both
    # prefixes reach 1,024 and both are written; on Bedrock the second is only 800 past the first.
    req = make_request([1000, 500, 800, 10], {2: "5m", 3: "5m"}, model="claude-sonnet-3-7")
    api = sim("anthropic").step(Call(0, req))
    assert split(api) == (0, 0, 2300, 10)
    bed = sim("bedrock").step(Call(0, req))
    assert split(bed) == (0, 0, 1500, 810)
    # 1,100 past the first: written (1,500 + 1,100 = 2,600 cumulative)
    ok = sim("bedrock").step(Call(0, make_request([1000, 500, 1100, 10], {2: "5m", 3: "5m"}, model="claude-sonnet-3-7")))
    assert split(ok) == (0, 0, 2600, 10)
    # Sonnet 4.5 on Bedrock writes checkpoints a few tokens apart (issue 32: a Converse recording wrote
    # through its fourth checkpoint), as the Claude API does
    assert split(sim("bedrock").step(Call(0, make_request([1000, 500, 800, 10], {2: "5m", 3: "5m"})))) == (0, 0, 2300, 10)


def test_bedrock_offers_1h_on_claude_4_5_not_on_4_1():
    req = make_request([4000, 100], {2: "1h"}, model="claude-sonnet-4-5")
    assert split(sim("bedrock").step(Call(0, req))) == (0, 4100, 0, 0)
    old = make_request([4000, 100], {2: "1h"}, model="claude-opus-4-1")
    s = sim("bedrock")
    assert split(s.step(Call(0, old))) == (0, 0, 4100, 0)    # written and billed as 5m
    late = s.step(Call(600, old))                            # a 5m entry is gone after 10 minutes
    assert split(late) == (0, 0, 4100, 0) and late.cause.kind == CauseKind.TTL_EXPIRED
    assert "5m only" in get_policy("bedrock").describe("claude-opus-4-1")["ttl"]


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_bedrock_and_vertex_share_caches_across_workspaces(provider):
    s = sim(provider)
    s.step(Call(0, replace(make_request([4000, 100], {2: "5m"}), workspace="a")))
    other = s.step(Call(10, replace(make_request([4000, 100], {2: "5m"}), workspace="b")))
    assert split(other) == (4100, 0, 0, 0)


def test_bedrock_lookback_and_four_checkpoints_as_on_the_api():
    # 20-block lookback per checkpoint: a breakpoint 21 blocks past the written entry misses it.
    s = sim("bedrock")
    s.step(Call(0, make_request([2000, 100], {2: "5m"})))
    far = s.step(Call(10, make_request([2000, 100] + [10] * 20, {22: "5m"})))
    assert far.usage.cache_read == 0 and far.cause.kind == CauseKind.LOOKBACK_EXCEEDED
    near = sim("bedrock")
    near.step(Call(0, make_request([2000, 100], {2: "5m"})))
    assert near.step(Call(10, make_request([2000, 100] + [10] * 19, {21: "5m"}))).usage.cache_read == 2100


def test_bedrock_prices_regional_and_global_from_genai_prices(prices):
    # genai-prices `aws`: Sonnet 4.5 regional 3.30 / 0.33 / 4.125 / 6.60 / 16.50, global 3 / 0.30 / 3.75 / 6 / 15
    regional = prices.rates("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock").per_mtok()
    assert regional == {"input": Decimal("3.3"), "cache_read": Decimal("0.33"), "cache_write_5m": Decimal("4.125"),
                        "cache_write_1h": Decimal("6.6"), "output": Decimal("16.5")}
    assert prices.rates("claude-sonnet-4-5-20250929", "bedrock").per_mtok() == regional   # what-if: regional
    glob = prices.rates("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock").per_mtok()
    assert (glob["input"], glob["cache_write_5m"], glob["output"]) == (Decimal(3), Decimal("3.75"), Decimal(15))
    assert "aws/regional.anthropic.claude-sonnet-4-5" in prices.rates("claude-sonnet-4-5", "bedrock").source


def test_vertex_prices_from_genai_prices_google(prices):
    r = prices.rates("claude-sonnet-4-5@20250929", "vertex")
    assert r.per_mtok()["input"] == Decimal(3) and r.per_mtok()["cache_write_1h"] == Decimal(6)
    assert r.source.split(": ")[1].startswith("google/claude-sonnet-4-5")


def test_vertex_keeps_the_api_rules_1h_on_every_model():
    s = sim("vertex")
    out = s.step(Call(0, make_request([4000, 100], {2: "1h"}, model="claude-opus-4-1")))
    assert split(out) == (0, 4100, 0, 0)
    # 1,500 then 800 more: the API rule (each prefix from the start) writes both
    assert split(sim("vertex").step(Call(0, make_request([1000, 500, 800, 10], {2: "5m", 3: "5m"})))) == (0, 0, 2300, 10)


# --- Gemini implicit caching -----------------------------------------------------------------

def other_last(req):
    """`req` with a different last block (same size)."""
    b = req.blocks[-1]
    return replace(req, blocks=req.blocks[:-1] + (replace(b, data=b"other " + b.data),))


def gemini(bound="optimistic"):
    return sim("gemini", policy=get_policy("gemini", bound))


@pytest.mark.parametrize("model,minimum", [
    ("gemini-2.5-pro", 2048), ("gemini-3.1-pro-preview", 4096),
    ("gemini-3.5-flash", 4096), ("gemini-3-flash-preview", 1024), ("gemini-3-pro-preview", 4096),
])
def test_gemini_implicit_minimum_by_model(model, minimum):
    # a prefix one token short of the minimum is never cached; one at the minimum is read back
    s = gemini()
    s.step(Call(0, make_request([minimum - 1, 100], model=model, tag=b"short")))
    short = s.step(Call(10, other_last(make_request([minimum - 1, 100], model=model, tag=b"short"))))
    assert short.usage.cache_read == 0
    s.step(Call(20, make_request([minimum, 100], model=model)))
    assert s.step(Call(30, other_last(make_request([minimum, 100], model=model)))).usage.cache_read == minimum


def test_gemini_2_5_flash_reads_below_its_documented_minimum_at_the_optimistic_end():
    """Traffic shows 2.5 Flash reading below the 2,048 its page documents (a 594-token read of an
    859-token prompt in tests/data/gemini-api): the optimistic end applies no minimum, the
    documented one stays in the assumptions with the disagreement, the printed figure (what traffic
    shows) applies none either, and the pessimistic end reads nothing."""
    s = gemini()
    s.step(Call(0, make_request([700, 100], model="gemini-2.5-flash", tag=b"short")))
    assert s.step(Call(10, other_last(make_request([700, 100], model="gemini-2.5-flash",
                                                   tag=b"short")))).usage.cache_read == 700
    p = gemini("pessimistic")
    p.step(Call(0, make_request([700, 100], model="gemini-2.5-flash", tag=b"short")))
    assert p.step(Call(10, make_request([700, 100], model="gemini-2.5-flash", tag=b"short"))).usage.cache_read == 0
    printed = sim("gemini")
    printed.step(Call(0, make_request([700, 100], model="gemini-2.5-flash", tag=b"short")))
    assert printed.step(Call(10, make_request([700, 100], model="gemini-2.5-flash", tag=b"short"))).usage.cache_read == 800
    said = get_policy("gemini").describe("gemini-2.5-flash")["minimum cacheable tokens"]
    assert said.startswith("0 as public traffic shows") and "2048 documented: the documentation and the traffic disagree" in said


def test_gemini_best_effort_is_a_range():
    req = make_request([3000, 100], model="gemini-2.5-pro")
    pess = gemini("pessimistic")               # no hit is guaranteed
    pess.step(Call(0, req))
    miss = pess.step(Call(10, req))
    assert split(miss) == (0, 0, 0, 3100) and "best effort, no hit assumed" in miss.cause.detail
    opt = gemini()
    opt.step(Call(0, req))
    assert split(opt.step(Call(10, req))) == (3100, 0, 0, 0)   # implicit writes cost plain input
    shown = sim("gemini")                      # the default, printed figure: what traffic shows, between
    shown.step(Call(0, req))
    assert split(shown.step(Call(10, req))) == (3100, 0, 0, 0)
    assert get_policy("gemini").has_range("gemini-2.5-pro")


def test_gemini_implicit_entries_expire_24_hours_after_the_write():
    req = make_request([3000, 100], model="gemini-2.5-flash")
    s = gemini()
    s.step(Call(0, req))
    assert s.step(Call(86000, req)).usage.cache_read == 3100
    late = s.step(Call(86500, req))    # read 500 s ago, but written 86,500 s ago: past 24 h
    assert late.usage.cache_read == 0 and late.cause.kind == CauseKind.TTL_EXPIRED


def test_gemini_cached_tokens_cost_a_tenth_of_input(prices):
    pro = prices.rates("gemini-2.5-pro", "gemini").per_mtok()
    assert (pro["input"], pro["cache_read"], pro["output"]) == (Decimal("1.25"), Decimal("0.125"), Decimal(10))
    flash = prices.rates("gemini-2.5-flash", "gemini").per_mtok()
    assert (flash["input"], flash["cache_read"]) == (Decimal("0.3"), Decimal("0.03"))
    # 3,100 read + 100 uncached on 2.5 Pro: (3,100 x 0.125 + 100 x 1.25) / 1e6 = $0.0005125
    s = sim("gemini", policy=get_policy("gemini", "optimistic"))
    req = make_request([3000, 100], model="gemini-2.5-pro")
    s.step(Call(0, req))
    req2 = make_request([3000, 100, 100], model="gemini-2.5-pro")
    assert s.step(Call(10, req2)).cost_usd == Decimal("0.0005125")


def test_gemini_models_before_2_5_have_no_implicit_caching():
    from prefixsim.errors import UserError
    with pytest.raises(UserError, match="unknown Gemini model"):
        get_policy("gemini").describe("gemini-2.0-flash")


# --- Gemini explicit context caching: the break-even study --------------------------------------

def _gx(prefix=100_000, sheet=None):
    from prefixsim.analysis import gemini_explicit as gx
    book = PriceBook(sheet, when=PRICE_DATE)
    return gx, book


def test_gemini_explicit_break_even_read_rate():
    # 2.5 Pro: input 1.25, cached 0.125, storage 4.50 per MTok(-hour). k* = s/(i-c) + i/((i-c)·T):
    # T = 1 h: 4.50/1.125 + 1.25/1.125 = 4 + 1.111 = 5.111 reads an hour; T = 24 h: 4 + 0.0463
    gx, book = _gx()
    assert round(gx.break_even_reads("gemini-2.5-pro", book, 100_000, 1.0), 4) == Decimal("5.1111")
    assert round(gx.break_even_reads("gemini-2.5-pro", book, 100_000, 24.0), 4) == Decimal("4.0463")
    # above 200 K the long-context rates apply (2.50 / 0.25): 4.50/2.25 + 2.50/2.25 = 3.111
    assert round(gx.break_even_reads("gemini-2.5-pro", book, 300_000, 1.0), 4) == Decimal("3.1111")


def test_gemini_explicit_costs_per_design():
    # 100 K tokens read 6 times in the hour the cache is kept, 2.5 Pro:
    # none 6 x 0.125 = 0.75; implicit optimistic 0.125 + 5 x 0.0125 = 0.1875;
    # explicit 0.125 (creation) + 0.45 (storage) + 6 x 0.0125 = 0.65
    gx, book = _gx()
    c = gx.costs("gemini-2.5-pro", book, 100_000, 6, 1.0)
    assert c == {"none": Decimal("0.75"), "implicit_optimistic": Decimal("0.1875"), "explicit": Decimal("0.65")}


def test_gemini_explicit_storage_price_from_a_sheet():
    sheet = {"gemini-2.5-pro": {"input": 1.25, "output": 10, "cache_read": 0.125, "storage_mtok_hour": 9}}
    gx, book = _gx(sheet=sheet)
    assert round(gx.break_even_reads("gemini-2.5-pro", book, 100_000, 1.0), 4) == Decimal("9.1111")
    assert gx.storage("gemini-2.5-flash", PriceBook(when=PRICE_DATE))[0] * 1_000_000 == Decimal("1.00")


@pytest.mark.slow
def test_gemini_explicit_study_closed_form_matches_the_gemini_policy(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    def cli(*args):
        p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                           capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
        return p.returncode, p.stdout, p.stderr

    rc, out, err = cli("breakeven", "gemini-explicit", "--price-date", "2026-11-30", "--out", str(tmp_path),
                       "--format", "json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["model"] == "gemini-2.5-pro" and doc["check"]["points"] == 6
    assert doc["check"]["max_abs_diff_usd"] == 0.0
    rc, out, err = cli("breakeven", "gemini-explicit", "--model", "gemini-3.5-flash", "--out", str(tmp_path))
    assert rc == 2 and "storage_mtok_hour" in err and "Traceback" not in err
