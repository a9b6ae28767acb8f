"""OpenAI Chat full-request log: `prefixsim replay` ÷ the floor of the same work, whole processes, side by side.

A synthetic gateway log of Chat Completions requests (20 conversations × 30 turns, interleaved in
time as a gateway sees them, each line the whole conversation so far with its response and usage;
~50 MB) is replayed by `prefixsim replay LOG` in a fresh process. The floor, in a fresh process too,
is what any reader of such a log must do: parse every line (json.loads, the reader's 1 MB buffer)
and tokenize every distinct message once (o200k_base, built from the same pinned file; a message
is known by the xxh3 digest of its text). Runs are paired and alternate which goes first; the
ratio of the medians is printed (the machine is shared: a pair sees one load).

Three cases of prefixsim's start-up memo (prefixsim/_perf/diskcache.py: genai-prices' rates, token
counts by text): "new log", the memo of an earlier run on another log of the same model (rates
remembered, none of this log's counts: it builds the encoding as the floor does), the headline;
"repeat", the memo of an earlier run on this log (as every later replay of the same traffic finds
it; the floor tokenizes again: it has no memo); "first ever", the memo empty (genai-prices imported).

    python bench/openai_log_throughput.py [--small] [--pairs 5] [--before TREE]

`--before TREE` runs another prefixsim tree in the same pairs; without it, PYTHONPATH says which
tree is timed (PYTHONPATH=/work/main times main's code with this script).
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

WORDS = ("cache prefix token block digest entry store chain request session fork agent tool result "
         "reader writer parse render layer model price usage stream window budget").split()

FLOOR = """import json, sys
import xxhash
from prefixsim.core.tokens import load_encoding   # the pinned o200k_base file, read as prefixsim reads it
enc = load_encoding("o200k_base")
seen = set()
with open(sys.argv[1], "rb", 1 << 20) as fh:
    for line in fh:
        for m in json.loads(line)["request"]["messages"]:
            text = m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for c in m.get("tool_calls") or ():
                text += c["function"]["name"] + c["function"]["arguments"]
            key = xxhash.xxh3_128_digest(text.encode())
            if key not in seen:
                seen.add(key)
                enc.encode_ordinary(text)
"""


def write_log(path: Path, conversations: int = 20, turns: int = 30, seed: int = 35,
              models: tuple[str, ...] = ("gpt-4o",)) -> tuple[int, int]:
    """The log (see the module's doc); returns (bytes, lines). Conversation c's turn k is sent at
    k × 20 s + c, to models[c % len(models)]; each turn's reply is a tool call, the next request
    sends it back with its result."""
    rng = random.Random(seed)

    def text(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": text(60),
                                               "parameters": {"type": "object", "properties": {
                                                   "q": {"type": "string", "description": text(12)}}}}}
             for i in range(10)]
    system = {"role": "system", "content": text(1200)}
    convs = [[system, {"role": "user", "content": f"task {c}: " + text(300)}] for c in range(conversations)]
    prompts = [0] * conversations
    size = lines = 0
    with path.open("w") as fh:
        for k in range(turns):
            for c, messages in enumerate(convs):
                reply = {"role": "assistant", "content": text(120),
                         "tool_calls": [{"id": f"call_{c}_{k}", "type": "function",
                                         "function": {"name": f"tool_{k % 10}",
                                                      "arguments": json.dumps({"q": text(25)})}}]}
                prompt = sum(len(json.dumps(m)) for m in messages) // 4
                usage = {"prompt_tokens": prompt, "completion_tokens": 220,
                         "prompt_tokens_details": {"cached_tokens": prompts[c] // 128 * 128}}
                prompts[c] = prompt
                sec = k * 20 + c
                line = json.dumps({
                    "timestamp": f"2026-11-01T{10 + sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}Z",
                    "request": {"model": models[c % len(models)], "messages": messages, "tools": tools,
                                "prompt_cache_key": f"conv-{c}"},
                    "response": {"id": f"chatcmpl-{c}-{k}", "object": "chat.completion",
                                 "choices": [{"index": 0, "message": reply, "finish_reason": "tool_calls"}],
                                 "usage": usage},
                    "usage": usage}) + "\n"
                fh.write(line)
                size, lines = size + len(line.encode()), lines + 1
                messages.append(reply)
                messages.append({"role": "tool", "tool_call_id": f"call_{c}_{k}", "content": text(700)})
    return size, lines


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process (CPU: user + system, what the machine's load changes least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[-2:])} (PYTHONPATH={env['PYTHONPATH']}, "
                         f"PREFIXSIM_CACHE_DIR={env['PREFIXSIM_CACHE_DIR']}) exited {done.returncode}: {done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="4 conversations x 5 turns, one pair (CI smoke run)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--before", type=Path, help="another prefixsim tree (e.g. main) timed in the same pairs")
    args = ap.parse_args(argv)
    pairs = 1 if args.small else args.pairs
    mine = os.environ.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1])
    trees = {"prefixsim": mine, **({"before": str(args.before.resolve())} if args.before else {})}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        log = d / "chat.jsonl"
        size, n = write_log(log, *((4, 5) if args.small else (20, 30)))
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPYCACHEPREFIX"] = str(d / "pyc")   # compiled once, as an installed package is
        floor_cmd = [sys.executable, "-c", FLOOR, str(log)]
        replay_cmd = [sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(log)]

        def env(tree: str, memo: Path | None) -> dict:
            return {**base, "PYTHONPATH": tree, "PREFIXSIM_CACHE_DIR": str(memo) if memo else "off"}

        other = d / "other.jsonl"   # another log of the same model: what an earlier run left in the memo
        write_log(other, 2, 3, seed=36)
        for name, tree in trees.items():   # untimed: bytecode, file cache; fills each tree's memos
            timed(replay_cmd, env(tree, d / f"memo-{name}"), d)
            timed(replay_cmd[:-1] + [str(other)], env(tree, d / f"other-{name}"), d)
        timed(floor_cmd, env(mine, None), d)
        wall, cpu = memo_state_runs(trees, replay_cmd, floor_cmd, env(mine, None), env, timed, d, pairs)
    print(f"{n} requests, {size / 1e6:.1f} MB; medians of {pairs} alternating runs, whole processes: "
          f"floor (parse + tokenize each distinct message) {wall['floor']:.2f} s wall, {cpu['floor']:.2f} s CPU")
    print_memo_states(trees, wall, cpu)
    rows = []
    for name in trees:
        ratio = wall[f"{name} new log"] / wall["floor"]
        rows.append(report(f"OpenAI Chat log replay ({name}, new log) / floor, wall", ratio, "<= 1.5", ratio <= 1.5))
    return rows


if __name__ == "__main__":
    main()
