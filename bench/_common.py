"""Helpers shared by the bench scripts: sessions built by the scenario builder, timing, printing."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Callable


def scenario_calls(yaml_text: str) -> list:
    """The calls a scenario's first run makes (the scenario builder's Timeline, as `prefixsim run`)."""
    from prefixsim.scenario.builder import Timeline
    from prefixsim.scenario.loader import load_json_file, load_runs

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.yaml"
        path.write_text(yaml_text)
        run = load_runs(str(path))[0]
        return Timeline(run.settings, run.base_dir, lambda rel: load_json_file(run, rel)).play()


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    """Least wall time of `repeat` runs (the least disturbed by other work on the machine), and the result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def report(name: str, value: float, target: str, met: bool, detail: str = "") -> dict:
    print(f"{name}: {value:.3g} (target {target}) {'MET' if met else 'NOT MET'}{'  ' + detail if detail else ''}")
    return {"name": name, "value": value, "target": target, "met": met}
