"""(k) Start-up: `prefixsim replay` on the shared Claude Code data (tests/data/claude-code, 4.5 MB,
339 requests) against cacheeconomics on the same folder, paired runs in fresh processes.

cacheeconomics is not vendored: give the folder holding its `cacheeconomics` package (e.g. a clone's
`harness/`) with --peer, or only prefixsim's time is printed. Each pair runs the two back to back;
the median of the pairs' times and of their ratios is printed (the machine is shared: pairs see the
same load). `python -X importtime` breakdowns: run the printed command by hand.

    python bench/startup.py [--small] [--peer ~/src/cacheeconomics/harness] [--pairs 9]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "claude-code"


def wall(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> float:
    """Seconds of one fresh process; run outside any tree (`python -c` puts the working directory
    first on sys.path, so a tree's own folder would win over PYTHONPATH)."""
    import tempfile

    cwd = cwd or Path(tempfile.gettempdir())
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="one pair (CI smoke run)")
    ap.add_argument("--peer", type=Path, help="folder holding the cacheeconomics package")
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--before", type=Path, help="another prefixsim tree (e.g. main) timed in the same pairs")
    args = ap.parse_args(argv)
    ours_cmd = [sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(DATA)]
    peer_cmd = [sys.executable, "-m", "cacheeconomics", "claude-code", "--root", str(DATA),
                "--target-id", "anthropic/direct"]
    peer_env = None
    if args.peer:
        peer_env = {**os.environ, "PYTHONPATH": str(args.peer.resolve())}
    before_env = None if not args.before else {**os.environ, "PYTHONPATH": str(args.before.resolve())}
    ours, peer, ratios, before = [], [], [], []
    for _ in range(1 if args.small else args.pairs):
        a = wall(ours_cmd, {**os.environ, "PYTHONPATH": str(ROOT)})
        ours.append(a)
        if before_env:
            before.append(wall(ours_cmd, before_env))
        if peer_env:
            b = wall(peer_cmd, peer_env, args.peer)
            peer.append(b)
            ratios.append(a / b)
    size = sum(p.stat().st_size for p in DATA.rglob("*.jsonl")) / 1e6
    line = f"{size:.1f} MB of transcripts: prefixsim replay {statistics.median(ours):.3f} s (median of {len(ours)})"
    if before:
        line += f", before ({args.before}) {statistics.median(before):.3f} s"
    if not peer:
        print(line + "; no --peer given, no ratio")
        return [report("(k) prefixsim replay, shared Claude Code data, s", statistics.median(ours), "n/a", True)]
    print(line + f", cacheeconomics claude-code {statistics.median(peer):.3f} s")
    r = statistics.median(ratios)
    return [report("(k) prefixsim ÷ cacheeconomics, shared Claude Code data", r, "<= 1.0", r <= 1.0,
                   f"pairs {', '.join(f'{x:.2f}' for x in ratios)}")]


if __name__ == "__main__":
    main()
