"""A price class genai-prices does not list, and the endpoint a cloud request ran on, as rules with
their sources: a missing class comes from the provider's documented multiplier of the base input
price, said so, or is refused; it is never borrowed from another class (a 1h write is not a 5m write).
docs/rules.md#pricing-the-price-overlay-and-model-lifecycles."""
from __future__ import annotations

from decimal import Decimal
from typing import Mapping

from prefixsim.core.genai import Tiered
from prefixsim.errors import UserError
from prefixsim.providers.tables import canonical_model

#: Anthropic's cache multipliers of the base input price (A-PR, 2026-08-21: "5-minute cache writes
#: 1.25 times the base input price, 1-hour cache writes 2 times, cache reads 0.1 times"); Claude on
#: Bedrock and Vertex bills the same classes (AWS, V-PC).
CLAUDE_MULTIPLIERS = {"cache_read": Decimal("0.1"), "cache_write_5m": Decimal("1.25"), "cache_write_1h": Decimal(2)}
_A_PR = "A-PR (2026-08-21) documented multiplier"
LABELS = {"input": "input", "output": "output", "cache_read": "cache read", "cache_write_5m": "5m write",
          "cache_write_1h": "1h write"}

#: Providers whose writes carry no fee and which have no 1h TTL class: a write is billed as input
#: (O-PC before GPT-5.6: "no additional fees"; DS: only hits are billed; G-VX: writing costs plain
#: input), and cached tokens with no listed cached price get no discount.
_PLAIN = {"openai": "O-PC (@25f7cbb7): no extra fee for cache writes before GPT-5.6",
          "deepseek": "DS (news0802): only cache hits are billed differently, writes cost plain input",
          "gemini": "G-VX (2026-11-30): implicit-cache writes cost plain input"}

#: Endpoints of Claude on Vertex AI and Bedrock.
ENDPOINTS = ("global", "regional", "multi-region")

#: Claude on Vertex AI: "Starting with Claude Sonnet 4.5 and all future models, Google Vertex AI
#: offers two endpoint types: global ... no pricing premium; regional ... a 10% pricing premium";
#: older models keep their existing pricing (Anthropic, "Claude on Vertex AI", platform.claude.com/
#: docs/en/build-with-claude/claude-on-vertex-ai, copies read 2026-12-01; the same 10 % for
#: multi-region endpoints). genai-prices' `google` table holds the global price.
VERTEX_PREMIUM = Decimal("1.1")
_VERTEX_SOURCE = "Claude on Vertex AI page, read 2026-12-01: regional / multi-region +10 %, Sonnet 4.5 and later"
PREMIUM_MODELS = frozenset({
    "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-6",
    "claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5", "claude-opus-5", "claude-fable-5", "claude-mythos-5",
    "claude-mythos-preview", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-1",
    "claude-fable-5-2", "claude-mythos-5-1", "claude-mythos-5-2"})

#: Bedrock inference profiles: `global.` routes worldwide; a geography's (`us.`, `eu.`, `apac.`, ...)
#: spans its regions; a bare `anthropic.` id runs in the caller's region (AWS inference profiles).
_GEO = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.")


def endpoint_of(provider: str | None, model: str, given: str | None) -> str | None:
    """The endpoint a request ran on: the one given, else what a Bedrock model id names (Vertex
    without one: global, the endpoint genai-prices prices); None off the clouds."""
    if provider not in ("bedrock", "vertex"):
        return None
    if given:
        return given
    m = model.strip().lower()
    if provider == "bedrock":
        if m.startswith("global."):
            return "global"
        return "multi-region" if m.startswith(_GEO) else "regional"
    return "global"


def endpoint_premium(provider: str | None, model: str, endpoint: str | None) -> tuple[Decimal, str] | None:
    """Vertex's regional / multi-region premium where it applies (Bedrock's is in genai-prices' own
    `regional.` rows, chosen by the model id or the endpoint)."""
    if provider == "vertex" and endpoint in ("regional", "multi-region") and canonical_model(model) in PREMIUM_MODELS:
        return VERTEX_PREMIUM, _VERTEX_SOURCE
    return None


def missing(provider: str | None, model: str, key: str, got: Mapping[str, Tiered | None]) -> tuple[Tiered, str]:
    """A class genai-prices does not list for the model: (price, where it comes from)."""
    inp = got["input"]
    assert inp is not None
    claude = provider in ("anthropic", "bedrock", "vertex") or (provider is None and canonical_model(model).startswith("claude"))
    if claude and key in CLAUDE_MULTIPLIERS:
        k = CLAUDE_MULTIPLIERS[key]
        return inp.times(k), f"{_A_PR}: {LABELS[key]} = {k} x base input"
    why = _PLAIN.get(provider or "", "no provider named: writes cost plain input" if provider is None else None)
    if why is not None:
        if key == "cache_write_5m":
            return inp, why
        if key == "cache_write_1h":
            w5 = got["cache_write_5m"] or inp
            return w5, f"no 1h TTL on {provider}: never billed (the write price stands in)"
        if key == "cache_read":
            return inp, "no cached-input price listed: cached tokens billed at the input price"
    raise UserError(f"no {key} price for {model!r} on {provider or 'this provider'}: genai-prices lists none and no "
                    "documented multiplier gives it; give one in the scenario's price sheet")
