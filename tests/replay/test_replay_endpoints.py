"""Claude on Vertex AI and Bedrock, replayed on that cloud at the endpoint its URL names, and a
scenario's `endpoint:` (issue 31, case 3). Regional and multi-region endpoints cost 10 % more than
global for Sonnet 4.5 and later (Anthropic's "Claude on Vertex AI" page; genai-prices' `aws`
regional rows). The log is constructed: one Sonnet 4.5 request of 100,000 uncached input and 9,000
output tokens, $0.4350 at global prices ($3 / $15), $0.4785 regional ($3.30 / $16.50)."""
import datetime as dt
import json
from decimal import Decimal

import pytest

from prefixsim.api import run_file
from prefixsim.errors import UserError
from prefixsim.replay import replay
from prefixsim.sources import load

VERTEX = "https://{host}aiplatform.googleapis.com/v1/projects/p/locations/{loc}/publishers/anthropic/models/" \
         "claude-sonnet-4-5@20250929:rawPredict"
BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/invoke"


def _log(tmp_path, url):
    body = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 10,
            "messages": [{"role": "user", "content": "Summarise the attached report. " * 50}]}
    line = {"url": url, "timestamp": "2026-11-30T10:00:00Z", "request": body,
            "response": {"usage": {"input_tokens": 100_000, "cache_creation_input_tokens": 0,
                                   "cache_read_input_tokens": 0, "output_tokens": 9_000}}}
    p = tmp_path / "cloud.jsonl"
    p.write_text(json.dumps(line) + "\n")
    return p


@pytest.mark.parametrize("loc,host,endpoint,cost", [
    ("global", "", "global", "0.4350"),
    ("us-east5", "us-east5-", "regional", "0.4785"),
    ("us", "us-", "multi-region", "0.4785"),
])
def test_a_vertex_replay_is_priced_at_the_endpoint_its_url_names(tmp_path, loc, host, endpoint, cost):
    recs = load(_log(tmp_path, VERTEX.format(host=host, loc=loc)))
    assert recs[0].provider == "vertex" and recs[0].call.request.endpoint == endpoint
    res = replay(recs)
    assert res.rows[0].cost_observed == Decimal(cost)
    if endpoint != "global":
        assert "x 1.1" in res.summary.price_source


@pytest.mark.parametrize("model,cost", [
    ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "0.4350"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "0.4785"),
    ("anthropic.claude-sonnet-4-5-20250929-v1:0", "0.4785"),
])
def test_a_bedrock_replay_is_priced_on_bedrock_at_its_profile(tmp_path, model, cost):
    recs = load(_log(tmp_path, BEDROCK.format(model=model)))
    assert recs[0].provider == "bedrock"
    assert replay(recs).rows[0].cost_observed == Decimal(cost)


SCENARIO = """\
name: vertex-endpoint
provider: {provider}
model: claude-sonnet-4-5
tokenizer: approx
{endpoint}base:
  system: 3000
timeline:
  - request: 2
"""


def test_a_scenario_names_its_endpoint_and_pays_its_premium(tmp_path):
    costs = {}
    for ep in ("", "global", "regional", "multi-region"):
        p = tmp_path / f"v{ep}.yaml"
        p.write_text(SCENARIO.format(provider="vertex", endpoint=f"endpoint: {ep}\n" if ep else ""))
        v = run_file(str(p), dt.date(2026, 11, 30)).variants[0]
        costs[ep] = sum((o.cost_usd for o in v.outcomes), Decimal(0))
    assert costs[""] == costs["global"]
    assert costs["regional"] == costs["multi-region"] == costs["global"] * Decimal("1.1")


def test_an_older_vertex_model_has_no_regional_premium():
    from prefixsim.core.pricing import PriceBook

    book = PriceBook(when=dt.date(2026, 11, 30))
    assert book.rates("claude-sonnet-4", "vertex", endpoint="regional").per_mtok() == \
        book.rates("claude-sonnet-4", "vertex", endpoint="global").per_mtok()


def test_an_endpoint_off_the_clouds_is_a_user_error(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text(SCENARIO.format(provider="anthropic", endpoint="endpoint: regional\n"))
    with pytest.raises(UserError) as e:
        run_file(str(p), dt.date(2026, 11, 30))
    assert "endpoint: regional applies to provider vertex or bedrock" in str(e.value)
