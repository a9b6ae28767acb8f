"""(n) `prefixsim replay --executor dask` on a local cluster: a gateway log of many models (each model a
cache namespace of its own, so a shard) replayed by 1 and 2 worker processes, against the serial replay
in this machine's one process; the JSON asserted byte-identical, the speed-up and each worker's peak
memory printed.

The log is an OpenAI Chat gateway log (openai_log_throughput.write_log): conversations of 30 turns,
each line the whole conversation so far, spread over eight OpenAI models. The default is ~2 GB
(`--gb`); `--small` writes ~2 MB (the CI smoke run). The replay runs as a fresh `prefixsim replay
LOG --format json` process (the start-up memo off); the cluster is a dask.distributed LocalCluster of
worker processes on loopback that this script starts, as a user's own cluster would be given with
`--scheduler`. What it shows: this process reads the log and builds every request once, then the
workers only simulate their shards, so the speed-up is bounded by the reading's share.

    python bench/cluster_replay.py [--small] [--gb 2.0] [--workers 1 2]
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
from openai_log_throughput import write_log

MODELS = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini", "gpt-5")
#: Bytes one conversation of 30 turns takes in write_log's log (measured: ~3 MB).
CONVERSATION_BYTES = 3_000_000


def replay(log: Path, *args: str) -> tuple[float, bytes]:
    env = {**os.environ, "PREFIXSIM_CACHE_DIR": "off"}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(log),
                        "--format", "json", *args], capture_output=True, env=env)
    if p.returncode:
        raise SystemExit(f"replay {' '.join(args)} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
    return time.perf_counter() - t, p.stdout


def _peak_kib() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def on_cluster(log: Path, workers: int) -> tuple[float, bytes, list[float]]:
    """Wall seconds and output of the replay on a fresh LocalCluster of `workers` processes, and each
    worker's peak RSS in MB."""
    import distributed

    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        wall, out = replay(log, "--executor", "dask", "--scheduler", cluster.scheduler_address,
                           "--workers", str(len(MODELS)))
        peaks = sorted(v / 1024 for v in client.run(_peak_kib).values())
    return wall, out, peaks


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a ~2 MB log (CI smoke run)")
    ap.add_argument("--gb", type=float, default=2.0, help="log size in GB (default 2)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="cluster sizes (default 1 2)")
    args = ap.parse_args(argv)
    conversations = len(MODELS) if args.small else max(len(MODELS), int(args.gb * 1e9 / CONVERSATION_BYTES))
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "gateway.jsonl"
        t = time.perf_counter()
        size, lines = write_log(log, conversations, 3 if args.small else 30, models=MODELS)
        print(f"{size / 1e6:,.0f} MB, {lines:,} requests, {conversations} conversations on {len(MODELS)} models "
              f"(written in {time.perf_counter() - t:.0f} s)")
        serial, want = replay(log)
        print(f"serial, one process: {serial:.1f} s")
        rows = []
        for w in args.workers:
            wall, got, peaks = on_cluster(log, w)
            assert got == want, f"the replay on {w} worker(s) differs from the serial one"
            print(f"{w} worker process(es): {wall:.1f} s, {serial / wall:.2f}x the serial replay, byte-identical; "
                  f"peak RSS per worker {', '.join(f'{m:.0f}' for m in peaks)} MB")
            rows.append(report(f"(n) replay on a local dask cluster of {w} worker(s) / serial, wall",
                               wall / serial, "byte-identical (a ratio, no target)", True))
    return rows


if __name__ == "__main__":
    main()
