"""(k) Start-up: `prefixsim replay` on the shared Claude Code data (tests/data/claude-code, 4.5 MB,
339 requests) against cacheeconomics on the same folder, paired runs in fresh processes.

cacheeconomics is not vendored: give the folder holding its `cacheeconomics` package (e.g. a clone's
`harness/`) with --peer, or only prefixsim's time is printed. Each pair runs the two back to back;
the median of the pairs' wall times, CPU times (user + system of the child) and ratios is printed
(the machine is shared: pairs see the same load).

Both run as an installed package does: with compiled bytecode (written under a temporary
PYTHONPYCACHEPREFIX, whatever PYTHONDONTWRITEBYTECODE says; `--no-bytecode` compiles every module
on every run instead), after one untimed warm-up run each. prefixsim's start-up memo
(prefixsim/_perf/diskcache.py: genai-prices' rates, counts of first messages) lives in a temporary
PREFIXSIM_CACHE_DIR: the first run, with it empty, is printed on its own ("first run"); the pairs
then find it filled, as every later replay of the same traffic does. `python -X importtime`
breakdowns: run the printed command by hand.

    python bench/startup.py [--small] [--peer ~/src/cacheeconomics/harness] [--pairs 9] [--before TREE]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "claude-code"


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process; run outside any tree (`python -c` puts the working
    directory first on sys.path, so a tree's own folder would win over PYTHONPATH)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="one pair (CI smoke run)")
    ap.add_argument("--peer", type=Path, help="folder holding the cacheeconomics package")
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--before", type=Path, help="another prefixsim tree (e.g. main) timed in the same pairs")
    ap.add_argument("--no-bytecode", action="store_true", help="compile every module on every run")
    args = ap.parse_args(argv)
    ours_cmd = [sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(DATA)]
    peer_cmd = [sys.executable, "-m", "cacheeconomics", "claude-code", "--root", str(DATA),
                "--target-id", "anthropic/direct"]
    with tempfile.TemporaryDirectory() as tmp:
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        if args.no_bytecode:
            base["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            base["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pyc")
        envs = {"ours": {**base, "PYTHONPATH": str(ROOT), "PREFIXSIM_CACHE_DIR": str(Path(tmp) / "ours")}}
        if args.before:
            envs["before"] = {**base, "PYTHONPATH": str(args.before.resolve()),
                              "PREFIXSIM_CACHE_DIR": str(Path(tmp) / "before")}
        if args.peer:
            envs["peer"] = {**base, "PYTHONPATH": str(args.peer.resolve())}
        cwd = {name: Path(tmp) for name in envs}
        if args.peer:
            cwd["peer"] = args.peer.resolve()
        cmds = {name: peer_cmd if name == "peer" else ours_cmd for name in envs}
        # The first run of each compiles its bytecode and (for prefixsim) fills its memo.
        first = {name: timed(cmds[name], envs[name], cwd[name]) for name in envs}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
        for _ in range(1 if args.small else args.pairs):
            for name in envs:
                times[name].append(timed(cmds[name], envs[name], cwd[name]))
    med = {name: (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)) for name, ts in times.items()}
    size = sum(p.stat().st_size for p in DATA.rglob("*.jsonl")) / 1e6
    bc = "no bytecode" if args.no_bytecode else "bytecode"
    load = os.getloadavg()[0]
    line = (f"{size:.1f} MB of transcripts ({bc}, load {load:.1f}): prefixsim replay {med['ours'][0]:.3f} s wall, "
            f"{med['ours'][1]:.3f} s CPU (median of {len(times['ours'])}; first run, empty memo: "
            f"{first['ours'][0]:.3f} s)")
    if "before" in med:
        line += f"; before ({args.before}) {med['before'][0]:.3f} s wall, {med['before'][1]:.3f} s CPU"
    if "peer" not in med:
        print(line + "; no --peer given, no ratio")
        return [report("(k) prefixsim replay, shared Claude Code data, s", med["ours"][0], "n/a", True)]
    print(line + f"; cacheeconomics claude-code {med['peer'][0]:.3f} s wall, {med['peer'][1]:.3f} s CPU")
    ratios = [a[0] / b[0] for a, b in zip(times["ours"], times["peer"])]
    cpu = statistics.median(a[1] / b[1] for a, b in zip(times["ours"], times["peer"]))
    r = statistics.median(ratios)
    return [report("(k) prefixsim ÷ cacheeconomics, shared Claude Code data", r, "<= 1.0", r <= 1.0,
                   f"pairs {', '.join(f'{x:.2f}' for x in ratios)}; CPU ratio {cpu:.2f}")]


if __name__ == "__main__":
    main()
