"""(e) Cold start: `prefixsim run scenarios/` wall time (report files written) and `prefixsim --help`.

Each is a fresh process, as a user runs it; the best of a few runs is printed. Import time for
`--help` is the whole process (python -X importtime shows where it goes); beside it `--help` ÷
`python -c pass` (the interpreter's own start-up), medians of alternating pairs. `--before TREE` times
another prefixsim tree's `--help` in the same sitting, alternating run for run, and prints the
ratio of the medians (the machine is shared: alternating pairs see the same load). `--peer DIR`
times `python -m prefixsim --help` against `python -m cacheeconomics --help` (the package in DIR,
e.g. a clone's `harness/`), same interpreter, alternating pairs, and prints the median of the pairs'
ratios (target <= 1.3); without it that row is not measured.

The paired runs use compiled bytecode on every side, as an installed package does: written under a
temporary PYTHONPYCACHEPREFIX (whatever PYTHONDONTWRITEBYTECODE says, and nothing written into
either tree), compiled by the untimed first pair.

    python bench/cold_run.py [--small] [--before TREE] [--peer DIR [--peer-module NAME]] [--pairs 9]
"""
from __future__ import annotations

import argparse
import functools
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
    """Least wall time of `repeat` fresh processes of this tree's prefixsim, run from the tree, in the
    environment as it is (bytecode as it finds it)."""
    def once() -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args], cwd=ROOT,
                       check=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t

    return min(once() for _ in range(repeat))


@functools.cache
def pyc() -> str:
    """The paired runs' bytecode folder, for this sitting (removed when the interpreter exits)."""
    return tempfile.TemporaryDirectory(prefix="cold_run_pyc").name   # kept alive by the cache


def timed(cmd: list[str], tree: Path) -> float:
    """Wall time of one fresh process with `tree` first on sys.path and compiled bytecode (PYC), run
    from a neutral folder (`python -c` and `-m` put the working directory first)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": pyc()}
    t = time.perf_counter()
    subprocess.run(cmd, cwd=tempfile.gettempdir(), check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def paired(a: tuple[list[str], Path], b: tuple[list[str], Path], pairs: int) -> tuple[list[float], list[float]]:
    """Wall times of `a` and `b` (command, tree), in alternating pairs (which goes first alternates
    too), after one untimed pair (it compiles the bytecode and warms the file cache)."""
    ta: list[float] = []
    tb: list[float] = []
    for i in range(pairs + 1):
        for (cmd, tree), out in ([(a, ta), (b, tb)] if i % 2 else [(b, tb), (a, ta)]):
            t = timed(cmd, tree)
            if i:
                out.append(t)
    return ta, tb


HELP_C = [sys.executable, "-c", "from prefixsim.cli import main; main()", "--help"]


def paired_help(before: Path, pairs: int) -> tuple[float, float]:
    """Medians of `--help` wall time, this tree and `before`."""
    mine, theirs = paired((HELP_C, ROOT), (HELP_C, before), pairs)
    return statistics.median(mine), statistics.median(theirs)


def paired_pass(pairs: int) -> tuple[float, float]:
    """Medians of `prefixsim --help` and of `python -c pass` (the interpreter's own start-up, site and
    the editable install's finder included)."""
    ours, bare = paired((HELP_C, ROOT), ([sys.executable, "-c", "pass"], ROOT), pairs)
    return statistics.median(ours), statistics.median(bare)


def peer_module(folder: Path) -> str:
    """The one package in `folder` that `python -m` runs (it has a __main__.py)."""
    found = sorted(p.parent.name for p in folder.glob("*/__main__.py"))
    if len(found) != 1:
        raise SystemExit(f"--peer {folder}: {len(found)} packages with a __main__.py ({found}); name one with --peer-module")
    return found[0]


def peer_row(folder: Path, module: str | None, pairs: int) -> dict:
    """`python -m prefixsim --help` ÷ `python -m <peer> --help`: the median of the pairs' ratios."""
    module = module or peer_module(folder)
    ours, theirs = paired(([sys.executable, "-m", "prefixsim", "--help"], ROOT),
                          ([sys.executable, "-m", module, "--help"], folder), pairs)
    ratios = [a / b for a, b in zip(ours, theirs)]
    r = statistics.median(ratios)
    print(f"python -m prefixsim --help {statistics.median(ours) * 1000:.0f} ms, python -m {module} --help "
          f"{statistics.median(theirs) * 1000:.0f} ms ({folder}), medians of {pairs} alternating pairs, "
          f"bytecode, load {os.getloadavg()[0]:.2f}")
    return report(f"(e) prefixsim --help / {module} --help, wall (python -m, paired)", r, "<= 1.3", r <= 1.3,
                  f"pairs {', '.join(f'{x:.2f}' for x in ratios)}")


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="one scenario, one run (CI smoke run)")
    ap.add_argument("--before", type=Path, help="another prefixsim tree: its --help timed in the same pairs")
    ap.add_argument("--peer", type=Path, help="folder holding the peer's package (cacheeconomics): its --help "
                                              "timed against prefixsim's, both `python -m`, in the same pairs")
    ap.add_argument("--peer-module", help="the peer's package (default: the one in --peer with a __main__.py)")
    ap.add_argument("--pairs", type=int, default=9)
    args = ap.parse_args(argv)
    if args.before is not None or args.peer is not None:   # only the paired rows asked for
        rows = []
        if args.before is not None:
            now, then = paired_help(args.before.resolve(), args.pairs)
            print(f"prefixsim --help, medians of {args.pairs} alternating pairs: this tree {now * 1000:.0f} ms, "
                  f"{args.before} {then * 1000:.0f} ms: {now / then:.2f}x (load {os.getloadavg()[0]:.2f})")
            rows.append(report("(e) prefixsim --help wall vs --before, ratio", now / then, "< 1", now < then))
        if args.peer is not None:
            rows.append(peer_row(args.peer.resolve(), args.peer_module, args.pairs))
        return rows
    repeat = 1 if args.small else 3
    target = "scenarios/seed-fork-chapter.yaml" if args.small else "scenarios/"
    with tempfile.TemporaryDirectory() as out:
        run = wall(["run", target, "--out", out], repeat)
    help_ = wall(["--help"], repeat)
    print(f"prefixsim run {target}: {run:.2f} s; prefixsim --help: {help_:.3f} s "
          f"({sum(1 for _ in (ROOT / 'scenarios').glob('*.yaml'))} shipped scenarios)")
    ours, bare = paired_pass(1 if args.small else args.pairs)
    print(f"prefixsim --help {ours * 1000:.0f} ms, python -c pass {bare * 1000:.0f} ms, medians of "
          f"{1 if args.small else args.pairs} alternating pairs, bytecode: {ours / bare:.2f}x "
          f"(load {os.getloadavg()[0]:.2f})")
    rows = [report(f"(e) prefixsim run {target} wall, s", run, "<= 5", run <= 5),
            report("(e) prefixsim --help wall, s", help_, "<= 0.3", help_ <= 0.3),
            report("(e) prefixsim --help / python -c pass, wall", ours / bare, "<= 3", ours / bare <= 3)]
    print("(e) prefixsim --help / cacheeconomics --help: not measured (--peer DIR)")
    return rows


if __name__ == "__main__":
    main()
