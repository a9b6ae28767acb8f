"""(c) prefixsim against the naive approach of the seed demo (seed 003's prefix_cache.py).

The naive simulator keeps the conversation as request data and, for every request, re-serializes
every block and re-hashes the whole prefix (a running sha256, one digest per block boundary), reading
the longest prefix whose digests it has seen; tokens are characters / 4 per block. prefixsim gets the
same turns the way the scenario builder feeds it (each new message rendered once, the request a tuple
of blocks) and replays them under the `prefix` provider (the seed's rules) with the `approx`
tokenizer. Both run the same 200-turn, ~150 K-token session; outputs must match request by request.

    python bench/naive.py [--small]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import time

from _common import report

MODEL = "claude-sonnet-4-5"


def session(turns: int, seed: int = 3):
    """Tools, system and `turns` (user, assistant) exchanges of ~740 tokens (characters / 4)."""
    rng = random.Random(seed)
    words = "cache prefix token block digest entry store chain request session fork agent tool".split()

    def text(tokens: int) -> str:
        return " ".join(rng.choice(words) for _ in range(tokens * 4 // 6))

    tools = [{"name": f"Tool{i}", "description": text(300), "input_schema": {"type": "object"}} for i in range(12)]
    system = [{"type": "text", "text": text(3000)}]
    exchanges = [({"role": "user", "content": [{"type": "text", "text": text(170)}]},
                  {"role": "assistant", "content": [{"type": "text", "text": text(500)}]}) for _ in range(turns)]
    return tools, system, exchanges


def dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class NaiveCache:
    """The seed demo's loop: serialize, hash cumulatively, match from the start, remember every digest."""

    def __init__(self) -> None:
        self.entries: set[str] = set()

    def request(self, tools, system, messages) -> tuple[int, int]:
        blocks = [dumps(t) for t in tools] + [dumps(s) for s in system]
        for m in messages:
            role = dumps({"role": m["role"]})
            blocks += [role + dumps(p) if i == 0 else dumps(p) for i, p in enumerate(m["content"])]
        h = hashlib.sha256()
        total = read = 0
        matched = True
        for b in blocks:
            h.update(b)
            d = h.copy().hexdigest()
            total += (len(b.decode("utf-8")) + 3) // 4
            if matched and d in self.entries:
                read = total
            else:
                matched = False
            self.entries.add(d)
        return read, total - read


def run_naive(tools, system, exchanges) -> list[tuple[int, int]]:
    cache, messages, out = NaiveCache(), [], []
    for user, assistant in exchanges:
        messages.append(user)
        out.append(cache.request(tools, system, messages))
        messages.append(assistant)
    return out


def simulator():
    """A prefixsim simulator with the seed's rules, its model's prices already looked up (a one-off
    start-up cost of genai-prices that does not depend on the session)."""
    from prefixsim.core.simulator import Simulator

    sim = Simulator("prefix", tokenizer="approx")
    sim.prices.rates(MODEL, "prefix")
    return sim


def run_prefixsim(sim, tools, system, exchanges) -> list[tuple[int, int]]:
    from prefixsim.model import Call, Request
    from prefixsim.wire.anthropic import message_blocks, system_blocks, tool_block

    blocks = [tool_block(t, i) for i, t in enumerate(tools)] + system_blocks(system)
    out, mi = [], 0
    for k, (user, assistant) in enumerate(exchanges):
        blocks += message_blocks(user, mi)
        o = sim.step(Call(10.0 * k, Request(MODEL, tuple(blocks))))
        out.append((o.usage.cache_read, o.usage.input_tokens))
        blocks += message_blocks(assistant, mi + 1)
        mi += 2
    return out


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    args = ap.parse_args(argv)
    tools, system, exchanges = session(10 if args.small else 200)
    t = time.perf_counter()
    naive = run_naive(tools, system, exchanges)
    t_naive = time.perf_counter() - t
    sim = simulator()
    t = time.perf_counter()
    ours = run_prefixsim(sim, tools, system, exchanges)
    t_ours = time.perf_counter() - t
    assert ours == naive, "prefixsim and the naive simulator disagree"
    last = naive[-1]
    print(f"{len(naive)} requests, last prompt {sum(last):,} tokens; naive {t_naive:.3f} s, prefixsim {t_ours:.3f} s; "
          f"outputs identical")
    speedup = t_naive / t_ours
    return [report("(c) speed-up over the naive re-serialize/re-hash", speedup, ">= 20", speedup >= 20)]


if __name__ == "__main__":
    main()
