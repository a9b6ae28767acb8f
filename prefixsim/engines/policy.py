"""A serving engine as a provider policy, so scenarios can say `provider: vllm` or `provider: sglang`.

The engine keeps its own cache (capacity-bound, no TTL), one per model: a different model is a
different server. The runner's Store is left untouched: engine entries never expire, so its TTL and
availability states do not apply. Engines bill no write premium, so every token not read from
cache is uncached input; the saving is prefill work, given as GPU-seconds at a flat rate.
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Iterable

from ..model import Outcome, Request
from ..providers.base import Decision
from ..providers.tables import canonical_model
from ..store import Store
from . import make_cache
from .base import EngineKeys, PrefixCache, prefill_seconds
from .tokens import BlockTokenIds

_SOURCES = {
    "vllm": "vllm-project/vllm vllm/v1/core/kv_cache_utils.py, block_pool.py (cache-semantics.md §6)",
    "sglang": "sgl-project/sglang python/sglang/srt/mem_cache/radix_cache.py (cache-semantics.md §6)",
}


class EnginePolicy:
    """`decide` for a vLLM or SGLang prefix cache of `capacity` tokens per model (None: unlimited).

    `block_size` is vLLM's block size (default 16) or SGLang's page size (default 1); `encoding`
    names the tokenizer whose ids the engine matches (it should be the run's tokenizer; blocks
    whose counts differ fall back to content-derived ids); `lora` names an adapter every request
    uses; `prefill_tokens_per_s` converts hit tokens into GPU-seconds saved.
    """

    def __init__(self, engine: str = "vllm", capacity: int | None = None, *, block_size: int | None = None,
                 eviction: str = "lru", encoding: str = "cl100k_base", lora: str = "",
                 prefill_tokens_per_s: float | None = None) -> None:
        make_cache(engine, capacity, block_size=block_size, eviction=eviction)  # validate early
        self.name = engine
        self.capacity = capacity
        self.block_size = block_size
        self.eviction = eviction
        self.lora = lora
        self.prefill_tokens_per_s = prefill_tokens_per_s
        self.tokens = BlockTokenIds(encoding)
        self.caches: dict[str, PrefixCache] = {}

    def cache_for(self, model: str) -> PrefixCache:
        key = canonical_model(model)
        cache = self.caches.get(key)
        if cache is None:
            cache = self.caches[key] = make_cache(self.name, self.capacity, block_size=self.block_size,
                                                  eviction=self.eviction)
        return cache

    def describe(self, model: str) -> dict[str, str]:
        unit = "block size" if self.name == "vllm" else "page size"
        d = {"provider": self.name,
             "caching": "automatic prefix caching, no TTL; hit capped at prompt length - 1",
             unit: f"{self.block_size or (16 if self.name == 'vllm' else 1)} tokens",
             "capacity": "unlimited" if self.capacity is None else f"{self.capacity:,} tokens",
             "eviction": self.eviction, "source": _SOURCES[self.name]}
        if self.prefill_tokens_per_s:
            d["prefill rate"] = f"{self.prefill_tokens_per_s:,.0f} tokens/s"
        return d

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float) -> Decision:
        total = cum[-1] if cum else 0
        cache = self.cache_for(request.model)
        ids = self.tokens.request_ids(request, cum)
        keys = EngineKeys(lora=self.lora, salt=request.cache_salt)
        read = cache.match(ids, keys)
        cache.insert(ids, keys)
        # The request block holding the last token read (-1: none): a block read in part counts as read,
        # so the runner calls a partial hit a hit, not a cold miss.
        hit = bisect_left(cum, read) if read else -1
        return Decision(read=read, write_5m=0, write_1h=0, uncached=total - read, hit=hit, blocked=None,
                        below_minimum=False, breakpoints=())

    def gpu_seconds_saved(self, outcomes: Iterable[Outcome]) -> float:
        """Prefill GPU-seconds the cache saved over `outcomes` at this policy's prefill rate."""
        if not self.prefill_tokens_per_s:
            raise ValueError("no prefill rate given (prefill_tokens_per_s)")
        return prefill_seconds(sum(o.usage.cache_read for o in outcomes), self.prefill_tokens_per_s)
