"""Serving-engine prefix caches (vLLM block pool, SGLang radix tree), trace replay and routing.

Unlike the provider APIs these caches have no TTL: they hold a fixed number of KV tokens and evict
by policy (docs/rules.md#vllm, docs/rules.md#sglang).
"""
from __future__ import annotations

from prefixsim.engines.base import EngineKeys, PrefixCache, Served, serve
from prefixsim.engines.kvsize import MODELS, KvModel, capacity_tokens, kv_bytes_per_token
from prefixsim.engines.sglang import RadixCache
from prefixsim.engines.vllm import VllmCache
from prefixsim.errors import UserError

ENGINES = ("vllm", "sglang")


def make_cache(engine: str, capacity: int | None = None, *, block_size: int | None = None,
               eviction: str = "lru") -> PrefixCache:
    """A fresh cache of `engine` ("vllm" or "sglang") holding at most `capacity` tokens (None: unlimited).

    `block_size` is vLLM's block size or SGLang's page size (defaults 16 and 1, as the engines ship).
    """
    if engine == "vllm":
        return VllmCache(capacity, block_size=block_size or 16, eviction=eviction)
    if engine == "sglang":
        return RadixCache(capacity, page_size=block_size or 1, eviction=eviction)
    raise UserError(f"unknown engine {engine!r} (valid: {', '.join(ENGINES)})")


__all__ = ["ENGINES", "EngineKeys", "KvModel", "MODELS", "PrefixCache", "RadixCache", "Served",
           "VllmCache", "capacity_tokens", "kv_bytes_per_token", "make_cache", "serve"]
