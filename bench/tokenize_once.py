"""(b) Each distinct block is tokenized once.

A 200-turn scenario session in which every request repeats the whole history: bytes handed to the
tokenizer (TokenCounter.bytes_tokenized) over the bytes of the distinct blocks (by content key).

    python bench/tokenize_once.py [--small]
"""
from __future__ import annotations

import argparse

from _common import report, scenario_calls

SCENARIO = """name: bench-tokenize
model: claude-sonnet-4-5
tokenizer: cl100k_base
base:
  tools: {{count: 10, size: 200}}
  system: 1000
timeline:
  - request: {{turns: {turns}, user: 100, assistant: 200, tool_use: 60, tool_result: 300}}
"""


def main(argv=None) -> list[dict]:
    from prefixsim.core.simulator import Simulator

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    args = ap.parse_args(argv)
    calls = scenario_calls(SCENARIO.format(turns=10 if args.small else 200))
    sim = Simulator("anthropic")
    sim.run(calls)
    distinct = {b.key: len(b.data) for c in calls for b in c.request.blocks if b.tokens is None}
    sent = sum(len(b.data) for c in calls for b in c.request.blocks)
    ratio = sim.counter.bytes_tokenized / sum(distinct.values())
    print(f"{len(calls)} requests, {sent:,} block bytes sent in all, {sum(distinct.values()):,} distinct, "
          f"{sim.counter.bytes_tokenized:,} tokenized")
    return [report("(b) bytes tokenized / distinct block bytes", ratio, "<= 1.05", ratio <= 1.05)]


if __name__ == "__main__":
    main()
