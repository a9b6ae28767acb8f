"""The cache policies by provider name: the provider APIs' (this folder) and the serving engines'
(`prefixsim.engines.policy`)."""
from __future__ import annotations

import re
from typing import Any

from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown
from prefixsim.providers.anthropic import AnthropicPolicy
from prefixsim.providers.base import Policy
from prefixsim.providers.bedrock import BedrockPolicy
from prefixsim.providers.others import OTHER_PROVIDERS, other_rule
from prefixsim.providers.prefix import PrefixPolicy
from prefixsim.providers.model_ids import canonical_model
from prefixsim.providers.tables import CLAUDE_PLATFORMS, OPENAI_RULES

PROVIDERS = ("anthropic", "bedrock", "vertex", "gemini", "openai", "deepseek", "prefix", "vllm", "sglang",
             *OTHER_PROVIDERS)


def get_policy(name: str, bound: str = "printed", *, listed_only: bool = True, **engine_options: Any) -> Policy:
    """The policy of provider `name`; the serving engines (vllm, sglang) take their cache settings
    as keywords (`prefixsim.engines.policy.EnginePolicy`), the provider APIs take none. `bound`
    picks the figure of a documented retention range (openai, deepseek, gemini): "printed" (what a run
    prints: a measured rule's figure, else the pessimistic end), "pessimistic" or "optimistic".
    `listed_only=False` (a replay of real traffic): a model the provider's tables do not list takes
    the provider's rule for unlisted models (providers/unlisted.py) instead of being refused."""
    if engine_options and name not in ("vllm", "sglang"):
        raise UserError(f"provider {name!r} takes no engine settings (they apply to vllm and sglang)")
    if name == "bedrock":   # every model Bedrock serves: Claude, Nova, and the rest undocumented
        return BedrockPolicy()
    if name in CLAUDE_PLATFORMS:
        return AnthropicPolicy(CLAUDE_PLATFORMS[name], listed_only=listed_only)
    if name in ("openai", "deepseek", "gemini"):
        from prefixsim.providers import automatic   # lazy: a Claude replay never loads the automatic caches' rules

        return getattr(automatic, name)(bound, listed_only)
    if name in OTHER_PROVIDERS:   # OpenAI-compatible endpoints of other providers (providers/others.py)
        from prefixsim.providers.automatic import AutomaticPolicy   # lazy: as for the automatic caches above

        return AutomaticPolicy(name, other_rule(name), bound)
    if name == "prefix":
        return PrefixPolicy()
    if name in ("vllm", "sglang"):
        from prefixsim.engines.policy import EnginePolicy   # lazy: a provider API's replay never loads the serving engines
        return EnginePolicy(name, **engine_options)
    raise UserError(unknown("provider", name, PROVIDERS, show=len(PROVIDERS)))


#: OpenAI's own model names: an unknown one of them (a misspelling) is named as such, not replayed as "other".
_OPENAI_NAMES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-")


def family_provider(model: str, strict: bool = False) -> str:
    """The provider whose rules know a model by its family, else "other" (a router's id, a scenario's
    `model:` without `provider:`); `strict`: OpenAI only for the families its tables list (a router's
    `openai/gpt-oss-120b` is open weights, not OpenAI's API)."""
    m = canonical_model(model)
    if m.startswith("claude-"):
        return "anthropic"
    if m.startswith("gemini-"):
        return "gemini"
    if m.startswith("deepseek"):
        return "deepseek"
    if m.startswith(tuple(OPENAI_RULES) if strict else _OPENAI_NAMES):
        return "openai"
    return "other"


#: A model id in a cloud's own spelling names the cloud that serves it, not only the maker: Bedrock's base
#: ids and inference profiles (`anthropic.claude-…-v1:0`, `us.` / `eu.` / `apac.` / `us-gov.` / `global.`
#: `anthropic.…`; `amazon.nova-…`) are priced only by AWS (genai-prices lists them under aws), and
#: Vertex AI's `claude-…@YYYYMMDD` is its own spelling of a Claude model on Google Cloud.
_BEDROCK_ID = re.compile(r"^(?:[a-z-]+\.)?(?:anthropic\.claude|amazon\.nova)-")
_VERTEX_ID = re.compile(r"^claude-[a-z0-9.-]+@\d{8}$")


def model_provider(model: str, strict: bool = False) -> str:
    """The provider a model id alone names, the one place every path infers it (a replayed export, a
    router log, a scenario without `provider:`, a break-even study, the report; issue 34): a cloud's
    spelling names that cloud (bedrock, vertex), any other id its family's provider (family_provider)."""
    m = model.strip().lower().rsplit("/", 1)[-1]
    if _BEDROCK_ID.match(m):
        return "bedrock"
    if _VERTEX_ID.match(m):
        return "vertex"
    return family_provider(model, strict)


def claude_platform(model: str) -> str:
    """The Claude platform (anthropic, bedrock, vertex) whose rules and prices a Claude id's spelling
    names: a break-even study's check scenario runs there, as the study's closed form prices there."""
    p = model_provider(model)
    return p if p in CLAUDE_PLATFORMS else "anthropic"


def priced_provider(model: str) -> str:
    """The provider `prefixsim prices` prices a bare model id on: the one its id names (model_provider),
    or one line asking for --provider."""
    if not model.strip():
        raise UserError("no model given")
    p = model_provider(model)
    if p == "other":
        raise UserError(f"no provider known for model {model!r}; give one with --provider")
    return p
