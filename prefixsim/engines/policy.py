"""A serving engine as a provider policy, so scenarios can say `provider: vllm` or `provider: sglang`.

The engine keeps its own cache (capacity-bound, no TTL), one per model: a different model is a
different server. The runner's Store is left untouched: engine entries never expire, so its TTL and
availability states do not apply. Engines bill no write premium, so every token not read from
cache is uncached input; the saving is prefill work, given as GPU-seconds at a flat rate.

A miss the capacity caused is told apart by a shadow cache without a capacity: when it would
have read more, a block the request needed was evicted (or never fit), and the Decision's `blocked`
says so, as the store-based policies do for their TTL and eviction states.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any, Iterable

from ..model import Outcome, Request
from ..providers.base import Decision
from ..providers.tables import canonical_model
from ..errors import UserError
from ..store import State, Store
from . import make_cache
from .base import EngineKeys, PrefixCache, prefill_seconds
from .kvsize import MODELS, parse_capacity, split_capacity
from .tokens import BlockTokenIds

if TYPE_CHECKING:
    from ..scenario.schema import EngineSpec

_SOURCES = {
    "vllm": "vllm-project/vllm vllm/v1/core/kv_cache_utils.py, block_pool.py (docs/rules.md#vllm)",
    "sglang": "sgl-project/sglang python/sglang/srt/mem_cache/radix_cache.py (docs/rules.md#sglang)",
}


class EnginePolicy:
    """`decide` for a vLLM or SGLang prefix cache of `capacity` tokens per model (None: unlimited).

    `block_size` is vLLM's block size (default 16) or SGLang's page size (default 1); `encoding`
    names the tokenizer whose ids the engine matches (it should be the run's tokenizer; blocks
    whose counts differ fall back to content-derived ids); `lora` names an adapter every request
    uses; `cache_salt` is the salt of requests that carry none; `prefill_tokens_per_s` converts hit
    tokens into GPU-seconds saved.
    """

    def __init__(self, engine: str = "vllm", capacity: int | None = None, *, block_size: int | None = None,
                 eviction: str = "lru", encoding: str = "cl100k_base", lora: str = "", cache_salt: str = "",
                 prefill_tokens_per_s: float | None = None) -> None:
        make_cache(engine, capacity, block_size=block_size, eviction=eviction)  # validate early
        self.name = engine
        self.capacity = capacity
        self.block_size = block_size
        self.eviction = eviction
        self.lora = lora
        self.cache_salt = cache_salt
        self.prefill_tokens_per_s = prefill_tokens_per_s
        self.tokens = BlockTokenIds(encoding)
        self.caches: dict[str, PrefixCache] = {}
        # Unlimited twins of the caches, kept only when a capacity can evict (see the module doc).
        self.shadows: dict[str, PrefixCache] | None = None if capacity is None else {}

    def cache_for(self, model: str, caches: dict[str, PrefixCache] | None = None) -> PrefixCache:
        key = canonical_model(model)
        caches = self.caches if caches is None else caches
        cache = caches.get(key)
        if cache is None:
            capacity = self.capacity if caches is self.caches else None
            cache = caches[key] = make_cache(self.name, capacity, block_size=self.block_size,
                                             eviction=self.eviction)
        return cache

    def describe(self, model: str) -> dict[str, str]:
        unit = "block size" if self.name == "vllm" else "page size"
        d = {"provider": self.name,
             "caching": "automatic prefix caching, no TTL; hit capped at prompt length - 1",
             unit: f"{self.block_size or (16 if self.name == 'vllm' else 1)} tokens",
             "capacity": "unlimited" if self.capacity is None else f"{self.capacity:,} tokens",
             "eviction": self.eviction, "source": _SOURCES[self.name]}
        if self.lora:
            d["lora"] = self.lora
        if self.cache_salt:
            d["cache salt"] = self.cache_salt
        d["prefill rate"] = (f"{self.prefill_tokens_per_s:,.0f} tokens/s" if self.prefill_tokens_per_s else
                             "not given (engine.prefill_tokens_per_s turns cached tokens into GPU-seconds)")
        return d

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float) -> Decision:
        total = cum[-1] if cum else 0
        cache = self.cache_for(request.model)
        ids = self.tokens.request_ids(request, cum)
        keys = EngineKeys(lora=self.lora, salt=request.cache_salt or self.cache_salt)
        read = cache.match(ids, keys)
        cache.insert(ids, keys)
        # The request block holding the last token read (-1: none): a block read in part counts as read,
        # so the runner calls a partial hit a hit, not a cold miss.
        hit = bisect_left(cum, read) if read else -1
        blocked = None
        if self.shadows is not None:
            shadow = self.cache_for(request.model, self.shadows)
            unlimited = shadow.match(ids, keys)
            shadow.insert(ids, keys)
            if unlimited > read:
                # The block holding the first token not read was lost to capacity; it no longer counts
                # as (partly) read, so the runner names it whether the read stopped inside it or not.
                stop = bisect_right(cum, read)
                hit, blocked = stop - 1, (State.EVICTED, stop)
        return Decision(read=read, write_5m=0, write_1h=0, uncached=total - read, hit=hit, blocked=blocked,
                        below_minimum=False, breakpoints=())

    def gpu_seconds_saved(self, outcomes: Iterable[Outcome]) -> float:
        """Prefill GPU-seconds the cache saved over `outcomes` at this policy's prefill rate."""
        if not self.prefill_tokens_per_s:
            raise ValueError("no prefill rate given (prefill_tokens_per_s)")
        return prefill_seconds(sum(o.usage.cache_read for o in outcomes), self.prefill_tokens_per_s)


def engine_options(engine: str, spec: "EngineSpec | None", model: str | None, encoding: str) -> dict[str, Any]:
    """`EnginePolicy` keywords for `engine` from a scenario's `engine:` setting (None: the defaults).

    vLLM takes `block_size`, SGLang `page_size`, so one setting serves variants of both engines. A
    GiB capacity is sized by `kv_model`, else by the scenario's model when kvsize knows it.
    """
    opts: dict[str, Any] = {"encoding": encoding}
    if spec is None:
        return opts
    kv_model = spec.kv_model or model
    parsed = split_capacity(spec.capacity)
    if parsed is not None and parsed[1] == "gib" and (kv_model or "").lower() not in MODELS:
        raise UserError(f"engine.capacity {spec.capacity!r} is KV memory: set engine.kv_model to size it "
                        f"(known: {', '.join(MODELS)})")
    opts["capacity"] = parse_capacity(spec.capacity, kv_model)
    opts["block_size"] = spec.block_size if engine == "vllm" else spec.page_size
    for name in ("eviction", "lora", "cache_salt", "prefill_tokens_per_s"):
        value = getattr(spec, name)
        if value is not None:
            opts[name] = value
    return opts
