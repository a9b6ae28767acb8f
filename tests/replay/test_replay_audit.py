"""Rows recorded by their usage only (Record.audit): priced as observed, never simulated, left out of
the prediction figures, and shown as not available wherever a prediction would be."""
from dataclasses import replace
from decimal import Decimal

from prefixsim.model import Block, Call, Layer, Request, Usage
from prefixsim.replay import replay
from prefixsim.replay.output import to_json
from prefixsim.report.replay import table_text
from prefixsim.sources.record import Record

MODEL = "claude-sonnet-4-20250514"


def _rec(i, t, usage, audit, stream="s"):
    block = Block(Layer.MESSAGES, f"prompt {i}".encode(), "messages[0]", tokens=usage.prompt_tokens)
    call = Call(t=t, request=Request(model=MODEL, blocks=(block,)), stream=stream, label=f"r{i}",
                output_tokens=usage.output_tokens)
    return Record(call, f"r{i}", f"2025-12-02T10:00:{t:02.0f}Z", usage, "x.jsonl", i + 1, audit=audit)


def test_an_audited_row_is_priced_as_observed_and_left_out_of_the_prediction_figures():
    seen = Usage(input_tokens=10, cache_read=4000, cache_write_5m=200, output_tokens=50)
    res = replay([_rec(0, 0, Usage(input_tokens=5000, output_tokens=20), False), _rec(1, 10, seen, True)])
    row = res.rows[1]
    assert row.audit and row.observed == seen and row.predicted == Usage() and row.cost_predicted == 0
    assert row.cost_observed > 0 and row.naive_read is None
    s = res.summary
    assert s.audited == 1 and s.prefixsim.compared == 1
    # the observed figures stand beside the predicted ones over the same (predicted) rows
    assert s.cost_observed_usd == res.rows[0].cost_observed
    assert s.read_share_observed == 0
    text = " ".join(table_text(res, requests=True).split())
    assert "1 of 2 requests record usage only" in text and "audit: no prompt" in text
    doc = to_json(res)
    assert doc["requests"][1]["predicted"] is None and doc["requests"][1]["cost_predicted_usd"] is None
    assert doc["summary"]["audited_requests"] == 1 and doc["summary"]["cost_predicted_usd"] is not None


def test_an_audit_of_a_model_without_a_price_keeps_its_tokens_and_names_the_missing_cost():
    rec = _rec(0, 0, Usage(input_tokens=100, cache_read=900, output_tokens=5), True)
    rec = replace(rec, call=replace(rec.call, request=replace(rec.call.request, model="no-such-model-1")))
    res = replay([rec])
    assert res.rows[0].cost_observed is None and res.summary.cost_observed_usd == Decimal(0)
    assert "no price: no-such-model-1 on anthropic (its costs are missing)" in res.summary.price_source
    assert not res.rows[0].priced and [u[0] for u in res.summary.unpriced] == ["no-such-model-1"]
    assert res.summary.read_share_observed == 0.9


def test_an_audited_stream_whose_requests_have_no_price_shows_its_cost_missing_not_zero():
    priced = _rec(0, 0, Usage(input_tokens=100, cache_read=900, output_tokens=5), True)
    gone = _rec(1, 10, Usage(input_tokens=50, cache_read=1000, output_tokens=5), True, stream="t")
    gone = replace(gone, call=replace(gone.call, request=replace(gone.call.request, model="no-such-model-1")))
    other = _rec(2, 20, Usage(input_tokens=60, cache_read=1000, output_tokens=5), True, stream="t")
    text = table_text(replay([priced, gone, other]))
    stream_rows = {line.split()[0]: line for line in text.split("Observed hit rate by stream")[1].splitlines()[2:4]}
    assert stream_rows["s"].split()[-1].startswith("$") and "unpriced" not in stream_rows["s"]
    assert stream_rows["t"].endswith(" + 1 unpriced")
    alone = table_text(replay([replace(gone, call=replace(gone.call, stream="u"))]))
    (row,) = [line for line in alone.splitlines() if line.startswith("u ")]
    assert row.endswith("missing (no price)") and "$0.0000" not in row


def test_an_audit_whose_usage_its_models_rates_cannot_price_leaves_that_cost_missing_and_says_why():
    rec = replace(_rec(0, 0, Usage(input_tokens=100, cache_read=900, output_tokens=5), True), unpriced="audio tokens")
    res = replay([rec, _rec(1, 10, Usage(input_tokens=10, cache_read=1000, output_tokens=5), True)])
    gone, kept = res.rows
    assert not gone.priced and gone.cost_observed is None and gone.lost_usd is None
    assert kept.priced and kept.cost_observed > 0 and res.summary.cost_observed_usd == kept.cost_observed
    assert res.summary.unpriced == ((MODEL, "anthropic", 1, "tokens outside the text price classes: audio tokens"),)
    assert "1 request count audio tokens" in table_text(res)
    # a model nothing prices: the missing price is the reason, whatever its tokens
    none = replace(rec, call=replace(rec.call, request=replace(rec.call.request, model="no-such-model-1")))
    ((model, _, n, why),) = replay([none]).summary.unpriced
    assert (model, n) == ("no-such-model-1", 1) and not why.startswith("tokens outside")
