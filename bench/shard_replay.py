"""(l) `prefixsim replay --workers N`: a projects folder's sessions (one cache namespace each: its
own static prefix) sharded over N processes against the serial replay, byte-identical JSON.

The folder is bench/memory.py's synthetic one. Both runs are fresh `prefixsim replay --format json`
processes; the control is a CPU-bound loop in as many processes (what the shared machine gives).

    python bench/shard_replay.py [--small] [--mb 200] [--workers 2]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report
from memory import write_folder


def run(root: Path, workers: int) -> tuple[float, bytes, float]:
    """Wall seconds, stdout and CPU seconds (the child and its workers) of one replay."""
    # The start-up memo (prefixsim/_perf/diskcache.py) off in both: else the first run would fill it for the second.
    env = {**os.environ, "PREFIXSIM_CACHE_DIR": "off"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(root),
                        "--format", "json", "--workers", str(workers)], capture_output=True, check=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, p.stdout, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x += i * i
    return x


def control(workers: int, n: int = 3_000_000) -> float:
    t = time.perf_counter()
    _spin(n)
    one = time.perf_counter() - t
    t = time.perf_counter()
    with multiprocessing.Pool(workers) as pool:
        pool.map(_spin, [n] * workers)
    return one * workers / (time.perf_counter() - t)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a 3 MB folder, sharded below the size limit (CI)")
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "projects"
        size, sessions = write_folder(root, int((3 if args.small else args.mb) * 1e6), 20 if args.small else 150)
        t1, serial, c1 = run(root, 1)
        tn, sharded, cn = run(root, args.workers)
    same = serial == sharded
    ctl = control(args.workers)
    print(f"{size / 1e6:.0f} MB, {sessions} sessions: serial {t1:.1f} s ({c1:.2f} s CPU), --workers {args.workers} "
          f"{tn:.1f} s ({cn:.2f} s CPU in all processes), {'outputs identical' if same else 'OUTPUTS DIFFER'}; "
          f"control {ctl:.2f}x")
    assert same, "sharded replay differs from the serial one"
    return [report(f"(l) replay --workers {args.workers} speed-up", t1 / tn, "> 1 (control printed)", t1 / tn > 1,
                   f"control {ctl:.2f}x")]


if __name__ == "__main__":
    main()
