"""(m) `--workers 0` (as many processes as free cores, when the work repays them) never slower than
serial, on the shipped scenarios (`prefixsim run scenarios/`) and on every source in tests/data
(`prefixsim replay`), with byte-identical output.

Each case runs as a user runs it, a fresh process per run (`--format json`, nothing written), with
`--workers 0` and with `--workers 1` in alternating pairs (which goes first alternates too; the
start-up memo off in both, so neither finds the other's work); per case the median of `--workers 0`
over the median of serial, and the figure: all cases' medians summed, `--workers 0` over serial.
Up to 1.05 is within what one command measures against itself here (single cases of 0.4-1 s swing
0.92-1.07x either way at load 2 with 3 pairs, so the worst case is printed, not judged). A recording folder
that `replay FOLDER` does not take is replayed as its files (`replay A B ...`), each on its own when
they will not replay together.

    python bench/workers_auto.py [--small] [--pairs 5]
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
DATA = ROOT / "tests" / "data"
TARGET = 1.05


def _cmd(args: list[str], workers: int) -> list[str]:
    return [sys.executable, "-c", "from prefixsim.cli import main; main()", *args, "--format", "json",
            "--workers", str(workers)]


def _run(args: list[str], workers: int, env: dict, cwd: str) -> tuple[float, bytes, int]:
    t = time.perf_counter()
    p = subprocess.run(_cmd(args, workers), env=env, cwd=cwd, capture_output=True)
    return time.perf_counter() - t, p.stdout, p.returncode


def cases(small: bool) -> list[tuple[str, list[str]]]:
    """(name, arguments) of each case: the scenarios, then each tests/data source that replays."""
    first = sorted((ROOT / "scenarios").glob("*.yaml"))[0]
    out = [("run " + (f"scenarios/{first.name}" if small else "scenarios/"),
            ["run", str(first if small else ROOT / "scenarios"), "--no-write"])]
    env, cwd = _env(), tempfile.gettempdir()
    sources = sorted(p for p in DATA.iterdir() if p.is_dir() and p.name != "mooncake")
    for src in sources[:1] if small else sources:
        files = sorted(str(p) for p in src.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".yaml", ".yml", ".gz"))
        for args in (["replay", str(src)], ["replay", *files]):
            if _run(args, 1, env, cwd)[2] == 0:
                out.append((f"replay tests/data/{src.name}", args))
                break
        else:
            ok = [f for f in files if _run(["replay", f], 1, env, cwd)[2] == 0]
            out += [(f"replay tests/data/{src.name}/{Path(f).name}", ["replay", f]) for f in ok[:1 if small else None]]
    return out


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PREFIXSIM_CACHE_DIR": "off"}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="two cases, one pair (CI smoke run)")
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args(argv)
    pairs = 1 if args.small else args.pairs
    env, cwd = _env(), tempfile.gettempdir()
    worst, ratios, sums = 0.0, [], [0.0, 0.0]
    for name, cmd in cases(args.small):
        auto: list[float] = []
        serial: list[float] = []
        outputs: set[bytes] = set()
        for i in range(pairs + 1):   # the first pair warms the file cache and compiles bytecode
            for workers, into in ([(0, auto), (1, serial)] if i % 2 else [(1, serial), (0, auto)]):
                t, out, rc = _run(cmd, workers, env, cwd)
                assert rc == 0, f"{name} --workers {workers} exited {rc}"
                outputs.add(out)
                if i:
                    into.append(t)
        assert len(outputs) == 1, f"{name}: --workers 0 changed the output"
        r = statistics.median(auto) / statistics.median(serial)
        ratios.append(r)
        worst = max(worst, r)
        sums[0] += statistics.median(auto)
        sums[1] += statistics.median(serial)
        print(f"{name[:60]:60} serial {statistics.median(serial):6.3f} s  --workers 0 {statistics.median(auto):6.3f} s"
              f"  {r:5.3f}x  output identical")
    pooled = sums[0] / sums[1]
    print(f"{len(ratios)} cases, {pairs} pair(s) each, load average {os.getloadavg()[0]:.1f}; median case "
          f"{statistics.median(ratios):.3f}x, worst case {worst:.3f}x")
    return [report("(m) --workers 0 ÷ serial, all cases (shipped scenarios, tests/data)", pooled,
                   f"<= {TARGET}", pooled <= TARGET)]


if __name__ == "__main__":
    main()
