"""Provider cache policies by name; each module models one family's rules from tables.py."""
from __future__ import annotations

from typing import Any

from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown
from prefixsim.providers.anthropic import AnthropicPolicy
from prefixsim.providers.base import Decision, Policy
from prefixsim.providers.prefix import PrefixPolicy
from prefixsim.providers.tables import CLAUDE_PLATFORMS

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
        from prefixsim.providers import automatic

        return getattr(automatic, name)(bound)
    if name == "prefix":
        return PrefixPolicy()
    if name in ("vllm", "sglang"):
        # imported here: engines.policy imports providers.base, a top-level import would be circular
        from prefixsim.engines.policy import EnginePolicy
        return EnginePolicy(name, **engine_options)
    raise UserError(unknown("provider", name, PROVIDERS))


__all__ = ["Decision", "Policy", "PROVIDERS", "get_policy"]
