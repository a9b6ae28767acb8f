"""The critical path of a design, on hand-computed times (scenario/critical.py), and a scenario's
`latency:` section end to end."""
import datetime as dt
import json
import re

import pytest
from click.testing import CliRunner

from prefixsim.api import run_scenario
from prefixsim.cli import cli
from prefixsim.errors import UserError
from prefixsim.scenario.critical import critical_waits
from prefixsim.scenario.schema import Settings

DAY = dt.date(2026, 11, 30)


def _waits(timeline, streams, step_of, ttft):
    steps = Settings.model_validate({"timeline": timeline}).timeline
    return critical_waits(steps, streams, step_of, ttft)


FORK_OF_TWO = (["main", "fork1.1", "fork1.2", "main"], [0, 1, 1, 2], [2.0, 3.0, 1.5, 1.2])


@pytest.mark.parametrize("stagger,second_turn", [
    ("hold", 5.7),   # child 2 starts when child 1's response begins (3.0 s): max(3.0, 3.0 + 1.5) + 1.2
    (2, 4.7),        # child 2 starts 2 s after child 1: max(3.0, 2 + 1.5) + 1.2
    (0, 4.2),        # together: max(3.0, 1.5) + 1.2
])
def test_a_parent_waits_for_the_slowest_of_two_children(stagger, second_turn):
    timeline = [{"request": {}}, {"fork": {"children": 2, "stagger": stagger}}, {"request": {}}]
    assert _waits(timeline, *FORK_OF_TWO) == (2.0, pytest.approx(second_turn))


def test_children_not_joined_and_a_side_question_are_waits_of_their_own():
    timeline = [{"request": {}}, {"fork": {"children": 2, "join": False}}, {"request": {}}]
    assert _waits(timeline, *FORK_OF_TWO) == (2.0, 4.5, 1.2)
    btw = [{"request": {}}, {"btw": {}}, {"request": {}}]
    assert _waits(btw, ["main", "btw", "main"], [0, 1, 2], [2.0, 0.7, 1.0]) == (2.0, 0.7, 1.0)


def test_a_compaction_comes_before_the_next_turn_and_trailing_work_is_waited_for():
    timeline = [{"request": {}}, {"compact": {}}, {"request": {"turns": 2}}, {"fork": {"children": 1}}]
    got = _waits(timeline, ["main", "compact", "main", "main", "fork4.1"], [0, 1, 2, 2, 3], [2.0, 2.5, 1.0, 1.1, 3.0])
    assert got == (2.0, 3.5, 1.1, 3.0)


SCENARIO = """
name: latency-by-hand
model: claude-sonnet-4-5
provider: anthropic
latency: {overhead_s: 1, uncached_s_per_1k: 0, cached_s_per_1k: 0}
base: {system: 2000}
timeline:
  - request: {}
  - fork: {children: 2}
variants:
  - name: held
  - name: slow reads
    latency: {overhead_s: 0, uncached_s_per_1k: 0, cached_s_per_1k: 1}
"""


def test_inline_coefficients_give_the_hand_figures():
    res = run_scenario(SCENARIO, DAY)
    held = res.variants[0]
    # every request 1 s; the children held: 1 + 1 (child 2 waits for child 1's first token)
    assert held.latency.ttft == (1.0, 1.0, 1.0) and held.latency.waits == (1.0, 2.0)
    s = held.summary()
    assert (s["ttft_p50_s"], s["ttft_p95_s"], s["wait_p50_s"], s["wait_p95_s"]) == (1.0, 1.0, 1.5, 1.95)
    assert [r["ttft_s"] for r in held.rows()] == [1.0, 1.0, 1.0]
    assert held.assumptions["latency"].startswith("claude-sonnet-4-5: 1 s + 0 s/1K uncached + 0 s/1K cached "
                                                  "(the scenario's latency: section)")
    slow = res.variants[1]
    reads = [r["cache_read_input_tokens"] / 1000 for r in slow.rows()]
    assert slow.latency.ttft == pytest.approx(tuple(reads))


def test_the_default_is_the_family_default_and_a_fitted_file_is_read(tmp_path):
    plain = SCENARIO.replace("latency: {overhead_s: 1, uncached_s_per_1k: 0, cached_s_per_1k: 0}\n", "")
    v = run_scenario(plain, DAY).variants[0]
    first = v.rows()[0]
    # 0.728 + 0.108 x (uncached + written)/1K, nothing read on the first request
    assert first["ttft_s"] == pytest.approx(0.728 + 0.108 * first["cache_creation_input_tokens"] / 1000, abs=1e-3)
    fitted = {"format": "prefixsim-latency", "version": 1,
              "models": {"claude-sonnet-4-5": {"overhead_s": 3, "uncached_s_per_1k": 0, "cached_s_per_1k": 0}}}
    (tmp_path / "fitted.json").write_text(json.dumps(fitted))
    (tmp_path / "s.yaml").write_text(plain.replace("base:", "latency: {from: fitted.json}\nbase:"))
    got = run_scenario(str(tmp_path / "s.yaml"), DAY).variants[0]
    assert got.latency.ttft == (3.0, 3.0, 3.0) and got.latency.waits == (3.0, 6.0)


def test_a_fitted_file_without_the_model_or_of_another_shape_is_one_line_at_the_key(tmp_path):
    (tmp_path / "fitted.json").write_text(json.dumps({"format": "prefixsim-latency", "version": 1, "models": {
        "gpt-4o": {"overhead_s": 3, "uncached_s_per_1k": 0, "cached_s_per_1k": 0}}}))
    (tmp_path / "bad.json").write_text("{}")
    for name, says in (("fitted.json", "latency: no model fitted for claude-sonnet-4-5 (the file fits: gpt-4o)"),
                       ("bad.json", "not a fitted latency model")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(SCENARIO.replace("latency: {overhead_s: 1, uncached_s_per_1k: 0, cached_s_per_1k: 0}",
                                         f"latency: {{from: {name}}}"))
        with pytest.raises(UserError) as e:   # the CLI prints it as one line and exits 2 (cli.main)
            run_scenario(str(path), DAY)
        assert str(e.value).startswith(f"{path}:5:1: ") and says in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(UserError, match=r"<scenario>:5:11: latency.overhead_s: -1 is too small \(at least 0.0\)"):
        run_scenario(SCENARIO.replace("overhead_s: 1,", "overhead_s: -1,"), DAY)


def test_every_shipped_scenario_reports_ttft_for_each_design():
    out = CliRunner().invoke(cli, ["run", "scenarios/", "--no-write", "--price-date", str(DAY)]).output
    # each scenario's block, from its name line (a lone comparison has no title in a terminal)
    tables = re.split(r"^\S+  \(scenarios/\S+\.yaml\)$", out, flags=re.M)[1:]
    assert len(tables) == 12 and all("TTFT" in t.split("\n\n")[0] for t in tables)
    assert max(len(line) for line in out.splitlines()) <= 120
