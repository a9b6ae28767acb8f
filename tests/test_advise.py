from decimal import Decimal

from conftest import data_file

from prefixsim import sources
from prefixsim.advise import advise
from prefixsim.replay import Variant, compare, replay


def _traffic():
    return sources.open_many([str(data_file("claude-code", "spotter", "short.jsonl"))], None, errors=[])


def test_ttl_saving_equals_what_if_replay():
    t = _traffic()
    a = advise(t)
    base = replay(t, Variant())
    assert a.total_usd == sum((r.cost_predicted for r in base.rows), Decimal(0))
    assert sum(c for _, _, c in a.by_cause) == a.total_usd
    for rec in a.recommendations:
        ttl = rec.change.split("=")[1]
        assert rec.saved_usd == -compare(base, replay(t, Variant(ttl=ttl))).total.cost_delta > 0


def test_no_replay_no_recommendation():
    t = _traffic()
    same = replay(t, Variant())
    assert advise(t, run=lambda traffic, v: same).recommendations == ()


def test_cli_json_matches_library():
    import json

    from click.testing import CliRunner

    from prefixsim.cli import cli
    t = _traffic()
    a = advise(t)
    out = CliRunner().invoke(cli, ["advise", "--format", "json", str(data_file("claude-code", "spotter", "short.jsonl"))])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["predicted_cost_usd"] == float(a.total_usd)
    assert [r["change"] for r in doc["recommendations"]] == [r.change for r in a.recommendations]
