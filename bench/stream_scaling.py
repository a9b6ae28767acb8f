"""(j) Per-request replay time flat in the length of one stream and in the streams in flight.

One Claude Code session that never compacts (request i carries i history blocks) at 1 K and 20 K
requests, and 1,000 sessions of 20 requests one after another vs all in flight at once,
written with bench/memory.py's transcript writer and replayed in-process (`sources.open_many` +
`replay.replay`). Prints µs per request and the ratios against the ≤ 1.3 target.

    python bench/stream_scaling.py [--small] [--before TREE]
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report
from memory import write_session


def replay_time(root: Path) -> tuple[float, int]:
    from prefixsim import sources
    from prefixsim.replay import replay

    t = time.perf_counter()
    traffic = sources.open_many([str(root)], None, errors=[])
    n = len(replay(traffic).rows)
    return time.perf_counter() - t, n


def one_stream(d: Path, requests: int) -> Path:
    root = d / f"single{requests}"
    root.mkdir()
    write_session(root / "session.jsonl", "s0", requests, random.Random(8), 0.0)
    return root


def sessions(d: Path, count: int, per: int, at_once: bool) -> Path:
    """`count` sessions of `per` requests (~30 s apart), one after another (each starts after the
    previous ended) or all in flight at once (started within the same minute): the same requests,
    per-stream work included, so the ratio is what concurrency alone costs."""
    root = d / f"sessions{count}{'c' if at_once else 's'}"
    proj = root / "-home-user-p"
    proj.mkdir(parents=True)
    rng = random.Random(9)
    for s in range(count):
        start = rng.random() * 60 if at_once else s * per * 60.0
        write_session(proj / f"session-{s:05d}.jsonl", f"s{s}", per, rng, start)
    return root


BEFORE = """import sys, time
from prefixsim import sources
from prefixsim.replay import replay
for root in sys.argv[1:]:
    t = time.perf_counter()
    n = len(replay(sources.open_many([root], None, errors=[])).rows)
    print((time.perf_counter() - t) / n)
"""


def before_times(tree: Path, roots: list[Path]) -> list[float]:
    """Another prefixsim tree's seconds per request on `roots` (the first is a warm-up), in a child."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    out = subprocess.run([sys.executable, "-c", BEFORE, *map(str, roots)], env=env, cwd=roots[0].parent,
                         capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()][1:]


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="100 / 400 requests; 20 sessions of 5 (CI smoke run)")
    ap.add_argument("--before", type=Path, help="another prefixsim tree (e.g. main), timed in the same run")
    args = ap.parse_args(argv)
    short, long_ = (100, 400) if args.small else (1000, 20000)
    many, per = (20, 5) if args.small else (1000, 20)
    out = []
    with tempfile.TemporaryDirectory() as d:
        warm = Path(d) / "warm"
        warm.mkdir()
        roots = [one_stream(warm, 20), one_stream(Path(d), short), one_stream(Path(d), long_),
                 sessions(Path(d), many, per, False), sessions(Path(d), many, per, True)]
        replay_time(roots[0])   # imports, the tokenizer
        a, b, c, m = ((lambda t: t[0] / t[1])(replay_time(r)) for r in roots[1:])
        before = before_times(args.before, roots) if args.before else None
    print(f"one stream: {a * 1e6:.0f} µs/request at {short:,} requests, {b * 1e6:.0f} µs at {long_:,}")
    out.append(report(f"(j) one stream, per request {long_:,} ÷ {short:,}", b / a, "<= 1.3", b / a <= 1.3))
    print(f"{many:,} sessions × {per} requests: {c * 1e6:.0f} µs/request one after another (1 in flight), "
          f"{m * 1e6:.0f} µs all in flight at once")
    out.append(report(f"(j) {many:,} concurrent ÷ 1 at a time, per request", m / c, "<= 1.3", m / c <= 1.3))
    if before:
        ba, bb, bc, bm = before
        print(f"before ({args.before}): one stream {ba * 1e6:.0f} / {bb * 1e6:.0f} µs ({bb / ba:.2f}x); "
              f"sessions {bc * 1e6:.0f} / {bm * 1e6:.0f} µs ({bm / bc:.2f}x)")
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
