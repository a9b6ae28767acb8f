"""(d) Full-request logs: throughput in MB of JSON per second, beside the floor of the same run.

A synthetic Anthropic Messages log in which every line is a whole request body (the session's full
history each time, with its usage) is replayed end to end as `prefixsim replay` does it:
`prefixsim.sources.open_many` (parse, check, render, size; keeps each line's offset) then
`prefixsim.replay.replay` (reads each line again, the cache simulation with causes). The floor is what any
reader must do with the same bytes: parse each line with json.loads and hash it with xxh3.

Then the same log as a user meets it, whole processes side by side (issue 35): `prefixsim replay LOG`
in a fresh process against a fresh process that parses every line with orjson and hashes it with xxh3
(json.loads when orjson is not installed: it says so; `--floor-path DIR` puts a folder holding orjson,
e.g. `pip install --target DIR orjson`, on the floor's path only), medians of alternating runs, wall
and CPU, in the start-up memo states of bench/openai_log_throughput.py: "new log" (an earlier run on
another log: rates remembered, no counts: the cl100k encoding is built and the log's texts counted),
"repeat" (this log's counts remembered), "first ever". The floor counts no token, so "repeat" is the
state held against it (the target); the others are printed beside it.

    python bench/jsonl_throughput.py [--small] [--before TREE] [--pairs 5] [--floor-path DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import memo_state_runs, print_memo_states, report

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


WHOLE_FLOOR = """import sys
import xxhash
try:
    from orjson import loads
except ImportError:
    from json import loads
with open(sys.argv[1], "rb", 1 << 20) as fh:
    for line in fh:
        loads(line)
        xxhash.xxh3_128_digest(line)
print(loads.__module__)
"""


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, str]:
    """(wall, CPU, stdout) of one fresh process (CPU: user + system, what the machine's load changes least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[-2:])} (PYTHONPATH={env['PYTHONPATH']}) exited {done.returncode}: {done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def whole_processes(d: Path, log: Path, trees: dict[str, str], pairs: int, floor_path: str | None) -> list[dict]:
    """`prefixsim replay LOG` of each tree in fresh processes, in three memo states, against the
    orjson + xxh3 floor; medians of `pairs` alternating runs."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base["PYTHONPYCACHEPREFIX"] = str(d / "pyc")   # compiled once, as an installed package is
    mine = next(iter(trees.values()))
    floor_env = {**base, "PYTHONPATH": os.pathsep.join(x for x in (floor_path, mine) if x), "PREFIXSIM_CACHE_DIR": "off"}
    floor_cmd = [sys.executable, "-c", WHOLE_FLOOR, str(log)]
    replay_cmd = [sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(log)]

    def env(tree: str, memo: Path) -> dict:
        return {**base, "PYTHONPATH": tree, "PREFIXSIM_CACHE_DIR": str(memo)}

    other = d / "other.jsonl"   # another log of the same model: what an earlier run left in the memo
    write_log(other, 3, seed=7)
    for name, tree in trees.items():   # untimed: bytecode, file cache; fills each tree's memos
        timed(replay_cmd, env(tree, d / f"memo-{name}"), d)
        timed(replay_cmd[:-1] + [str(other)], env(tree, d / f"other-{name}"), d)
    parser = timed(floor_cmd, floor_env, d)[2].strip()
    wall, cpu = memo_state_runs(trees, replay_cmd, floor_cmd, floor_env, env, timed, d, pairs)
    print(f"whole processes, medians of {pairs} alternating runs, load {os.getloadavg()[0]:.1f}: floor ({parser} + xxh3 "
          f"per line) {wall['floor']:.2f} s wall, {cpu['floor']:.2f} s CPU")
    print_memo_states(trees, wall, cpu)
    rows = []
    for name, tree in trees.items():
        # the floor sizes nothing: the state to hold against it is the one whose counts are remembered
        ratio = wall[f"{name} repeat"] / wall["floor"]
        rows.append(report(f"Anthropic log replay ({name}, repeat) / {parser} + xxh3 floor, whole processes, wall",
                           ratio, "<= 1.5", ratio <= 1.5))
    return rows


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    ap.add_argument("--before", type=Path, help="another prefixsim tree (e.g. main), timed in the same run")
    ap.add_argument("--pairs", type=int, default=5, help="alternating runs of the whole-process figure")
    ap.add_argument("--floor-path", help="a folder holding orjson, on the whole-process floor's path only")
    args = ap.parse_args(argv)
    import prefixsim.replay  # noqa: F401  (imports and price tables are start-up, not throughput)
    before: list[float] = []
    mine = os.environ.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1])
    trees = {"prefixsim": mine, **({"before": str(args.before.resolve())} if args.before else {})}
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
        rows = [report("(d) full-request log throughput, MB/s", mb / t_ours, ">= 150", mb / t_ours >= 150,
                       f"floor {mb / t_floor:.0f} MB/s")]
        rows += whole_processes(Path(d), path, trees, 1 if args.small else args.pairs, args.floor_path)
    return rows


if __name__ == "__main__":
    main()
