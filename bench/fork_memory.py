"""(i) A fork with many children: peak memory at N, 2N and 4N children, ratio ≈ 2 per doubling when linear.

A scenario whose parent (8 tools, a 1,000-token system prompt, 4 turns of history) forks N children
(`fork: {children: N}`, one request each). Every child's request carries the parent's history, the
spawning call with N tool_use blocks and N placeholder results, then its own directive: N x N blocks
sent in all. The children's requests, digest chains and running totals share that common part by
reference (prefixsim/core/sharedseq.py), so memory must grow as N: target at most 2.3x per doubling.
Peak Python memory (tracemalloc) of `prefixsim.api.run_scenario` at each size, in one process, and
the wall time (tracemalloc slows the run: the times are for the ratio only).

    python bench/fork_memory.py [--small]
"""
from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

from _common import report

SCENARIO = """name: bench-fork-memory
model: claude-sonnet-4-5
tokenizer: cl100k_base
breakpoints: claude_code
base:
  tools: {{count: 8, size: 200}}
  system: 1000
  history: {{turns: 4, user: 50, assistant: 100, tool_use: 40, tool_result: 200}}
timeline:
  - request: {{turns: 1}}
  - fork: {{children: {n}, directive: 30, tool_call: 20, turns: 1, join: false}}
"""


def peak(path: Path) -> tuple[float, float, int]:
    """(peak MB, seconds, requests) of one scenario run."""
    from prefixsim.api import run_scenario
    from prefixsim.scenario import textgen

    # The scenario text generator keeps a process-wide memo of the texts it made; the run before
    # (or the warm-up) would have made the first children's texts already and hide part of a run.
    textgen._MEMO.clear()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    t = time.perf_counter()
    res = run_scenario(str(path))
    seconds = time.perf_counter() - t
    top = tracemalloc.get_traced_memory()[1] - base
    return top / 1e6, seconds, len(res.requests)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    ap.add_argument("--sizes", type=int, nargs=3, metavar="N", help="three numbers of children (default 600 1200 2400)")
    args = ap.parse_args(argv)
    sizes = tuple(args.sizes) if args.sizes else (20, 40, 80) if args.small else (600, 1200, 2400)
    out = {}
    with tempfile.TemporaryDirectory() as d:
        paths = {n: Path(d) / f"fork{n}.yaml" for n in sizes}
        for n, path in paths.items():
            path.write_text(SCENARIO.format(n=n))
        peak(paths[sizes[0]])   # warm, untraced: imports, the tokenizer's tables, price tables
        tracemalloc.start()
        try:
            for n in sizes:
                out[n] = peak(paths[n])
        finally:
            tracemalloc.stop()
    for n in sizes:
        mb, s, reqs = out[n]
        print(f"{n} children ({reqs} requests): peak {mb:.0f} MB (tracemalloc; {mb * 1e3 / n:.1f} KB per "
              f"child), {s:.1f} s")
    ratios = [out[b][0] / out[a][0] for a, b in zip(sizes, sizes[1:])]
    times = [out[b][1] / out[a][1] for a, b in zip(sizes, sizes[1:])]
    print(f"per doubling of children: memory {', '.join(f'{r:.2f}x' for r in ratios)}; "
          f"time {', '.join(f'{r:.2f}x' for r in times)} (linear: 2.0; N x N: 4.0)")
    worst = max(ratios)
    return [report(f"(i) fork peak memory per doubling of children ({sizes[0]} to {sizes[2]}), the larger",
                   worst, "<= 2.3 (linear: 2.0)", worst <= 2.3, f"{out[sizes[2]][0]:.0f} MB at {sizes[2]}")]


if __name__ == "__main__":
    main()
