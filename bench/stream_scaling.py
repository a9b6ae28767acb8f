"""(j) Per-request replay time flat in the length of one stream and in the streams in flight.

One Claude Code session that never compacts (request i carries i history blocks) at 1 K and 20 K
requests, and 1,000 requests spread over 1 vs 1,000 concurrent sessions (all in flight at once),
written with bench/memory.py's transcript writer and replayed in-process (`sources.open_many` +
`replay.replay`). Prints µs per request and the ratios against the ≤ 1.3 target.

    python bench/stream_scaling.py [--small]
"""
from __future__ import annotations

import argparse
import random
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


def one_stream(d: Path, requests: int) -> float:
    root = d / f"single{requests}"
    root.mkdir()
    write_session(root / "session.jsonl", "s0", requests, random.Random(8), 0.0)
    took, n = replay_time(root)
    return took / n


def concurrent(d: Path, sessions: int, per: int) -> float:
    """`sessions` sessions of `per` requests, all starting within the same minute."""
    root = d / f"conc{sessions}"
    proj = root / "-home-user-p"
    proj.mkdir(parents=True)
    rng = random.Random(9)
    for s in range(sessions):
        write_session(proj / f"session-{s:05d}.jsonl", f"s{s}", per, rng, rng.random() * 60)
    took, n = replay_time(root)
    return took / n


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="100 / 400 requests, 1 / 20 streams (CI smoke run)")
    args = ap.parse_args(argv)
    short, long_ = (100, 400) if args.small else (1000, 20000)
    total, many = (100, 20) if args.small else (2000, 1000)
    out = []
    with tempfile.TemporaryDirectory() as d:
        one_stream(Path(d) / "warm", 20) if (Path(d) / "warm").mkdir() is None else None  # imports, tokenizer
        a, b = one_stream(Path(d), short), one_stream(Path(d), long_)
        print(f"one stream: {a * 1e6:.0f} µs/request at {short:,} requests, {b * 1e6:.0f} µs at {long_:,}")
        out.append(report(f"(j) one stream, per request {long_:,} ÷ {short:,}", b / a, "<= 1.3", b / a <= 1.3))
        c, m = concurrent(Path(d), 1, total), concurrent(Path(d), many, total // many)
        print(f"{total:,} requests: {c * 1e6:.0f} µs/request in 1 stream, {m * 1e6:.0f} µs in {many:,} concurrent")
        out.append(report(f"(j) {many:,} concurrent ÷ 1 stream, per request", m / c, "<= 1.3", m / c <= 1.3))
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
