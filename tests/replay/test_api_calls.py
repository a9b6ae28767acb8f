"""`prefixsim.api` reaches what each command prints (issue 34 item 12): `replay`, `advise` and
`breakeven` as calls, giving the figures the CLI prints, and one name per column across run and
replay."""
import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import data_file

from prefixsim import api
from prefixsim.cli import cli
from prefixsim.errors import UserError
from prefixsim.scenario.results import REQUEST_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
VIEWER = str(data_file("claude-code", "claude-code-viewer", "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
WHEN = dt.date(2026, 11, 30)


def _cli(*args) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def test_replay_gives_the_commands_json_and_table():
    rep = api.replay(VIEWER, ttl="1h")
    assert rep.to_json() == json.loads(_cli("replay", VIEWER, "--ttl", "1h", "--format", "json"))
    assert rep.text(width=80) == _cli("replay", VIEWER, "--ttl", "1h", "--width", "80")
    assert rep.summary == rep.to_json()["summary"] and rep.summary["requests"] == len(rep.requests)
    assert len(rep.what_if_requests) == len(rep.requests)
    assert api.replay([VIEWER]).what_if is None and api.replay([VIEWER]).what_if_requests is None


def test_replay_repr_states_the_money():
    rep = api.replay(VIEWER, ttl="1h")
    s = rep.summary
    assert repr(rep) == (f"<Replayed: {s['requests']:,} requests, ${s['cost_observed_usd']:.4f} observed, "
                         f"${s['cost_predicted_usd']:.4f} predicted, what-if ttl=1h "
                         f"${float(round(rep.what_if.total.cost_variant, 4)):.4f}>")


def test_replay_columns_are_runs_columns_under_observed_and_predicted():
    """One name per column: a replay column is a run column, or one under `observed_`, `predicted_`
    or `naive_`, or a replay's own (where a request comes from, what it cost observed and predicted)."""
    cols = list(api.replay(VIEWER).requests.columns)
    own = {"index", "request_id", "timestamp", "cause_detail", "cost_observed_usd", "cost_predicted_usd"}
    for c in cols:
        bare = c.removeprefix("observed_").removeprefix("predicted_").removeprefix("naive_")
        assert c in own or bare in REQUEST_COLUMNS, c
    assert {"predicted_cache_write_5m_tokens", "predicted_cache_write_1h_tokens"} <= set(cols)
    run_cols = set(api.run_scenario("scenarios/ttl-expiry.yaml", WHEN).requests.columns)
    assert {"cache_write_5m_tokens", "cache_write_1h_tokens", "cache_read_input_tokens"} <= run_cols


def test_replay_of_nothing_and_of_a_bad_path_raise_user_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(UserError):
        api.replay(str(empty))
    with pytest.raises(UserError):
        api.replay(str(tmp_path / "missing.jsonl"))


def test_replay_skips_a_bad_line_and_names_it_unless_strict(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text(Path(VIEWER).read_text() + "{not json\n")
    rep = api.replay(str(f))
    assert [p.line for p in rep.skipped] == [len(Path(VIEWER).read_text().splitlines()) + 1]
    with pytest.raises(UserError):
        api.replay(str(f), strict=True)


@pytest.mark.slow
def test_advise_gives_what_the_command_prints():
    a = api.advise(VIEWER)
    assert api.advice_text(a, "json") == _cli("advise", VIEWER, "--format", "json")


def test_advise_on_a_scenario_runs_its_design_search(tmp_path):
    grids = api.advise(str(ROOT / "scenarios" / "agent-design-space.yaml"), price_date=WHEN)
    assert len(grids) == 1 and grids[0].designs


def test_breakeven_writes_nothing_unless_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    b = api.breakeven("fork-vs-subagent", params={"children": 5, "turns": [2, 3]}, price_date=WHEN)
    assert b.written == [] and list(tmp_path.iterdir()) == []
    assert b.check["ok"] and set(b.curve["children"]) == {5} and set(b.curve["turns"]) == {2, 3}
    assert json.loads(json.dumps(b.to_json())) == json.loads(_cli("breakeven", "fork-vs-subagent", "-p", "children=5", "-p", "turns=2,3",
                                          "--price-date", "2026-11-30", "--format", "json", "--out", str(tmp_path / "o")))
    out = api.breakeven("minimum", price_date=WHEN, out=str(tmp_path / "files"))
    assert sorted(p.name for p in out.written) == ["minimum.csv", "minimum.png", "minimum.svg"]
    assert all(p.exists() for p in out.written)


def test_breakeven_params_as_pairs_and_a_bad_one():
    a = api.breakeven("stagger", params=["children=3"], price_date=WHEN)
    b = api.breakeven("stagger", params={"children": 3}, price_date=WHEN)
    assert a.to_json() == b.to_json() and a.text() == b.text()
    with pytest.raises(UserError):
        api.breakeven("stagger", params={"childs": 3})
