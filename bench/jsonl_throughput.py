"""(d) Full-request logs: throughput in MB of JSON per second, beside the floor of the same run.

A synthetic Anthropic Messages log in which every line is a whole request body (the session's full
history each time, with its usage) is replayed end to end as `prefixsim replay` does it:
`prefixsim.sources.open_many` (parse, check, render, size; keeps each line's offset) then
`prefixsim.replay.replay` (reads each line again, the cache simulation with causes). The floor is what any
reader must do with the same bytes: parse each line with json.loads and hash it with xxh3.

    python bench/jsonl_throughput.py [--small] [--before TREE]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import report

WORDS = "cache prefix token block digest entry store chain request session fork agent tool result".split()


def write_log(path: Path, requests: int, seed: int = 6) -> int:
    """One session's log: each line the whole body so far plus a plausible usage; returns bytes."""
    rng = random.Random(seed)

    def text(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    tools = [{"name": f"Tool{i}", "description": text(200), "input_schema": {"type": "object"}} for i in range(15)]
    system = [{"type": "text", "text": text(2500), "cache_control": {"type": "ephemeral"}}]
    messages: list[dict] = []
    size = 0
    with path.open("w") as fh:
        for i in range(requests):
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                          "content": text(600)}]})
            for m in messages[:-1]:
                m["content"][-1].pop("cache_control", None)
            messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
            body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "tools": tools, "system": system,
                    "messages": messages}
            line = json.dumps({"timestamp": f"2026-11-01T10:{i // 60:02d}:{i % 60:02d}Z", "request": body,
                               "usage": {"input_tokens": 50, "cache_read_input_tokens": 0,
                                         "cache_creation_input_tokens": 0, "output_tokens": 300}}) + "\n"
            fh.write(line)
            size += len(line.encode())
            messages.append({"role": "assistant", "content": [{"type": "text", "text": text(150)},
                             {"type": "tool_use", "id": f"t{i + 1}", "name": "Tool1", "input": {"q": text(20)}}]})
    return size


def floor(path: Path) -> float:
    import xxhash

    t = time.perf_counter()
    with path.open("rb", 1 << 20) as fh:   # the reader's buffer (the default 8 KB costs ~0.3 s here)
        for line in fh:
            json.loads(line)
            xxhash.xxh3_128_digest(line)
    return time.perf_counter() - t


def prefixsim_replay(path: Path) -> tuple[float, int]:
    from prefixsim import sources
    from prefixsim.replay import replay

    t = time.perf_counter()
    result = replay(sources.open_many([path], "anthropic"))
    return time.perf_counter() - t, len(result.rows)


BEFORE = """import sys, time
from prefixsim import sources
from prefixsim.replay import replay
replay(sources.open_many([sys.argv[1]], "anthropic"))   # warm: imports, genai-prices, the tokenizer
t = time.perf_counter()
replay(sources.open_many([sys.argv[1]], "anthropic"))
print(time.perf_counter() - t)
"""


def before_replay(tree: Path, path: Path) -> float:
    """Another prefixsim tree's load + replay of the same log, in a child process (its own imports)."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    out = subprocess.run([sys.executable, "-c", BEFORE, str(path)], env=env, cwd=path.parent,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    ap.add_argument("--before", type=Path, help="another prefixsim tree (e.g. main), timed in the same run")
    args = ap.parse_args(argv)
    import prefixsim.replay  # noqa: F401  (imports and price tables are start-up, not throughput)
    before: list[float] = []
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "log.jsonl"
        size = write_log(path, 12 if args.small else 200)
        prefixsim_replay(path)                # warm: genai-prices, the tokenizer
        floors, ours = [], []
        for _ in range(3):                    # interleaved: the machine's load hits all alike
            floors.append(floor(path))
            ours.append(prefixsim_replay(path))
            if args.before:
                before.append(before_replay(args.before, path))
        t_floor, (t_ours, n) = min(floors), min(ours)
    mb = size / 1e6
    print(f"{n} requests, {mb:.1f} MB of JSON; floor (json.loads + xxh3) {mb / t_floor:.0f} MB/s, "
          f"prefixsim load + replay {mb / t_ours:.0f} MB/s ({t_ours / t_floor:.2f}x the floor)")
    if before:
        print(f"before ({args.before}): {mb / min(before):.0f} MB/s ({min(before) / t_floor:.2f}x the floor); "
              f"this tree {min(before) / t_ours:.2f}x faster")
    return [report("(d) full-request log throughput, MB/s", mb / t_ours, ">= 150", mb / t_ours >= 150,
                   f"floor {mb / t_floor:.0f} MB/s")]


if __name__ == "__main__":
    main()
