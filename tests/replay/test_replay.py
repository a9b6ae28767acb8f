import json

from cc_fixtures import session
from click.testing import CliRunner

from prefixsim.cli import cli, main
from prefixsim.replay import WhatIf, compare, naive_reads, replay, to_json
from prefixsim.sources import load_many


def result_for(tmp_path, variant=WhatIf(), with_agent=True):
    main_file = session(tmp_path, with_agent)
    return replay(load_many([main_file.with_suffix("")] if with_agent else [main_file]), variant)


def test_causes_on_the_fixture(tmp_path):
    res = result_for(tmp_path)
    by = {r.request_id: r for r in res.rows}
    assert by["r0"].cause.kind == "cold"
    assert by["r1"].predicted.cache_read == 20000 and not by["r1"].cause.kind
    assert by["r2"].cause.kind == "ttl_expired" and by["r2"].predicted.cache_read == 0
    assert by["c0"].predicted.cache_read == 20900            # the compaction call reads the conversation
    assert by["r3"].cause.kind == "compaction"
    assert by["r5"].cause.kind == "prefix_changed" and by["r5"].predicted.cache_read == 8000
    for r in res.rows:                                        # conservation against the observed size
        assert r.predicted.prompt_tokens == r.observed.prompt_tokens


def test_a_replayed_compaction_names_where_the_summary_parts_from_the_static_prefix(tmp_path):
    # Issue 37: the cause and its detail exactly on the replay path, as the scenario path's tests do
    # (tests/providers/test_causes_anthropic.py): the summary turn keeps tools and system (12,000
    # tokens) and parts at the first message group, 3 bytes in (the JSON of the replaced history).
    by = {r.request_id: r for r in result_for(tmp_path).rows}
    assert str(by["r3"].cause) == "compaction (messages layer, block 2 (tail after the last breakpoint), byte 3)"
    assert by["r3"].predicted.cache_read == 12000
    assert str(by["r4"].cause) == ""                        # the turn after the summary reads it


def test_naive_baseline_definition(tmp_path):
    res = result_for(tmp_path, with_agent=False)
    assert [r.naive_read for r in res.rows] == [0, 20000, 0, 20900, 12000, 12300]
    s = res.summary
    assert s.naive.exact == 4 and s.prefixsim.exact >= s.naive.exact


def test_what_if_1h_turns_the_expiry_into_a_hit(tmp_path):
    base = result_for(tmp_path)
    longer = result_for(tmp_path, WhatIf(ttl="1h"))
    assert {r.request_id: r for r in longer.rows}["r2"].predicted.cache_read == 20500
    cmp = compare(base, longer)
    assert cmp.total.rebuilds_variant == cmp.total.rebuilds_base - 1


def test_json_is_deterministic_and_has_the_contract_shape(tmp_path):
    main_file = session(tmp_path)
    runner = CliRunner()
    outs = [runner.invoke(cli, ["replay", str(main_file), "--format", "json"]) for _ in range(2)]
    assert outs[0].exit_code == 0, outs[0].output
    assert outs[0].output == outs[1].output
    doc = json.loads(outs[0].output)
    keys = {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
    for r in doc["requests"]:
        assert {"request_id", "timestamp", "stream", "model", "observed", "predicted", "cause"} <= r.keys()
        assert keys <= r["predicted"].keys() and keys <= r["observed"].keys()
    assert doc["summary"]["requests"] == 6 and "wape_naive" in doc["summary"]


def test_table_markdown_csv_and_what_if_output(tmp_path):
    main_file = session(tmp_path)
    runner = CliRunner()
    table = runner.invoke(cli, ["replay", str(main_file), "--ttl", "1h"])
    assert table.exit_code == 0, table.output
    assert "naive" in table.output and "What if ttl=1h" in table.output and "fewer rebuilds" in table.output
    md = runner.invoke(cli, ["replay", str(main_file), "--format", "markdown", "--requests"])
    assert md.output.startswith("| # | stream")
    money = runner.invoke(cli, ["replay", str(main_file), "--format", "markdown"]).output
    assert "| # | stream" not in money and "| cost | $" in money and "| TOTAL | 6 |" in money
    csv = runner.invoke(cli, ["replay", str(main_file), "--format", "csv", "--requests"])
    assert csv.output.splitlines()[0].startswith("index,request_id,timestamp,stream")
    by_day = runner.invoke(cli, ["replay", str(main_file), "--format", "csv"])   # the money table's rows
    assert by_day.output.splitlines()[0].startswith("day,requests,hit_rate,cost_usd")
    other = runner.invoke(cli, ["replay", str(main_file), "--model", "claude-sonnet-4-5", "--breakpoints", "last",
                                "--format", "json"])
    assert json.loads(other.output)["what_if"]["variant"]["model"] == "claude-sonnet-4-5"


def test_user_errors_exit_2_with_path_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sessionId": "s", "type": "user"}\n{oops\n')
    try:
        main(["replay", str(bad)])
    except SystemExit as e:
        assert e.code == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "Traceback" not in err


def test_naive_reads_split_by_model(tmp_path):
    res = result_for(tmp_path)
    recs = load_many([session(tmp_path / "b").with_suffix("")])
    assert len(naive_reads(recs)) == len(res.rows)
    assert to_json(res)["summary"]["observed_requests"] == len(res.rows)
