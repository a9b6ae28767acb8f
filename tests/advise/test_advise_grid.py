"""`prefixsim advise SCENARIO.yaml`: the design search of a scenario's `optimize:` dimensions. Each
design equals the same settings written as a variant and run alone; the cheapest is the minimum;
the critical path and the Pareto front follow their definitions (advise/grid.py) on constructed
cases; bad `optimize:` input is one line at its file:line, exit 2."""
import json
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from prefixsim.advise.grid import Design, critical_path, mark_pareto, search
from prefixsim.cli import cli, main
from prefixsim.scenario.loader import load_runs
from prefixsim.scenario.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "scenarios" / "agent-design-space.yaml"
DATE = "2026-11-30"


def _date():
    import datetime as dt

    return dt.date.fromisoformat(DATE)


# The example's eight designs written out by hand as variants: what `optimize:` must amount to.
SPAWN = {"fork": "fork: {children: 4, directive: 200, tool_call: 120, turns: 6, stagger: %s}",
         "subagent": "subagent: {children: 4, task: 1000, tool_call: 120, turns: 6, stagger: %s, system: 3000, "
                     "tools: {count: 6, size: 300}}"}


def _by_hand(tmp_path) -> Path:
    text = EXAMPLE.read_text()
    text = text[:text.index("\noptimize:") + 1]
    lines = ["variants:"]
    for ttl in ("5m", "1h"):
        for stagger in ("0", "hold"):
            for spawn in ("fork", "subagent"):
                name = f"ttl={ttl} stagger={'0s' if stagger == '0' else stagger} spawn={spawn}"
                lines += [f"  - name: {name}", f"    ttl: {ttl}", "    timeline:", "      - request: 2",
                          "      - " + SPAWN[spawn] % stagger, "      - wait: 7m", "      - request: 3"]
    p = tmp_path / "by-hand.yaml"
    p.write_text(text + "\n".join(lines) + "\n")
    return p


@pytest.fixture(scope="module")
def grid():
    return search([str(EXAMPLE)], _date())[0]


@pytest.mark.slow
def test_each_design_costs_what_the_same_variant_costs_alone(grid, tmp_path):
    alone = {r.variant: simulate(r, _date()) for r in load_runs(str(_by_hand(tmp_path)))}
    assert sorted(alone) == sorted(d.name for d in grid.designs) and len(alone) == 8
    for d in grid.designs:
        v = alone[d.name]
        assert d.cost_usd == v.cost_exact   # exact decimals, so equal to the cent and below
        assert round(d.cost_usd, 2) == round(v.cost_exact, 2)
        assert (d.critical_tokens, d.critical_requests) == critical_path(v.outcomes, 15.0)


def test_the_cheapest_design_is_the_minimum(grid):
    costs = sorted(d.cost_usd for d in grid.designs)
    assert grid.cheapest.cost_usd == costs[0] and costs[0] < costs[1]
    assert [d.cost_usd for d in grid.ranked()] == costs
    # 1h keeps the main conversation's prefix over the 7-minute break, and held siblings read the
    # first one's write: the cheapest design takes both.
    assert grid.cheapest.name.startswith("ttl=1h stagger=hold")
    # every design's critical path: the parent's 2 requests, one child's 6 turns, the 3 after the join
    assert {d.critical_requests for d in grid.designs} == {2 + 6 + 3}


def test_the_written_scenario_is_the_matching_design(grid):
    """`run` simulates the scenario as written (5m, stagger 0, fork): the design with those values."""
    written = simulate(load_runs(str(EXAMPLE))[0], _date())
    d = next(d for d in grid.designs if d.name == "ttl=5m stagger=0s spawn=fork")
    assert written.cost_exact == d.cost_usd


def _o(stream, t, uncached, written=0, read=0):
    usage = SimpleNamespace(input_tokens=uncached, cache_creation=written, cache_read=read)
    return SimpleNamespace(call=SimpleNamespace(stream=stream, t=t), usage=usage)


def test_critical_path_takes_the_heaviest_child_and_waits_only_for_finished_streams():
    # main 100 (+20 written) -> two children launched together -> main joins at 30 -> an unjoined child
    # at 40 beside main's next request. Pace 10: a request has finished 10 s after it starts.
    outs = [_o("main", 0, 100, written=20, read=999),
            _o("fork1.1", 10, 50), _o("fork1.1", 20, 60),   # 110 over two turns
            _o("fork1.2", 10, 200),                         # the heavier child: 200
            _o("main", 30, 5),                              # waits for both (20 + 10 <= 30, 10 + 10 <= 30)
            _o("side", 40, 1000),                           # spawned by main's request at 30
            _o("main", 40, 7)]                              # does not wait for `side` (40 + 10 > 40)
    # the heaviest chain: main 120 -> fork1.2 200 -> main 5 -> side 1000 (cache reads never count)
    assert critical_path(outs, 10.0) == (1325, 4)
    # without the side request the chain ends at main's last request: 120 + 200 + 5 + 7
    assert critical_path(outs[:5] + outs[6:], 10.0) == (332, 4)


def _d(name, cost, p95, tokens=0):
    return Design(name, (), Decimal(cost), tokens, 1, 0.0, 1, 0.0, ttft_p95_s=p95)


def test_pareto_front_of_cost_and_p95_ttft_on_a_constructed_case():
    ds = [_d("a", "1.00", 1.0), _d("b", "2.00", 0.5), _d("b2", "2.00", 0.5), _d("c", "3.00", 0.5),
          _d("d", "5.00", 0.1), _d("e", "6.00", 0.6), _d("f", "1.00", 1.2), _d("g", "4.99", 0.11),
          _d("none", "0.50", None), _d("h", "0.50", 3.0, tokens=10)]
    front = {d.name for d in mark_pareto(ds) if d.pareto}
    # c costs more than b at the same TTFT; e is worse than b on both; f has a's cost and a higher TTFT;
    # a design without a latency model compares as slower than any with one: h, at its cost, beats it
    assert front == {"a", "b", "b2", "d", "g", "h"}
    # the tokens no longer decide the front: h computes 10 uncached tokens, a none
    assert [d.name for d in sorted(mark_pareto(ds), key=lambda d: d.ttft)][:1] == ["d"]


def _advise(*args):
    return CliRunner().invoke(cli, ["advise", *args])


def _fails(capsys, *args):
    """(exit code, stderr lines) of `prefixsim advise ...` through the console entry point."""
    with pytest.raises(SystemExit) as e:
        main(["advise", *args])
    return e.value.code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.slow
def test_workers_give_the_serial_output_byte_for_byte(monkeypatch):
    from prefixsim.scenario import parallel

    monkeypatch.setattr(parallel, "POOL_COST", 0.0)   # start the pool even for eight small designs
    for fmt in ("json", "table", "csv"):
        serial = _advise(str(EXAMPLE), "--format", fmt, "--no-write", "--price-date", DATE)
        pooled = _advise(str(EXAMPLE), "--format", fmt, "--no-write", "--price-date", DATE, "--workers", "2")
        assert serial.exit_code == 0 and pooled.exit_code == 0, serial.output + pooled.output
        assert serial.output == pooled.output


def test_json_names_the_cheapest_and_the_front(grid):
    out = _advise(str(EXAMPLE), "--format", "json", "--no-write", "--price-date", DATE)
    doc = json.loads(out.output)["scenarios"][0]
    assert doc["cheapest"] == grid.cheapest.name == doc["designs"][0]["design"]
    assert doc["pareto_front"] == [d.name for d in grid.front]
    assert [x["design"] for x in doc["designs"] if x["pareto"]] == doc["pareto_front"]
    assert doc["designs"][0]["dimensions"] == dict(grid.cheapest.values)


@pytest.mark.slow
def test_report_files_are_written_whole_and_never_over_an_input(tmp_path):
    out = tmp_path / "reports"
    first = _advise(str(EXAMPLE), "--out", str(out), "--price-date", DATE)
    assert first.exit_code == 0, first.output
    folder = out / "agent-design-space-designs"
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    assert names == ["designs.csv", "designs.json", "designs.md", "pareto.png", "pareto.svg"]
    png = (folder / "pareto.png").read_bytes()
    assert png.startswith(b"\x89PNG") and _advise(str(EXAMPLE), "--out", str(out), "--price-date", DATE).exit_code == 0
    assert (folder / "pareto.png").read_bytes() == png   # the same chart, byte for byte
    # a scenario kept where its own report folder would go: refused before anything is written
    inside = tmp_path / "agent-design-space-designs"
    inside.mkdir()
    scenario = inside / "s.yaml"
    scenario.write_bytes(EXAMPLE.read_bytes())
    bad = _advise(str(scenario), "--out", str(tmp_path), "--price-date", DATE)
    assert "holds the input" in str(bad.exception) and scenario.read_bytes() == EXAMPLE.read_bytes()


BASE = """name: bad
model: claude-sonnet-4-5
base: {system: 2000}
timeline:
  - request: 1
  - fork: {children: 2}
"""


@pytest.mark.parametrize("tail,line,words", [
    ("optimize:\n  temperature: [0, 1]\n", 8, "temperature"),
    ("optimize:\n  ttl:\n    - 5m\n    - 2h\n", 10, "'5m' or '1h'"),
    ("optimize:\n  stagger: [0, soon]\n", 8, "soon"),
    ("optimize:\n  ttl:\n    - 1h\n    - 1h\n", 10, "1h is listed twice"),
    ("optimize:\n  ttl: []\n", 8, "at least 1"),
    ("optimize:\n  breakpoints: [system_and_tools, everywhere]\n", 8, "everywhere"),
    ("optimize:\n  spawn:\n    - fork\n    - subagent: {sytem: 4000}\n", 10, "sytem"),
    ("optimize:\n  spawn: [fork, thread]\n", 8, "thread"),
])
def test_bad_optimize_input_is_one_line_at_its_line(tmp_path, capsys, tail, line, words):
    p = tmp_path / "bad.yaml"
    p.write_text(BASE + tail)
    code, lines = _fails(capsys, str(p), "--no-write")
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{p}:{line}") and words in lines[0], lines


@pytest.mark.parametrize("text,line,words", [
    ("name: s\nmodel: claude-sonnet-4-5\ntimeline: [request: 2]\noptimize:\n  stagger: [0, hold]\n", 5,
     "no fork or subagent step"),
    ("name: s\nprovider: openai\nmodel: gpt-4o\ntimeline: [request: 2]\noptimize:\n  ttl: [5m, 1h]\n", 6,
     "changes nothing"),
    ("name: s\nmodel: claude-sonnet-4-5\ntimeline:\n  - request: 1\n  - fork: {children: 2, modify: [{remove_tool: Bash}]}"
     "\noptimize:\n  spawn: [fork, subagent]\n", 7, "modifies its children"),
])
def test_a_dimension_that_cannot_apply_is_refused(tmp_path, capsys, text, line, words):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    code, lines = _fails(capsys, str(p), "--no-write")
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"{p}:{line}") and words in lines[0], lines


def test_run_and_validate_take_a_scenario_with_optimize():
    assert CliRunner().invoke(cli, ["validate", str(EXAMPLE)]).exit_code == 0
    r = CliRunner().invoke(cli, ["run", str(EXAMPLE), "--no-write", "--price-date", DATE])
    assert r.exit_code == 0 and "default" in r.output


def test_hold_starts_the_other_siblings_together_one_ttft_later():
    from prefixsim.scenario.builder import Timeline

    for stagger, want in (("hold", [0, 2, 2, 2]), (3, [0, 3, 6, 9]), (0, [0, 0, 0, 0])):
        run = load_runs(str(EXAMPLE))[0]
        from prefixsim.scenario.grid import apply

        s = apply(run.settings, (("stagger", stagger),))
        calls = Timeline(s, str(ROOT / "scenarios"), None).play()
        t0 = calls[2].t   # after the parent's two requests
        firsts = [min(c.t for c in calls if c.stream == f"fork1.{i}") - t0 for i in range(1, 5)]
        assert firsts == want


def test_dask_executor_sends_the_designs(monkeypatch):
    """--executor dask maps each design over the cluster (here an in-process stand-in for
    distributed.Client with its map/gather calls): the same output as a serial run."""
    from prefixsim.scenario import parallel

    class Client:
        def __init__(self, address):
            assert address == "tcp://scheduler:8786"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, *columns, pure=True, **kwargs):
            return [fn(*args, **kwargs) for args in zip(*columns)]

        def gather(self, futures):
            return futures

    monkeypatch.setattr(parallel, "dask_client", lambda executor, scheduler: Client if executor == "dask" else None)
    args = (str(EXAMPLE), "--format", "json", "--no-write", "--price-date", DATE)
    serial = _advise(*args)
    on_dask = _advise(*args, "--executor", "dask", "--scheduler", "tcp://scheduler:8786")
    assert on_dask.exit_code == 0, on_dask.output
    assert on_dask.output == serial.output


def test_validate_checks_the_designs_and_run_says_where_they_are_searched(tmp_path, capsys):
    p = tmp_path / "s.yaml"
    p.write_text("name: s\nmodel: claude-sonnet-4-5\ntimeline: [request: 2]\noptimize:\n  ttl: [5m, 5m]\n")
    with pytest.raises(SystemExit) as e:
        main(["validate", str(p)])
    assert e.value.code == 2 and f"{p}:5:13: optimize.ttl: 5m is listed twice" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["run", str(EXAMPLE), "--no-write", "--price-date", DATE])
    assert e.value.code == 0
    cap = capsys.readouterr()   # the answer is the search's (test_run_answers pins it), and says so itself
    assert "best of 8 designs: ttl=1h stagger=hold spawn=subagent" in cap.out and not cap.err.strip()


@pytest.mark.slow
def test_chart_option_writes_the_pareto_chart(tmp_path):
    out = tmp_path / "reports"
    r = _advise(str(EXAMPLE), "--out", str(out), "--chart", str(tmp_path / "c.png"), "--price-date", DATE)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.png").read_bytes() == (out / "agent-design-space-designs" / "pareto.png").read_bytes()


def test_spawn_carries_what_both_kinds_have_and_stagger_wins():
    from prefixsim.scenario.grid import apply

    run = load_runs(str(EXAMPLE))[0]   # fork: {children: 4, directive: 200, tool_call: 120, turns: 6}
    sub = apply(run.settings, (("spawn", "subagent"),)).timeline[1].subagent
    assert (sub.children, sub.turns, sub.tool_call, sub.task, sub.stagger) == (4, 6, 120, 200, 0.0)
    assert sub.system == 1500   # a sub-agent's own prompt: its default unless the mapping sets it
    both = apply(run.settings, (("stagger", "hold"), ("spawn", {"subagent": {"stagger": 5, "system": 3000}})))
    sub = both.timeline[1].subagent
    assert (sub.stagger, sub.system) == ("hold", 3000)
    back = apply(both, (("spawn", "fork"),)).timeline[1].fork
    assert (back.children, back.directive, back.stagger) == (4, 200, "hold")


def test_a_scenario_without_optimize_or_mixed_with_traffic_is_refused(capsys):
    plain = str(ROOT / "scenarios" / "ttl-expiry.yaml")
    code, lines = _fails(capsys, plain, "--no-write")
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"{plain}:4: no `optimize:` dimensions")
    log = str(ROOT / "tests" / "fixtures" / "advise" / "system-timestamp.jsonl")
    code, lines = _fails(capsys, str(EXAMPLE), log, "--no-write")
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"{log}: a design search takes scenario files")


SMALL = """name: bp
model: claude-sonnet-4-5
base: {tools: {count: 8, size: 400}, system: 3000, history: {turns: 4}}
timeline:
  - request: 3
  - wait: 6m
  - request: 2
"""


def test_breakpoints_designs_equal_the_same_variants(tmp_path):
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(SMALL + "optimize:\n  breakpoints: [none, system_and_tools, [tools, system, last_message]]\n"
                                  "  ttl: [5m, 1h]\n")
    hand = tmp_path / "hand.yaml"
    hand.write_text(SMALL + "variants:\n" + "".join(
        f"  - {{name: 'ttl={t} breakpoints={n}', breakpoints: {b}, ttl: {t}}}\n"
        for n, b in (("none", "none"), ("system_and_tools", "system_and_tools"),
                     ("tools+system+last_message", "[tools, system, last_message]")) for t in ("5m", "1h")))
    g = search([str(grid_file)], _date())[0]
    alone = {r.variant: simulate(r, _date()) for r in load_runs(str(hand))}
    assert sorted(alone) == sorted(d.name for d in g.designs)
    for d in g.designs:
        assert d.cost_usd == alone[d.name].cost_exact
    # no breakpoints: nothing is read, so every request is on the path and computes its whole prompt
    for ttl in ("5m", "1h"):
        none = next(d for d in g.designs if d.name == f"ttl={ttl} breakpoints=none")
        outs = alone[none.name].outcomes
        assert none.critical_tokens == sum(o.usage.prompt_tokens for o in outs) and none.critical_requests == 5
