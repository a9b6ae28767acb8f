"""Prompt caching on Amazon Bedrock, every model it serves: Claude with the Claude-on-Bedrock rules
(tables.BEDROCK over the Anthropic policy), Amazon Nova with its own rows (AWS-NOVA), and any other
model with a stated default, "rules undocumented", never a refusal: a Converse log of Llama or Mistral
still replays, its observation the truth the default is measured against."""
from __future__ import annotations

import re

from prefixsim.providers.anthropic import AnthropicPolicy
from prefixsim.providers.model_ids import canonical_model
from prefixsim.providers.tables import ANTHROPIC_MIN_TOKENS, BEDROCK, PLATFORM_MIN_TOKENS, Sourced
from prefixsim.providers.unlisted import UNLISTED_CLAUDE

#: Amazon Nova on Bedrock (AWS-NOVA: the Bedrock page's supported-models table as Portkey's Bedrock
#: prompt-caching page reproduces it; aws-samples' Nova notebook; strands-agents issue #449): explicit
#: cachePoint checkpoints in `system` and `messages` only (no tools field), each at least 1,000
#: tokens, at most 4 a request, up to 32K tokens cached; 5-minute TTL reset by each hit, no 1h.
#: Keys are the Nova family as `nova_family` reads a model id (`us.amazon.nova-lite-v1:0` -> nova-lite).
_NOVA = ("AWS-NOVA, docs/rules.md#bedrock-amazon-nova: min 1,000 tokens per checkpoint, at most 4, system and "
         "messages only; TTL 5m reset by a hit")
NOVA_MIN_TOKENS: dict[str, Sourced] = {m: Sourced(1000, _NOVA) for m in ("nova-micro", "nova-lite", "nova-pro",
                                                                       "nova-premier")}
#: A Nova model takes no cachePoint in `toolConfig.tools`; a checkpoint in the messages caches the
#: tool configuration with everything else before it (strands-agents issue #449).
NOVA_TOOLS_CHECKPOINT = Sourced(False, "AWS-NOVA: 'tools caching is not supported for Amazon Nova models'; a "
                                       "messages checkpoint caches the tool configuration (docs/rules.md#bedrock-amazon-nova)")
#: On Nova the tool choice is part of the prefix ahead of the system prompt: in pydantic-ai's
#: `test_bedrock_single_tool_choice_preserves_cache[nova]` a request differing only in `toolChoice`
#: wrote the system checkpoint again (2,492 tokens) and the next request with the first choice read it.
NOVA_TOOL_CHOICE_LAYER = Sourced("tools", "OBS (tests/data/bedrock-api, nova tool-choice cassette), "
                                          "docs/rules.md#bedrock-amazon-nova")
#: A model Bedrock serves whose prompt caching no page documents (Llama, Mistral, DeepSeek, Qwen,
#: gpt-oss ... on Converse, a Claude id our table lacks): replayed with the checkpoint rules of Claude
#: and Nova, no minimum (none is published) and a 5-minute TTL; the run says "rules undocumented".
BEDROCK_UNDOCUMENTED = Sourced(0, "rules undocumented: cachePoint checkpoints as on Claude and Nova (at most 4, "
                                  "20-block lookback, 5m TTL), no minimum assumed (docs/rules.md#bedrock-models-without-documented-caching)")
_NOVA_ID = re.compile(r"(?:^|[.])amazon\.(nova-[a-z0-9-]+?)(?:-v\d+(?::\d+)?)?$")


def nova_family(model: str) -> str | None:
    """`us.amazon.nova-lite-v1:0`, `amazon.nova-pro-v1:0` -> `nova-lite`, `nova-pro`; None for another id."""
    m = _NOVA_ID.search(model.strip().lower().rsplit("/", 1)[-1])
    return m.group(1) if m else None


def bedrock_min_tokens(model: str) -> tuple[Sourced, bool]:
    """(the cacheable minimum of a model served by Bedrock, whether its rules are documented): Claude
    from the Anthropic table, Nova from its own; any other model the undocumented default."""
    row = PLATFORM_MIN_TOKENS.get("bedrock", {}).get(canonical_model(model)) or ANTHROPIC_MIN_TOKENS.get(
        canonical_model(model))   # Bedrock's own minimum first (Opus 4.7: 4,096), else the Claude API's
    if row is not None:
        return row, True
    family = nova_family(model)
    if family is not None and family in NOVA_MIN_TOKENS:
        return NOVA_MIN_TOKENS[family], True
    if canonical_model(model).startswith("claude"):
        return UNLISTED_CLAUDE, False   # a Claude id the table lacks, as on the Claude API's replay
    return BEDROCK_UNDOCUMENTED, False


class BedrockPolicy(AnthropicPolicy):
    """The Anthropic policy on the Bedrock platform, whose minimum comes from `bedrock_min_tokens`."""

    def __init__(self) -> None:
        super().__init__(BEDROCK)

    def minimum(self, model: str) -> Sourced:
        return bedrock_min_tokens(model)[0]

    def spaces(self, model: str) -> bool:
        # Nova's row of the same table ("minimum tokens per checkpoint") is read as Claude 3.x's is
        return super().spaces(model) or (nova_family(model) or "") in NOVA_MIN_TOKENS

    def describe(self, model: str) -> dict[str, str]:
        out = super().describe(model)
        row, documented = bedrock_min_tokens(model)
        if nova_family(model) and documented:
            out["platform rules"] = row.source
            out["tools"] = NOVA_TOOLS_CHECKPOINT.source
        elif not documented:
            out["platform rules"] = row.source
        return out


def documented(model: str) -> bool:
    """Whether Bedrock documents the model's prompt caching (Claude in our table, or Nova 1)."""
    return bedrock_min_tokens(model)[1]
