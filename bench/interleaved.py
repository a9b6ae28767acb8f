"""(h) Interleaved traffic: replay time at N and 2N conversations in flight at once, ratio ≈ 2 when linear.

A gateway's request log (Anthropic JSONL, one whole body per line, `metadata.user_id` per
conversation): N conversations that each grow by a turn a request, started within one minute and
30-60 s between turns, so all N are in flight together. It is replayed end to end as `prefixsim
replay` does it (`sources.open_many` + `replay.replay`), at N and at 2N conversations.

Side by side, the same replays with the store's lanes switched off (`Store.enter` a no-op: every
entry then looks through every stream's reads and first writes since it last looked, the algorithm
before issue 12), which must give byte-identical JSON and shows the growth this removes.

    python bench/interleaved.py [--small]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import tempfile
import time
from pathlib import Path
from unittest import mock

from _common import report

WORDS = "cache prefix token block digest entry store chain request session fork agent tool result".split()


def write_log(path: Path, conversations: int, turns: int, seed: int = 12) -> int:
    """N conversations of `turns` requests, interleaved in time; returns the number of requests."""
    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    tools = [{"name": f"Tool{i}", "description": text(20), "input_schema": {"type": "object"}} for i in range(6)]
    system = [{"type": "text", "text": text(300), "cache_control": {"type": "ephemeral"}}]
    events = []
    for c in range(conversations):
        t = rng.uniform(0, 60.0)
        for k in range(turns):
            events.append((t, c, k))
            t += rng.uniform(30.0, 60.0)
    events.sort()
    convs: dict[int, list[dict]] = {}
    t0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    with path.open("w") as fh:
        for i, (t, c, k) in enumerate(events):
            msgs = convs.setdefault(c, [])
            if msgs:
                msgs[-1]["content"][-1].pop("cache_control", None)
                msgs.append({"role": "assistant", "content": [
                    {"type": "text", "text": text(15)},
                    {"type": "tool_use", "id": f"c{c}t{k}", "name": "Tool1", "input": {"q": text(5)}}]})
                msgs.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"c{c}t{k}", "content": text(45)}]})
            else:
                msgs.append({"role": "user", "content": [{"type": "text", "text": f"conversation {c}: " + text(15)}]})
            msgs[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
            body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "tools": tools, "system": system,
                    "messages": msgs, "metadata": {"user_id": f"user-{c}"}}
            stamp = (t0 + dt.timedelta(seconds=t)).isoformat().replace("+00:00", "Z")
            fh.write(json.dumps({"id": f"req-{i}", "timestamp": stamp, "request": body,
                                 "usage": {"input_tokens": 20, "cache_read_input_tokens": 0 if k == 0 else 2000 + 150 * k,
                                           "cache_creation_input_tokens": 150, "output_tokens": 100}}) + "\n")
    return len(events)


def replay_once(path: Path) -> tuple[float, float, str]:
    """(load s, replay s, JSON) of one `prefixsim replay --format json`-equivalent run."""
    from prefixsim import sources
    from prefixsim.replay import replay, to_json

    t = time.perf_counter()
    traffic = sources.open_many([path], "anthropic")
    t1 = time.perf_counter()
    result = replay(traffic)
    t2 = time.perf_counter()
    return t1 - t, t2 - t1, json.dumps(to_json(result), indent=2, ensure_ascii=False)


def main(argv=None) -> list[dict]:
    from prefixsim.core.store import Store

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    args = ap.parse_args(argv)
    n, turns = (30, 3) if args.small else (1000, 6)
    figures = {}
    with tempfile.TemporaryDirectory() as d:
        for size in (n, 2 * n):
            path = Path(d) / f"gateway{size}.jsonl"
            requests = write_log(path, size, turns)
            if size == n:
                replay_once(path)   # warm: imports, price tables, the tokenizer
            load, ours, doc = replay_once(path)
            with mock.patch.object(Store, "enter", lambda self, lane, digests, start, stop: stop):
                _, theirs, ref_doc = replay_once(path)
            assert doc == ref_doc, "lanes changed the replay's output"
            figures[size] = (requests, load, ours, theirs)
            print(f"{size} conversations, {requests} requests: load {load:.2f} s, replay {ours:.2f} s "
                  f"(without lanes {theirs:.2f} s); outputs identical")
    (r1, l1, a1, b1), (r2, l2, a2, b2) = figures[n], figures[2 * n]
    print(f"2N / N: replay {a2 / a1:.2f}x (without lanes {b2 / b1:.2f}x), load {l2 / l1:.2f}x, "
          f"requests {r2 / r1:.2f}x")
    return [report("(h) interleaved log, replay time at 2N / N conversations", a2 / a1, "<= 2.5 (linear: 2.0)",
                   a2 / a1 <= 2.5, f"without lanes {b2 / b1:.2f}x")]


if __name__ == "__main__":
    main()
