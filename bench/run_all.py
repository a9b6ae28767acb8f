"""Run every bench script and print each target's figure in one table.

    python bench/run_all.py [--small] [--skip memory]

The full sizes take a few minutes on a 2-core machine (the 1 GB memory run most of it).
"""
from __future__ import annotations

import argparse
import importlib

SCRIPTS = ("incremental", "tokenize_once", "naive", "jsonl_throughput", "openai_log_throughput", "cold_run", "memory",
           "scaleout", "interleaved", "fork_memory", "stream_scaling", "startup", "shard_replay", "engines",
           "canonical_model", "cluster_replay", "workers_auto")


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    ap.add_argument("--skip", action="append", default=[], choices=SCRIPTS, help="leave a script out")
    args = ap.parse_args(argv)
    rows = []
    for name in SCRIPTS:
        if name in args.skip:
            continue
        print(f"--- {name}")
        rows += importlib.import_module(name).main(["--small"] if args.small else [])
    print("\n--- summary")
    for r in rows:
        print(f"{'MET    ' if r['met'] else 'NOT MET'}  {r['name']}: {r['value']:.3g} (target {r['target']})")
    return rows


if __name__ == "__main__":
    main()
