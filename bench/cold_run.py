"""(e) Cold start: `prefixsim run scenarios/` wall time (report files written) and `prefixsim --help`.

Each is a fresh process, as a user runs it; the best of a few runs is printed. Import time for
`--help` is the whole process (python -X importtime shows where it goes).

    python bench/cold_run.py [--small]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parents[1]


def wall(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="one scenario, one run (CI smoke run)")
    args = ap.parse_args(argv)
    repeat = 1 if args.small else 3
    target = "scenarios/seed-fork-chapter.yaml" if args.small else "scenarios/"
    with tempfile.TemporaryDirectory() as out:
        run = wall(["run", target, "--out", out], repeat)
    help_ = wall(["--help"], repeat)
    print(f"prefixsim run {target}: {run:.2f} s; prefixsim --help: {help_:.3f} s "
          f"({sum(1 for _ in (ROOT / 'scenarios').glob('*.yaml'))} shipped scenarios)")
    return [report(f"(e) prefixsim run {target} wall, s", run, "<= 5", run <= 5),
            report("(e) prefixsim --help wall, s", help_, "<= 0.3", help_ <= 0.3)]


if __name__ == "__main__":
    main()
