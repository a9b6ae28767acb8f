"""The prefix-cache hit rate a replica's KV cache gives a design's requests: the requests run through
the engine simulation (engines/policy.py, vLLM's block pool or SGLang's radix tree) with the KV the
HBM holds after the weights as its capacity, and each request holding its KV for as long as the
roofline says its prefill and decode take."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prefixsim.core.simulator import Simulator
from prefixsim.model import Call, Outcome
from prefixsim.providers.registry import get_policy


@dataclass(frozen=True, slots=True)
class Measured:
    """What the engine served: every outcome, and the share of prompt tokens read from its cache."""

    outcomes: tuple[Outcome, ...]

    @property
    def prompt(self) -> int:
        return sum(o.usage.prompt_tokens for o in self.outcomes)

    @property
    def read(self) -> int:
        return sum(o.usage.cache_read for o in self.outcomes)

    @property
    def hit_rate(self) -> float:
        return self.read / self.prompt if self.prompt else 0.0


def engine_hit(calls: Sequence[Call], engine: str, capacity: int | None, prefill_tokens_per_s: float,
               decode_tokens_per_s: float, count: int | None = None) -> Measured:
    """Run `calls` on `engine` with `capacity` KV tokens (None: unlimited); the last `count` outcomes
    (None: all) are the measurement, the ones before them warm the cache up."""
    policy = get_policy(engine, capacity=capacity, encoding="approx", prefill_tokens_per_s=prefill_tokens_per_s,
                        decode_tokens_per_s=decode_tokens_per_s)
    outcomes = Simulator(engine, tokenizer="approx", policy=policy).run(list(calls))
    return Measured(tuple(outcomes if count is None else outcomes[len(outcomes) - count:]))
