"""(g) Scale-out: a sweep run serially and with --workers on all local cores; same output, less wall.

A sweep of 8 seeds (8 different sessions of ~200 requests each) runs through `prefixsim.api.run_paths`
serially, then with `workers=0` (one joblib process per core). The JSON of both must be identical;
the figure is the speed-up (process start-up and imports included, which is what a user waits for;
each run is a fresh process, so neither finds the other's memos).
Beside it, a control: the speed-up of a pure-Python loop in as many processes, which is what the
machine gives at that moment (a shared machine's other load takes its share).

    python bench/scaleout.py [--small]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parents[1]

SCENARIO = """name: bench-scaleout
model: claude-sonnet-4-5
tokenizer: cl100k_base
seed: ${{seed}}
base:
  tools: {{count: 12, size: 250}}
  system: 2000
timeline:
  - request: {{turns: {turns}, user: 80, assistant: 200, tool_use: 60, tool_result: 400}}
  - wait: 6m
  - fork: {{children: 4, directive: 100, turns: 3}}
sweep: {{param: seed, values: {values}}}
"""


def _burn(n: int) -> float:
    t = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return time.perf_counter() - t


def control(workers: int, n: int = 10_000_000) -> float:
    """Speed-up of `workers` copies of a CPU-bound loop run at once over running them one by one."""
    from concurrent.futures import ProcessPoolExecutor

    alone = sum(_burn(n) for _ in range(workers))
    with ProcessPoolExecutor(workers) as ex:
        t = time.perf_counter()
        list(ex.map(_burn, [n] * workers))
        together = time.perf_counter() - t
    return alone / together


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="two small runs (CI smoke run)")
    args = ap.parse_args(argv)
    values = [1, 2] if args.small else list(range(1, 9))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sweep.yaml"
        path.write_text(SCENARIO.format(turns=5 if args.small else 300, values=values))
        out = {}
        for workers in (1, 0):
            # Each in a fresh process: in one, the serial run would leave its per-process memos (token
            # counts, generated texts) to the second, which would then not do the same work.
            code = ("import sys\nfrom prefixsim.api import run_paths\nfrom prefixsim.report.tables import json_text\n"
                    f"res = run_paths([{str(path)!r}], workers={workers})\n"
                    "sys.stdout.write(json_text({'scenarios': [r.to_json() for r in res]}))")
            env = {**os.environ, "PYTHONPATH": str(ROOT), "PREFIXSIM_CACHE_DIR": "off"}
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", code], cwd=d, env=env, capture_output=True, text=True, check=True)
            out[workers] = (time.perf_counter() - t, p.stdout)
    (t1, serial), (tn, parallel) = out[1], out[0]
    assert serial == parallel, "--workers changed the results"
    cores = os.cpu_count() or 1
    machine = control(cores, 1_000_000 if args.small else 10_000_000)
    print(f"{len(values)} runs: serial {t1:.1f} s, {cores} workers {tn:.1f} s; outputs identical; "
          f"control (CPU-bound loop in {cores} processes) {machine:.2f}x")
    return [report(f"(g) speed-up with {cores} local workers", t1 / tn, f"> 1 (machine gives {machine:.2f}x now)",
                   t1 / tn > 1)]


if __name__ == "__main__":
    main()
