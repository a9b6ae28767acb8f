"""Issue 32: a model without a price replays: predicting cache reads needs no price, so its costs are
shown as missing and the run names the model, never an abort (replay/unpriced.py)."""
import json

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError
from prefixsim.replay import replay
from prefixsim.replay.unpriced import Lenient
from prefixsim.sources import load

# Claude 3.5 Haiku on Vertex AI: genai-prices has no Vertex price for it (on Bedrock, where the issue met
# it, the replay is now priced at Bedrock's own rates, issue 31)
_URL = ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
        "claude-3-5-haiku@20241022:rawPredict")
_SYSTEM = "You answer questions about a long manual. " * 400


def _cassette(tmp_path, url=_URL):
    from ruamel.yaml import YAML

    def body(q):
        return {"anthropic_version": "vertex-2023-10-16", "max_tokens": 64,
                "system": [{"type": "text", "text": _SYSTEM, "cache_control": {"type": "ephemeral"}}],
                "messages": [{"role": "user", "content": q}]}
    usage = [{"input_tokens": 5, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 0, "output_tokens": 3},
             {"input_tokens": 6, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 3000, "output_tokens": 3}]
    inters = [{"request": {"method": "POST", "uri": url, "body": json.dumps(body(f"q{k}"))},
               "response": {"status": {"code": 200}, "body": {"string": json.dumps({"type": "message", "usage": u})}}}
              for k, u in enumerate(usage)]
    path = tmp_path / "haiku35.yaml"
    with path.open("w") as fh:
        YAML(typ="safe", pure=True).dump({"interactions": inters, "version": 1}, fh)
    return path


def test_an_invoke_model_cassette_of_an_unpriced_model_replays_with_its_costs_missing(tmp_path):
    # Claude 3.5 Haiku on Vertex rawPredict: the model is `claude-haiku-3-5`, which genai-prices does not
    # price there; the old code stopped the whole replay at "no price for model 'claude-haiku-3-5'" (exit 2)
    path = _cassette(tmp_path)
    res = CliRunner().invoke(cli, ["replay", str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    a, b = doc["requests"]
    assert a["predicted"]["cache_read_input_tokens"] == 0 and abs(b["predicted"]["cache_read_input_tokens"] - 3000) <= 30
    assert a["cost_predicted_usd"] is None and b["cost_observed_usd"] is None   # missing, not $0
    assert [(u["model"], u["requests"]) for u in doc["summary"]["unpriced"]] == [("claude-haiku-3-5", 2)]
    text = CliRunner().invoke(cli, ["replay", str(path)])
    assert text.exit_code == 0, text.output
    assert "No price for claude-haiku-3-5" in text.output and "missing (no price)" in text.output


def test_a_priced_and_an_unpriced_model_in_one_replay(tmp_path):
    from dataclasses import replace

    recs = load(_cassette(tmp_path))
    other = [replace(r, request_id=r.request_id + "b", call=replace(
        r.call, stream="other", request=replace(r.call.request, model="claude-sonnet-4-5"))) for r in recs]
    res = replay(recs + other)
    assert {(r.model, r.priced) for r in res.rows} == {("claude-haiku-3-5", False), ("claude-sonnet-4-5", True)}
    assert res.summary.cost_predicted_usd == sum(r.cost_predicted for r in res.rows if r.priced) > 0
    assert [(m, n) for m, _, n, _ in res.summary.unpriced] == [("claude-haiku-3-5", 2)]
    from prefixsim.report.replay import table_text

    assert "+ 2 unpriced" in table_text(res)


def test_a_price_sheet_row_that_is_wrong_still_stops_the_run():
    book = Lenient(PriceBook({"claude-sonnet-4-5": {"input": 3}}))   # no 'output': the sheet's mistake
    with pytest.raises(UserError, match="'input' and 'output'"):
        book.rates("claude-sonnet-4-5", "anthropic")
    assert book.rates("claude-haiku-3-5", "anthropic").cost(recs_usage()) == 0
    assert ("claude-haiku-3-5", "anthropic") in book.missing


def recs_usage():
    from prefixsim.model import Usage

    return Usage(input_tokens=100, cache_read=1000, output_tokens=10)


def test_another_providers_model_in_a_claude_code_transcript_is_priced_at_its_providers_rates(tmp_path):
    # Claude Code behind a proxy that serves another provider's model in Anthropic's format (a router
    # such as claude-code-router) logs that model, here `gpt-4.1`. Before: every cost missing ("no
    # price for gpt-4.1 on anthropic"); the model's own provider bills it, at its rates.
    from cc_fixtures import Transcript
    t = Transcript()
    t.user(0, "hello")
    t.call(0, "r0", 0, 20000, model="gpt-4.1")
    t.user(30, "more")
    t.call(30, "r1", 20000, 500, model="gpt-4.1")
    res = replay(load(t.write(tmp_path / "s.jsonl")))
    assert all(r.priced and r.cost_observed and r.cost_observed > 0 for r in res.rows)
    assert not res.summary.unpriced
    assert "gpt-4.1 is openai's model, sent in anthropic's API format: priced at openai's rates" in \
        res.summary.price_source
    assert 0 < res.rows[1].cost_observed < res.rows[1].cost_no_cache   # its reads at OpenAI's read price


def test_a_model_no_provider_prices_is_still_missing():
    book = Lenient(PriceBook())
    r = book.rates("acme-frontier-9", "anthropic")
    assert r.source.startswith("no price: acme-frontier-9 on anthropic") and book.missing
