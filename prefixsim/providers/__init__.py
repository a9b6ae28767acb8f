"""Provider cache policies by name; each module models one family's rules from tables.py."""
from __future__ import annotations

from ..errors import UserError
from .anthropic import AnthropicPolicy
from .automatic import deepseek, openai
from .base import Decision, Policy
from .prefix import PrefixPolicy

PROVIDERS = ("anthropic", "openai", "deepseek", "prefix", "vllm", "sglang")


def get_policy(name: str) -> Policy:
    if name == "anthropic":
        return AnthropicPolicy()
    if name == "openai":
        return openai()
    if name == "deepseek":
        return deepseek()
    if name == "prefix":
        return PrefixPolicy()
    if name in ("vllm", "sglang"):
        # imported here: engines.policy imports providers.base, a top-level import would be circular
        from ..engines.policy import EnginePolicy
        return EnginePolicy(name)
    raise UserError(f"unknown provider {name!r} (valid: {', '.join(PROVIDERS)})")


__all__ = ["Decision", "Policy", "PROVIDERS", "get_policy"]
