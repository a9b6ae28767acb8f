"""The narrow interface both engine caches implement, and the one way a request uses a cache.

Shape from SGLang's `BasePrefixCache` (match_prefix / insert / evict) and vLLM's `KVCacheManager`
(find the longest cache hit, then allocate and cache the request's full blocks): a request first
matches, then inserts what it computed, so everything it read or wrote becomes recent together.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence


@dataclass(frozen=True, slots=True)
class EngineKeys:
    """What separates caches besides the tokens: a LoRA adapter name and a cache salt.

    vLLM mixes the LoRA name into every block hash and the salt into the first block only
    (`generate_block_hash_extra_keys`); SGLang puts both in `RadixKey.extra_key`, so nodes with
    different keys are never shared (docs/rules.md#vllm, docs/rules.md#sglang).
    """

    lora: str = ""
    salt: str = ""


@dataclass(frozen=True, slots=True)
class Served:
    """One request against an engine cache: prompt tokens read from cache and newly cached tokens."""

    prompt_tokens: int
    hit_tokens: int
    stored_tokens: int

    @property
    def computed_tokens(self) -> int:
        """Prompt tokens the engine had to prefill."""
        return self.prompt_tokens - self.hit_tokens


class PrefixCache(Protocol):
    """A KV prefix cache holding at most `capacity` tokens (None: unlimited); `used` tokens now."""

    capacity: int | None

    @property
    def used(self) -> int: ...

    @property
    def stored(self) -> int:
        """Tokens newly cached so far (what was already cached is not counted again)."""
        ...

    def match(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Tokens of `tokens` the engine would read from cache (the engine's alignment and n-1 cap)."""
        ...

    def insert(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Cache what a finished request computed; returns tokens newly stored. Never exceeds capacity."""
        ...

    def evict(self, num_tokens: int) -> int:
        """Evict at least `num_tokens` unreferenced tokens if there are that many; returns tokens freed."""
        ...

    def begin(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> tuple[int, Any]:
        """A request starts: tokens it reads, and a hold on its prompt's cached KV (never evicted
        until `end`)."""
        ...

    def end(self, hold: Any, seq: Sequence[int], keys: EngineKeys = EngineKeys()) -> Any:
        """The request finishes: cache `seq` (its `committed_tokens`) and release `hold`. Returns
        what `rekey` needs to rename the output's cached KV."""
        ...

    def rekey(self, output: Any, seq: Sequence[int], keys: EngineKeys = EngineKeys()) -> None:
        """The output `end` cached under stand-in tokens is `seq` (same length) after all."""
        ...


def committed_tokens(prompt: Sequence[int], output: Sequence[int]) -> list[int]:
    """The tokens whose KV exists when a request finishes: the prompt and every output token but
    the last, which is sampled and never fed back. vLLM caches blocks up to num_computed_tokens +
    num_new_tokens (`KVCacheManager.allocate_slots`), one step behind the sampled tokens; SGLang's
    `cache_finished_req` inserts `(origin_input_ids + output_ids)[:kv_committed_len]`, and
    kv_committed_len grows by one per decode step after the prompt's prefill."""
    return list(prompt) + list(output[:-1]) if output else list(prompt)


def serve(cache: PrefixCache, prompt: Sequence[int], output: Sequence[int] = (),
          keys: EngineKeys = EngineKeys()) -> Served:
    """Run one request alone: it starts (reads, holds its prompt), then finishes and caches prompt
    plus output as committed (`committed_tokens`)."""
    before = cache.stored
    hit, hold = cache.begin(prompt, keys)
    cache.end(hold, committed_tokens(prompt, output), keys)
    return Served(len(prompt), hit, cache.stored - before)


DEFAULT_PREFILL_TOKENS_PER_S = 10_000.0
"""Prefill rate that times a request when the scenario gives none (tokens/s): an assumption of the order
of an 8B model on one GPU, not a measurement. GPU-seconds are only reported for a rate the user gives."""

DEFAULT_DECODE_TOKENS_PER_S = 50.0
"""Output tokens per second of one request while it decodes (an assumption: tens of tokens/s per
sequence in a busy batch); with the prefill time it sets how long the request holds its KV."""


def prefill_seconds(tokens: int, tokens_per_s: float) -> float:
    """GPU-seconds of prefill for `tokens` at a flat prefill rate (a scenario's per-model figure)."""
    return tokens / tokens_per_s
