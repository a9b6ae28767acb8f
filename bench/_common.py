"""Helpers shared by the bench scripts: sessions built by the scenario builder, timing, printing."""
from __future__ import annotations

import shutil
import statistics
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


#: The start-up memo's three states a log replay is timed in (openai_log_throughput.py, jsonl_throughput.py).
MEMO_STATES = ("new log", "repeat", "first ever")


def memo_state_runs(trees: dict[str, str], replay_cmd: list[str], floor_cmd: list[str], floor_env: dict,
                    env: Callable[[str, Path | None], dict], timed: Callable, d: Path,
                    pairs: int) -> tuple[dict[str, float], dict[str, float]]:
    """Medians (wall, CPU) of the floor and of each tree's replay in each of MEMO_STATES, in `pairs`
    rounds whose order alternates: "new log" on a copy of the memo another log left (`d/other-NAME`),
    "repeat" on this log's own (`d/memo-NAME`), "first ever" on an empty one. `timed(cmd, env, cwd)`
    gives (wall, CPU, ...)."""
    times: dict[str, list[tuple[float, float]]] = {"floor": []}
    for i in range(pairs):
        runs = [("floor", floor_cmd, floor_env)]
        for name, tree in trees.items():
            shutil.copytree(d / f"other-{name}", d / f"new-{name}-{i}")
            runs += [(f"{name} new log", replay_cmd, env(tree, d / f"new-{name}-{i}")),
                     (f"{name} repeat", replay_cmd, env(tree, d / f"memo-{name}")),
                     (f"{name} first ever", replay_cmd, env(tree, d / f"empty-{name}-{i}"))]
        for what, cmd, e in (runs if i % 2 == 0 else runs[::-1]):
            wall, cpu = tuple(timed(cmd, e, d))[:2]
            times.setdefault(what, []).append((wall, cpu))
    return ({k: statistics.median(w for w, _ in v) for k, v in times.items()},
            {k: statistics.median(c for _, c in v) for k, v in times.items()})


def print_memo_states(trees: dict[str, str], wall: dict[str, float], cpu: dict[str, float]) -> None:
    """Each tree's replay in each memo state, against the floor."""
    for name, tree in trees.items():
        for case in MEMO_STATES:
            w, c = wall[f"{name} {case}"], cpu[f"{name} {case}"]
            print(f"  {name} ({tree}) replay, {case}: {w:.2f} s wall = {w / wall['floor']:.2f}x the floor; "
                  f"{c:.2f} s CPU = {c / cpu['floor']:.2f}x")
