"""The scenario builder's steps: one function per step kind the format accepts, in small modules."""
from pathlib import Path

from prefixsim.scenario.schema import STEP_KINDS
from prefixsim.scenario.steps import STEPS

SCENARIO = Path(__file__).resolve().parents[2] / "prefixsim" / "scenario"


def test_every_step_kind_has_its_function():
    # a kind the schema accepts but no module registers would fail only when a scenario used it
    assert sorted(STEPS) == sorted(STEP_KINDS)


def test_scenario_modules_stay_small():
    # issue 20: a step is added in its family's module; none of them grows past 400 lines
    sizes = {p.relative_to(SCENARIO).as_posix(): len(p.read_text().splitlines()) for p in SCENARIO.rglob("*.py")}
    assert max(sizes.values()) <= 400, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_one_default_for_how_siblings_launch():
    """Issue 34 item 5: a scenario's fork / subagent stagger defaulted to 0 s (siblings launched together,
    all but one missing) while `breakeven fork-vs-subagent` defaulted to 2 s "as Claude Code holds
    siblings until the first response begins". One default, SIBLING_LAUNCH (hold, CC-WF): the steps take
    it, and the study models it as a stagger of one time to first token."""
    import dataclasses

    from prefixsim.scenario.fields import SIBLING_LAUNCH
    from prefixsim.scenario.schema import ForkSpec, SubagentSpec
    from prefixsim.scenario.studyparams import ForkParams

    assert SIBLING_LAUNCH == "hold"
    assert ForkSpec().stagger == SubagentSpec().stagger == SIBLING_LAUNCH
    f = {x.name: x.default for x in dataclasses.fields(ForkParams)}
    assert f["stagger"] == f["ttft"]   # hold: the others start one time to first token after the first
