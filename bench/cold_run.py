"""(e) Cold start: `prefixsim run scenarios/` wall time (report files written) and `prefixsim --help`.

Each is a fresh process, as a user runs it; the best of a few runs is printed. Import time for
`--help` is the whole process (python -X importtime shows where it goes); beside it `--help` ÷
`python -c pass` (the interpreter's own start-up), medians of alternating pairs. `--before TREE` times
another prefixsim tree's `--help` in the same sitting, alternating run for run, and prints the
ratio of the medians (the machine is shared: alternating pairs see the same load).

    python bench/cold_run.py [--small] [--before TREE] [--pairs 9]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parents[1]


def wall(args: list[str], repeat: int) -> float:
    return min(once(args, ROOT, ROOT) for _ in range(repeat))


def once(args: list[str], tree: Path, cwd: Path | None = None) -> float:
    """One fresh process of `tree`'s prefixsim: its folder first on sys.path, run from `cwd` (default a
    neutral folder: `python -c` puts the working directory first, which would shadow another tree)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                   cwd=cwd or tempfile.gettempdir(),
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def paired_help(before: Path, pairs: int) -> tuple[float, float]:
    """Medians of `--help` wall time, this tree and `before`, alternating (which goes first alternates too)."""
    mine: list[float] = []
    theirs: list[float] = []
    for i in range(pairs + 1):
        order = [(ROOT, mine), (before, theirs)] if i % 2 else [(before, theirs), (ROOT, mine)]
        for tree, out in order:
            t = once(["--help"], tree)
            if i:   # the first pair warms the file cache and compiles bytecode
                out.append(t)
    return statistics.median(mine), statistics.median(theirs)


def paired_pass(pairs: int) -> tuple[float, float]:
    """Medians of `prefixsim --help` and of `python -c pass` (the interpreter's own start-up, site and
    the editable install's finder included), in alternating pairs, after one untimed pair."""
    ours: list[float] = []
    bare: list[float] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for i in range(pairs + 1):
        for which in ((ours, bare) if i % 2 else (bare, ours)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"] if which is bare else
                           [sys.executable, "-c", "from prefixsim.cli import main; main()", "--help"],
                           cwd=tempfile.gettempdir(), check=True, env=env, stdout=subprocess.DEVNULL)
            if i:
                which.append(time.perf_counter() - t)
    return statistics.median(ours), statistics.median(bare)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="one scenario, one run (CI smoke run)")
    ap.add_argument("--before", type=Path, help="another prefixsim tree: its --help timed in the same pairs")
    ap.add_argument("--pairs", type=int, default=9)
    args = ap.parse_args(argv)
    if args.before is not None:
        now, then = paired_help(args.before.resolve(), args.pairs)
        print(f"prefixsim --help, medians of {args.pairs} alternating pairs: this tree {now * 1000:.0f} ms, "
              f"{args.before} {then * 1000:.0f} ms: {now / then:.2f}x")
        return [report("(e) prefixsim --help wall vs --before, ratio", now / then, "< 1", now < then)]
    repeat = 1 if args.small else 3
    target = "scenarios/seed-fork-chapter.yaml" if args.small else "scenarios/"
    with tempfile.TemporaryDirectory() as out:
        run = wall(["run", target, "--out", out], repeat)
    help_ = wall(["--help"], repeat)
    print(f"prefixsim run {target}: {run:.2f} s; prefixsim --help: {help_:.3f} s "
          f"({sum(1 for _ in (ROOT / 'scenarios').glob('*.yaml'))} shipped scenarios)")
    ours, bare = paired_pass(1 if args.small else args.pairs)
    print(f"prefixsim --help {ours * 1000:.0f} ms, python -c pass {bare * 1000:.0f} ms, medians of "
          f"{1 if args.small else args.pairs} alternating pairs: {ours / bare:.2f}x")
    return [report(f"(e) prefixsim run {target} wall, s", run, "<= 5", run <= 5),
            report("(e) prefixsim --help wall, s", help_, "<= 0.3", help_ <= 0.3),
            report("(e) prefixsim --help / python -c pass, wall", ours / bare, "<= 3", ours / bare <= 3)]


if __name__ == "__main__":
    main()
