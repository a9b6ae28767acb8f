"""(a) Per-request cost does not grow with the history.

Two scenario-generated sessions take the same 40 small requests, one after a ~2 K-token history, one
after a ~200 K-token history; the ratio of their per-request times (Simulator.step, best of several
passes over fresh simulators, tokenizer memo warm) is the figure. Beside it, end to end: the same
plus building each request (the scenario builder's Timeline.send: mean per request, least of several
plays of the timeline, interleaved like the replays).

    python bench/incremental.py [--small]
"""
from __future__ import annotations

import argparse
import time

from _common import report, scenario_calls

from prefixsim.core.tokens import TokenCounter, get_tokenizer

SCENARIO = """name: bench-incremental
model: {model}
tokenizer: cl100k_base
breakpoints: {breakpoints}
provider: {provider}
pace: 5s
base:
  tools: {{count: 10, size: 150}}
  system: 300
  history: {{turns: {turns}, user: 100, assistant: 300, tool_use: 100, tool_result: {result}}}
timeline:
  - request: {{turns: {requests}, user: 20, assistant: 20, tool_use: 20, tool_result: 20}}
"""


def build_times(text: str) -> tuple[list, float]:
    """The scenario's calls, and the mean time Timeline.send took to build one request (the first,
    which renders the base history, left out)."""
    from prefixsim.scenario import builder

    send, took = builder.Timeline.send, []

    def timed(self, *a, **k):
        t = time.perf_counter()
        send(self, *a, **k)
        took.append(time.perf_counter() - t)
    builder.Timeline.send = timed
    try:
        calls = scenario_calls(text)
    finally:
        builder.Timeline.send = send
    return calls, sum(took[1:]) / len(took[1:])


def timer(calls, provider: str):
    """A function timing one replay of `calls[1:]` per request on a fresh simulator (the first request
    of a session is cold whatever its size), with the tokenizer memo and price lookups warm."""
    from prefixsim.core.simulator import Simulator

    warm = Simulator(provider)
    for c in calls:
        warm.step(c)

    def replay() -> float:
        sim = Simulator(provider)
        sim.counter = warm.counter
        sim.step(calls[0])
        t = time.perf_counter()
        for c in calls[1:]:
            sim.step(c)
        return (time.perf_counter() - t) / (len(calls) - 1)
    return replay


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny sizes (CI smoke run)")
    args = ap.parse_args(argv)
    requests, repeat = (5, 1) if args.small else (40, 15)
    big_turns = 5 if args.small else 215
    counter = TokenCounter(get_tokenizer("cl100k_base"))
    out = []
    for provider, bps, model in (("anthropic", "claude_code", "claude-sonnet-4-5"), ("openai", "automatic", "gpt-4.1"),
                                 ("prefix", "none", "claude-sonnet-4-5")):
        sizes = []
        for turns, result in ((1, 200), (big_turns, 400)):
            text = SCENARIO.format(turns=turns, result=result, requests=requests, provider=provider,
                                   breakpoints=bps, model=model)
            calls, _ = build_times(text)
            blocks = calls[0].request.blocks
            sizes.append((timer(calls, provider), sum(counter.count(b) for b in blocks), len(blocks), text))
        # interleaved passes, least of each: both sizes see the same background load
        best, built = [float("inf")] * 2, [float("inf")] * 2
        for _ in range(repeat):
            for k, (replay, _, _, text) in enumerate(sizes):
                best[k] = min(best[k], replay())
                built[k] = min(built[k], build_times(text)[1])   # texts come from the memo now
        (small, big), (b_small, b_big), ((_, st, sb, _), (_, bt, bb, _)) = best, built, sizes
        print(f"[{provider}] per request: {small * 1e6:.1f} us at {st:,} tokens / {sb} blocks, "
              f"{big * 1e6:.1f} us at {bt:,} tokens / {bb} blocks; building the request "
              f"{b_small * 1e6:.1f} / {b_big * 1e6:.1f} us")
        out.append(report(f"(a) {provider}: per-request time 200K / 2K", big / small, "<= 1.5", big / small <= 1.5))
        both = (big + b_big) / (small + b_small)
        out.append(report(f"(a) {provider}: end to end with building, 200K / 2K", both, "<= 1.5", both <= 1.5))
    return out


if __name__ == "__main__":
    main()
