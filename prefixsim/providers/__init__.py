"""Provider cache policies by name; each module models one family's rules from tables.py."""
from __future__ import annotations

from typing import Any

from ..suggest import unknown
from ..errors import UserError
from .anthropic import AnthropicPolicy
from .base import Decision, Policy
from .prefix import PrefixPolicy
from .tables import CLAUDE_PLATFORMS

PROVIDERS = ("anthropic", "bedrock", "vertex", "gemini", "openai", "deepseek", "prefix", "vllm", "sglang")


def get_policy(name: str, bound: str = "pessimistic", **engine_options: Any) -> Policy:
    """The policy of provider `name`; the serving engines (vllm, sglang) take their cache settings
    as keywords (`prefixsim.engines.policy.EnginePolicy`), the provider APIs take none. `bound`
    picks the end of a documented retention range (openai, deepseek, gemini): "pessimistic" or "optimistic"."""
    if engine_options and name not in ("vllm", "sglang"):
        raise UserError(f"provider {name!r} takes no engine settings (they apply to vllm and sglang)")
    if name in CLAUDE_PLATFORMS:
        return AnthropicPolicy(CLAUDE_PLATFORMS[name])
    if name in ("openai", "deepseek", "gemini"):
        # imported here: a replay of Claude traffic never loads the automatic caches' rules
        from . import automatic

        return getattr(automatic, name)(bound)
    if name == "prefix":
        return PrefixPolicy()
    if name in ("vllm", "sglang"):
        # imported here: engines.policy imports providers.base, a top-level import would be circular
        from ..engines.policy import EnginePolicy
        return EnginePolicy(name, **engine_options)
    raise UserError(unknown("provider", name, PROVIDERS))


__all__ = ["Decision", "Policy", "PROVIDERS", "get_policy"]
