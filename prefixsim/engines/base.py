"""The narrow interface both engine caches implement, and the one way a request uses a cache.

Shape from SGLang's `BasePrefixCache` (match_prefix / insert / evict) and vLLM's `KVCacheManager`
(find the longest cache hit, then allocate and cache the request's full blocks): a request first
matches, then inserts what it computed, so everything it read or wrote becomes recent together.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence


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

    def match(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Tokens of `tokens` the engine would read from cache (the engine's alignment and n-1 cap)."""
        ...

    def insert(self, tokens: Sequence[int], keys: EngineKeys = EngineKeys()) -> int:
        """Cache what a finished request computed; returns tokens newly stored. Never exceeds capacity."""
        ...

    def evict(self, num_tokens: int) -> int:
        """Evict at least `num_tokens` unreferenced tokens if there are that many; returns tokens freed."""
        ...


def serve(cache: PrefixCache, prompt: Sequence[int], output: Sequence[int] = (),
          keys: EngineKeys = EngineKeys()) -> Served:
    """Run one request: match its prompt, then cache prompt plus output (both engines cache the full
    blocks generated tokens fill: vLLM `cache_full_blocks`, SGLang `cache_finished_req`)."""
    hit = cache.match(prompt, keys)
    seq = list(prompt) + list(output) if output else prompt
    stored = cache.insert(seq, keys)
    return Served(len(prompt), hit, stored)


def prefill_seconds(tokens: int, tokens_per_s: float) -> float:
    """GPU-seconds of prefill for `tokens` at a flat prefill rate (a scenario's per-model figure)."""
    return tokens / tokens_per_s
