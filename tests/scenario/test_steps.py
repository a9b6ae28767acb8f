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
