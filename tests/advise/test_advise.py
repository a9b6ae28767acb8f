"""`prefixsim advise`: attribution adds up, every recommendation is the saving of a replay of the
same traffic (and only exists because of it), and the breaker of a constructed log with a timestamp
in its system prompt is named, costed and fixed to the cent."""
import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import data_file

import prefixsim.advise as adv
from prefixsim import sources
from prefixsim.advise import advise
from prefixsim.advise.rewrite import Rewritten, hold
from prefixsim.cli import cli
from prefixsim.replay import WhatIf, compare, replay

ROOT = Path(__file__).resolve().parents[2]
STAMPED = ROOT / "tests" / "fixtures" / "advise" / "system-timestamp.jsonl"
SPOTTER = data_file("claude-code", "spotter", "4d5611e5-241a-462a-8d15-5122611a9569")
VIEWER = data_file("claude-code", "claude-code-viewer", "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
MTOK = Decimal(1_000_000)
# claude-sonnet-4-5, USD per MTok (genai-prices' bundled data; A-PR: 5m write 1.25x, read 0.1x input)
WRITE_5M, READ = Decimal("3.75"), Decimal("0.30")


def _open(*paths):
    return sources.open_many([str(p) for p in paths], None, errors=[])


def _spotter_files():
    return _open(*(data_file("claude-code", "spotter", f) for f in ("short.jsonl", "subagent.jsonl", "tool_heavy.jsonl")))


@pytest.mark.slow
def test_ttl_saving_equals_what_if_replay():
    t = _spotter_files()
    a = advise(t)
    base = replay(t, WhatIf())
    assert a.total_usd == sum((r.cost_predicted for r in base.rows), Decimal(0))
    assert sum(c for _, _, c in a.by_cause) == a.total_usd
    ttl = [r for r in a.recommendations if "ttl=" in r.change]
    assert [r.change for r in ttl] == ["write the cache at ttl=5m"]
    assert ttl[0].saved_usd == -compare(base, replay(t, WhatIf(ttl="5m"))).total.cost_delta > 0


@pytest.mark.slow
def test_attribution_adds_up_on_the_claude_code_session():
    t = _open(f"{SPOTTER}.jsonl", f"{SPOTTER}/")
    a = advise(t)
    at = a.attribution
    assert sum(c for _, _, c in at.by_class) == a.total_usd       # the token classes price the whole replay
    assert sum(x[3] for x in at.lost_by_cause) == sum(x[3] for x in at.lost_by_stream) == at.lost_usd
    lost = {k: v for k, _, _, v in at.lost_by_cause}
    assert lost["hit"] == lost["cold"] == 0   # a hit lost nothing; nothing earlier wrote a cold prefix
    assert lost["ttl_expired"] > 0 and lost["prefix_changed"] > 0
    # the breaker of the session: its history rewritten at history[1]; a transcript has no bytes to show
    (b,) = at.breakers
    assert (b.layer, b.path, b.requests) == ("messages", "history[1]", (74, 150))
    assert b.lost_usd == lost["prefix_changed"] + lost["compaction"]
    assert "not the bytes" in b.before
    assert any(c == "stop rewriting messages history[1]" for c, _ in a.untestable)


@pytest.mark.slow
def test_holding_siblings_saves_what_not_yet_available_lost():
    """claude-code-viewer: two sub-agents launched before their sibling's write was readable. Held
    until it is, each reads it: the replay's saving is the loss the timeless replay attributed."""
    t = _open(VIEWER)
    a = advise(t)
    (rec,) = a.recommendations
    assert rec.change == "hold parallel siblings until the first one's response begins"
    lost = {k: v for k, _, _, v in a.attribution.lost_by_cause}
    assert rec.saved_usd == lost["not_yet_available"] > 0
    assert rec.requests == (4, 5) and rec.rebuilds_avoided == 2
    base = replay(t)
    held = frozenset((r.stream, r.request_id) for r in base.rows if r.cause.kind == "not_yet_available")
    again = replay(Rewritten(t, hold(held), reorder=True))
    assert rec.saved_usd == -compare(base, again).total.cost_delta
    assert a.best == rec and a.waterfall == ((rec.change, rec.cost_usd),)


def _fixed_timestamp_log(tmp_path):
    """The constructed log with every request's system prompt carrying the first request's time."""
    lines = STAMPED.read_text().splitlines()
    first = json.loads(lines[0])["request"]["system"][0]["text"]
    out = []
    for line in lines:
        doc = json.loads(line)
        doc["request"]["system"][0]["text"] = first
        out.append(json.dumps(doc, separators=(",", ":")))
    p = tmp_path / "fixed.jsonl"
    p.write_text("\n".join(out) + "\n")
    return p


def test_timestamp_in_the_system_prompt_is_named_costed_and_fixed_to_the_cent(tmp_path):
    t = _open(STAMPED)
    a = advise(t)
    base = replay(t)
    # The breaker: the system layer at system[0], the bytes that differ are the time.
    (b,) = a.attribution.breakers
    assert (b.layer, b.path, b.requests) == ("system", "system[0]", tuple(range(1, 10)))
    assert "2026-11-30T10:05:20Z" in b.before and "2026-11-30T10:06:00Z" in b.after
    # Its cost, from the rule: request i could have read what request i-1 cached (all of its prompt)
    # at the read price instead of writing it at the 5m write price.
    cached = [r.predicted.cache_read + r.predicted.cache_creation for r in base.rows]
    assert all(r.predicted.input_tokens == 0 for r in base.rows)
    assert b.lost_usd == sum(cached[i - 1] for i in range(1, 10)) * (WRITE_5M - READ) / MTOK
    (span,) = a.volatile
    assert (span.path, span.kind, span.changes, span.compared) == ("system[0]", "timestamp", 9, 9)
    assert span.lost_usd == b.lost_usd
    # The fix, and its saving: the same log with the time held constant, replayed on its own.
    (rec,) = a.recommendations
    assert rec.change == "move the volatile timestamp at system[0] after the last breakpoint"
    fixed = replay(_open(_fixed_timestamp_log(tmp_path)))
    assert round(rec.saved_usd, 2) == round(a.total_usd - fixed.summary.cost_predicted_usd, 2)
    assert rec.saved_usd == a.total_usd - fixed.summary.cost_predicted_usd == b.lost_usd
    assert rec.rebuilds_avoided == 9 and a.best == rec
    from prefixsim.advise.output import fix
    assert fix(a, b.path, b.requests) == rec.change   # the breaker's row names its fix


@pytest.mark.slow
def test_no_replay_no_recommendation(monkeypatch):
    """Every recommendation exists only because its replay saved money: a verifier whose replays
    save nothing leaves no recommendation, no best combination and no waterfall."""
    for paths in ((STAMPED,), (VIEWER,)):
        t = _open(*paths)
        assert advise(t).recommendations
        real = adv.verify
        monkeypatch.setattr(adv, "verify", lambda traffic, base, cands, run=replay: adv.Recommendation(
            real(traffic, base, cands, run).change, Decimal(0), 0.0, 0, ""))
        a = advise(t)
        assert a.recommendations == () and a.best is None and a.waterfall == ()
        monkeypatch.undo()


def test_no_replay_no_recommendation_through_the_replay_itself():
    t = _open(STAMPED)
    same = replay(t, WhatIf())
    assert advise(t, run=lambda traffic, v: same).recommendations == ()


def test_reordered_tools_are_found_and_a_stable_order_is_verified(tmp_path):
    lines = STAMPED.read_text().splitlines()
    out = []
    first = json.loads(lines[0])["request"]["system"][0]["text"]
    for k, line in enumerate(lines):
        doc = json.loads(line)
        doc["request"]["system"][0]["text"] = first
        tools = doc["request"]["tools"]
        doc["request"]["tools"] = tools[k % 2:] + tools[:k % 2]   # the order flips every request
        out.append(json.dumps(doc, separators=(",", ":")))
    p = tmp_path / "reordered.jsonl"
    p.write_text("\n".join(out) + "\n")
    t = _open(p)
    a = advise(t)
    assert [(s.path, s.kind, s.changes) for s in a.volatile] == [("tools", "reordered tools", 9)]
    (b,) = a.attribution.breakers
    assert b.layer == "tools" and a.volatile[0].lost_usd == b.lost_usd > 0
    rec = next(r for r in a.recommendations if r.change == "keep tool and key order stable")
    sorted_log = tmp_path / "sorted.jsonl"
    docs = [json.loads(x) for x in out]
    for d in docs:
        d["request"]["tools"] = sorted(d["request"]["tools"], key=lambda x: json.dumps(x, sort_keys=True,
                                                                                        separators=(",", ":")))
    sorted_log.write_text("\n".join(json.dumps(d, separators=(",", ":")) for d in docs) + "\n")
    assert rec.saved_usd == a.total_usd - replay(_open(sorted_log)).summary.cost_predicted_usd > 0


def test_block_spans_name_the_kind_of_value():
    from prefixsim.advise.volatile import block_spans
    from prefixsim.model import Block, Layer

    def kinds(a, b, layer=Layer.SYSTEM):
        return [k for k, _, _ in block_spans(Block(layer, a.encode()), Block(layer, b.encode()))]

    assert kinds("now 2026-11-30T10:00:00Z ok", "now 2026-11-30T10:01:00Z ok") == ["timestamp"]
    assert kinds("id 0b7c2a3e-1111-4c2d-9e8f-123456789abc", "id 7d1e0f00-2222-4c2d-9e8f-123456789abc") == ["uuid"]
    assert kinds("turn 7 of the run", "turn 8 of the run") == ["counter"]
    assert kinds("req req_011CY4TRHLYkp2wm", "req req_011CY4orqBFAFCkv") == ["id"]
    assert kinds('{"a":1,"b":2}', '{"b":2,"a":1}') == ["reordered keys"]
    assert kinds("be brief", "be thorough") == ["edit"]


@pytest.mark.slow
def test_cli_formats_match_the_library(tmp_path):
    t = _open(STAMPED)
    a = advise(t)
    run = lambda *x: CliRunner().invoke(cli, ["advise", str(STAMPED), *x])  # noqa: E731
    out = run("--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["predicted_cost_usd"] == float(round(a.total_usd, 6))
    assert [r["change"] for r in doc["recommendations"]] == [r.change for r in a.recommendations]
    assert doc["recommendations"][0]["saved_usd"] == float(round(a.recommendations[0].saved_usd, 6))
    assert list(doc) == ["predicted_cost_usd", "lost_usd", "by_cause", "by_token_class", "lost_by_cause",
                         "lost_by_stream", "breakers", "volatile", "recommendations", "rejected", "not_testable",
                         "best", "waterfall"]
    assert doc["breakers"][0]["path"] == "system[0]" and doc["breakers"][0]["requests"] == list(range(1, 10))
    assert (doc["volatile"][0]["kind"], doc["volatile"][0]["changes"], doc["volatile"][0]["compared"]) == \
        ("timestamp", 9, 9)
    assert doc["waterfall"][-1]["cost_usd"] == float(round(a.best.cost_usd, 6))
    csv = run("--format", "csv").stdout.splitlines()
    assert csv[0] == "table,item,detail,requests,cost_usd,amount_usd,percent,rebuilds_avoided,evidence"
    assert any(x.startswith("what to change,move the volatile timestamp at system[0]") for x in csv)
    md = run("--format", "markdown").stdout
    assert "## what to change (each saving is a replay of the same traffic)" in md
    table = run("--chart", str(tmp_path / "w.png"))
    assert table.exit_code == 0 and "breakers (where prefixes part)" in table.output
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run("--format", "json").stdout == out.stdout   # deterministic


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    from prefixsim.cli import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model": "claude-sonnet-4-5", "messages": 7}\n')
    with pytest.raises(SystemExit) as e:
        main(["advise", str(bad)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(bad) in err
    with pytest.raises(SystemExit) as e:
        main(["advise", str(STAMPED), "--chart", str(STAMPED)])
    assert e.value.code == 2


@pytest.mark.slow
def test_report_has_a_what_to_change_section(tmp_path):
    from prefixsim.report.build import build_report

    a = advise(_open(STAMPED))
    small = tmp_path / "s.yaml"
    small.write_text("name: small\nprovider: prefix\ntokenizer: approx\nbase: {system: 300}\ntimeline: [request: 2]\n")
    _, md = build_report([str(small)], f"{tmp_path / 'out'}/", traffic=[str(STAMPED)])
    text = md.read_text()
    assert "## What to change" in text
    assert (f"The cheapest change the replays show is {a.best.change}: ${a.best.cost_usd:.4f}, "
            f"{a.best.percent:.1f}% less.") in text
    assert (tmp_path / "out" / "report_files" / "what-to-change-waterfall.png").read_bytes()[:4] == b"\x89PNG"


def _single_turn_log(tmp_path, name, fixed: bool, system_breakpoint: bool):
    """The constructed log as single-turn questions: each request is its last user message, cached
    there only; `fixed` holds the time constant, `system_breakpoint` adds a cache_control to the system."""
    lines = STAMPED.read_text().splitlines()
    first = json.loads(lines[0])["request"]["system"][0]["text"]
    out = []
    for line in lines:
        doc = json.loads(line)
        req = doc["request"]
        req["messages"] = req["messages"][-1:]
        sys0 = req["system"][0]
        if fixed:
            sys0["text"] = first
        if not system_breakpoint:
            del sys0["cache_control"]
        out.append(json.dumps(doc, separators=(",", ":")))
    p = tmp_path / name
    p.write_text("\n".join(out) + "\n")
    return p


def test_changes_that_only_save_together_are_found_together(tmp_path):
    """Questions under a system prompt with the time in it, cached only at the question: a breakpoint
    after the system prompt saves nothing while the time changes, holding the time still saves
    nothing without a breakpoint that caches the system prompt; together they do. The best
    combination's saving is the replay of the log written that way by hand."""
    t = _open(_single_turn_log(tmp_path, "q.jsonl", fixed=False, system_breakpoint=False))
    a = advise(t)
    assert a.recommendations == ()
    assert a.best is not None and a.best.change == ("move the volatile timestamp at system[0] after the last "
                                                    "breakpoint + add a cache breakpoint after the system prompt")
    by_hand = replay(_open(_single_turn_log(tmp_path, "fixed.jsonl", fixed=True, system_breakpoint=True)))
    assert a.best.saved_usd == a.total_usd - by_hand.summary.cost_predicted_usd > 0
    assert a.waterfall[-1] == ("add a cache breakpoint after the system prompt", a.best.cost_usd)


def test_padding_a_prefix_below_the_minimum_is_replayed(tmp_path):
    """A system prompt of ~700 tokens cached alone, under claude-sonnet-4-5's 1,024-token minimum
    (A-PC): nothing is cached. Padded to 1,024, the first request writes it and the next five read it:
    saved = 6 x S at the input price - 1,024 at the 5m write price - 5 x 1,024 at the read price."""
    from prefixsim.core.tokens import TokenCounter, get_tokenizer
    from prefixsim.model import Layer

    system = "Answer in one short sentence, naming the file you looked at. " * 45
    lines = [json.dumps({"id": f"q{k}", "timestamp": f"2026-11-30T10:00:{10 * k:02d}Z", "request": {
        "model": "claude-sonnet-4-5", "max_tokens": 64,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": f"Question {k}: where is the cache key built?"}]}})
        for k in range(6)]
    p = tmp_path / "short.jsonl"
    p.write_text("\n".join(lines) + "\n")
    t = _open(p)
    first = next(iter(t)).call.request
    count = TokenCounter(get_tokenizer("approx")).count   # the replay's tokenizer
    s = sum(count(b) for b in first.blocks if b.layer != Layer.MESSAGES)
    assert 0 < s < 1024
    a = advise(t)
    assert {k for k, *_ in a.attribution.lost_by_cause} == {"below_minimum"}
    rec = next(r for r in a.recommendations if r.change == "pad the prefix to the model's minimum cacheable length")
    input_price = Decimal(3)
    assert rec.saved_usd == (6 * s * input_price - 1024 * WRITE_5M - 5 * 1024 * READ) / MTOK


def test_a_stream_that_idles_past_5m_is_advised_1h_alone(tmp_path):
    """Two conversations: one asks every 40 s, the other every 10 minutes under its own system
    prompt. Writing the idle one's cache at 1h (the busy one as recorded) is replayed, and saves what
    the log written that way by hand saves."""
    lines = STAMPED.read_text().splitlines()
    first = json.loads(lines[0])["request"]["system"][0]["text"]

    def doc(line, user, stamp=None, ttl=None, prefix=""):
        d = json.loads(line)
        d["request"]["system"][0]["text"] = prefix + first
        d["request"]["metadata"] = {"user_id": user}
        d["id"] = f"{user}-{d['id']}"
        if stamp:
            d["timestamp"] = stamp
        if ttl:
            for m in [d["request"]["system"][0], d["request"]["messages"][-1]["content"][0]]:
                m["cache_control"] = {"type": "ephemeral", "ttl": ttl}
        return json.dumps(d, separators=(",", ":"))

    def write(name, idle_ttl):
        busy = [doc(x, "busy") for x in lines]
        idle = [doc(x, "idle", f"2026-11-30T10:{10 * k:02d}:05Z", idle_ttl, "You review code. ")
                for k, x in enumerate(lines[:4])]
        p = tmp_path / name
        p.write_text("\n".join(busy + idle) + "\n")
        return p

    t = _open(write("two.jsonl", None))
    a = advise(t)
    rec = next(r for r in a.recommendations if r.change == "write stream idle's cache at ttl=1h")
    by_hand = replay(_open(write("idle-1h.jsonl", "1h")))
    assert rec.saved_usd == a.total_usd - by_hand.summary.cost_predicted_usd > 0
    assert rec.rebuilds_avoided == 3
    whole = [r for r in a.recommendations if r.change == "write the cache at ttl=1h"]
    assert all(r.saved_usd < rec.saved_usd for r in whole)


def test_reordered_keys_are_found_and_a_stable_key_order_is_verified(tmp_path):
    """The first tool's keys come in another order every other request: the tools prefix parts
    there. Sorted keys (and tools in one order) are replayed; the saving equals, to the cent, the log
    written with sorted keys by hand (its token counts are the source's own)."""
    lines = STAMPED.read_text().splitlines()
    first = json.loads(lines[0])["request"]["system"][0]["text"]
    docs = []
    for k, line in enumerate(lines):
        d = json.loads(line)
        d["request"]["system"][0]["text"] = first
        if k % 2:
            t0 = d["request"]["tools"][0]
            d["request"]["tools"][0] = {key: t0[key] for key in ("input_schema", "description", "name")}
        docs.append(d)

    def write(name, ds):
        p = tmp_path / name
        p.write_text("\n".join(json.dumps(d, separators=(",", ":"), ensure_ascii=False) for d in ds) + "\n")
        return p

    t = _open(write("keys.jsonl", docs))
    a = advise(t)
    assert [(s.path, s.kind, s.changes) for s in a.volatile] == [("tools[0]", "reordered keys", 9)]
    rec = next(r for r in a.recommendations if r.change == "keep tool and key order stable")
    sk = lambda x: json.loads(json.dumps(x, sort_keys=True))  # noqa: E731
    for d in docs:
        d["request"]["tools"] = sorted((sk(x) for x in d["request"]["tools"]),
                                       key=lambda x: json.dumps(x, separators=(",", ":"), ensure_ascii=False))
        d["request"]["system"] = [sk(b) for b in d["request"]["system"]]
    by_hand = replay(_open(write("sorted.jsonl", docs)))
    assert round(rec.saved_usd, 2) == round(a.total_usd - by_hand.summary.cost_predicted_usd, 2)
    assert rec.saved_usd > Decimal("0.01")


@pytest.mark.slow
def test_changes_replayed_without_saving_are_listed_apart_never_recommended():
    t = _open(f"{SPOTTER}.jsonl", f"{SPOTTER}/")
    a = advise(t)
    base = replay(t)
    assert a.recommendations == () and a.best is None
    rejected = {r.change: r for r in a.rejected}
    # the main conversation at 1h: the idle gaps of 19 minutes are kept, the 1h writes cost more
    one_hour = -compare(base, replay(t, WhatIf(ttl="1h"))).total.cost_delta
    assert rejected["write the cache at ttl=1h"].saved_usd == one_hour < 0
    assert all(r.saved_usd <= 0 for r in a.rejected)


def test_token_classes_and_storage_price_the_whole_replay():
    """Gemini explicit caching: the storage of the CachedContent (8,000 tokens kept 1.75 h at $4.50
    per MTok-hour = $0.063) is a class of its own, so the classes add up to the replay's cost."""
    t = _open(ROOT / "tests" / "fixtures" / "gemini" / "explicit.jsonl")
    a = advise(t)
    classes = {k: usd for k, _, usd in a.attribution.by_class}
    assert classes["explicit cache storage"] == Decimal("0.063")
    assert sum(classes.values()) == a.total_usd == replay(t).summary.cost_predicted_usd


def test_the_advice_presenters_annotations_resolve():
    """Every annotation of the modules that present an `Advice` names something they import (the
    report section once returned a `Section` its module never imported)."""
    import inspect
    import typing

    from prefixsim.advise import output
    from prefixsim.report import advice

    for module in (output, advice):
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__:
                typing.get_type_hints(fn)
    assert typing.get_type_hints(advice.report_section)["return"].__name__ == "Section"
