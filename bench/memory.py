"""(f) Memory: peak RSS of `prefixsim replay` over a synthetic 1 GB Claude Code projects folder.

The folder is generated in a temporary directory: sessions of 2.1.x-shaped transcript lines (user
turns carrying large tool results, assistant lines with their usage), about 1 GB in all. The replay
runs in a child process; its peak resident set size is the figure. `--single` writes one session
instead, a conversation that never compacts (request i carries i history blocks): the case where
holding every request would grow with requests x history.

    python bench/memory.py [--small] [--gb 1.0] [--single] [--json]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report

T0 = dt.datetime(2026, 1, 5, 10, 0, 0, tzinfo=dt.timezone.utc)
WORDS = "cache prefix token block digest entry store chain request session fork agent tool result".split()


def _stamp(s: float) -> str:
    return (T0 + dt.timedelta(seconds=s)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_session(path: Path, sid: str, requests: int, rng: random.Random, start: float) -> int:
    """One session of `requests` calls from `start` (seconds after T0); returns the bytes written."""
    filler = " ".join(rng.choice(WORDS) for _ in range(1500))   # ~10 KB, reused: size, not entropy, matters here
    size, prompt, t, last = 0, 12000, start, None
    with path.open("w") as fh:
        for i in range(requests):
            lines = [{"parentUuid": last, "type": "user", "isSidechain": False, "sessionId": sid,
                      "uuid": f"{sid}-u{i}", "timestamp": _stamp(t),
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                               "content": f"{i} {filler}"}]}}]
            grow = 2500 + rng.randrange(500)
            usage = {"input_tokens": 3, "cache_creation_input_tokens": grow, "cache_read_input_tokens": prompt,
                     "cache_creation": {"ephemeral_5m_input_tokens": grow, "ephemeral_1h_input_tokens": 0},
                     "output_tokens": 200}
            lines.append({"parentUuid": f"{sid}-u{i}", "type": "assistant", "requestId": f"{sid}-r{i}",
                          "isSidechain": False, "sessionId": sid, "uuid": f"{sid}-a{i}",
                          "timestamp": _stamp(t + 2), "message": {"id": f"msg-{sid}-{i}", "role": "assistant",
                                                                  "model": "claude-sonnet-4-5", "usage": usage,
                                                                  "content": [{"type": "text", "text": filler[:2000]}]}})
            last = f"{sid}-a{i}"
            prompt += grow
            t += 20 + rng.randrange(40)
            text = "".join(json.dumps(x) + "\n" for x in lines)
            fh.write(text)
            size += len(text)
    return size


def write_folder(root: Path, target_bytes: int, requests: int = 150) -> tuple[int, int]:
    rng = random.Random(8)
    total = sessions = 0
    while total < target_bytes:
        project = root / f"-home-user-project{sessions % 7}"
        project.mkdir(parents=True, exist_ok=True)
        total += write_session(project / f"session-{sessions:05d}.jsonl", f"s{sessions}", requests, rng,
                               sessions * 86400.0)
        sessions += 1
    return total, sessions


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a 2 MB folder (CI smoke run)")
    ap.add_argument("--gb", type=float, default=1.0, help="folder size in GB (default 1)")
    ap.add_argument("--single", action="store_true", help="one session of that size (one long conversation)")
    ap.add_argument("--json", action="store_true", help="replay with --format json (the document streamed out)")
    args = ap.parse_args(argv)
    target = 2_000_000 if args.small else int(args.gb * 1e9)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "projects"
        t = time.perf_counter()
        if args.single:
            root.mkdir()
            size, sessions = write_session(root / "session.jsonl", "s0", target // 12_400, random.Random(8), 0.0), 1
        else:
            size, sessions = write_folder(root, target, 20 if args.small else 150)
        made = time.perf_counter() - t
        t = time.perf_counter()
        fmt = ["--format", "json"] if args.json else []
        proc = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(root), *fmt],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"replay failed: {proc.stderr[-2000:]}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024   # KiB on Linux
    print(f"{size / 1e6:,.0f} MB in {sessions} sessions (written in {made:.0f} s); replay {took:.1f} s, "
          f"{size / 1e6 / took:.0f} MB/s, peak RSS {peak_mb:.0f} MB ({peak_mb / (size / 1e6):.2f} MB per MB)")
    what = ("one transcript" if args.single else "transcripts") + (", --format json" if args.json else "")
    return [report(f"(f) peak RSS replaying {size / 1e9:.2f} GB of {what}, MB", peak_mb, "< 500", peak_mb < 500)]


if __name__ == "__main__":
    main()
