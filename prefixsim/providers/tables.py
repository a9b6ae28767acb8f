"""Provider rules as data. Every row names its source key and the section of docs/rules.md that
states the rule with its primary source (the keys are listed in docs/rules.md#source-keys: A-PC =
Anthropic prompt-caching doc @2026-08-21, O-PC / O-OLD = OpenAI prompt-caching guide, DS = DeepSeek
context-caching guide and launch note)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UserError


@dataclass(frozen=True, slots=True)
class Row:
    value: object
    source: str


# --- Anthropic ------------------------------------------------------------------------------

ANTHROPIC_MAX_BREAKPOINTS = Row(4, "A-PC, docs/rules.md#anthropic-prefix-breakpoints-and-lookback: "
                                "at most 4 cache_control breakpoints; automatic mode uses one")
ANTHROPIC_LOOKBACK = Row(20, "A-PC, docs/rules.md#anthropic-prefix-breakpoints-and-lookback: "
                         "reads walk back at most 20 block positions per breakpoint, itself included")
ANTHROPIC_DEFAULT_TTL = Row("5m", "A-PC, docs/rules.md#anthropic-ttl-and-refresh: default 5 minutes, optional ttl '1h'")

#: Minimum cacheable prompt length by canonical model id (A-PC table @2026-08-21; older models from
#: the 2025-07 doc quoted in haystack-core-integrations PR #2051). Below it: uncached, silently.
_MIN = "A-PC, docs/rules.md#anthropic-minimum-cacheable-length"
_MIN_2025 = "A-PC 2025-07 (haystack PR #2051), docs/rules.md#anthropic-minimum-cacheable-length"
ANTHROPIC_MIN_TOKENS: dict[str, Row] = {
    **{m: Row(512, _MIN) for m in ("claude-opus-5", "claude-fable-5", "claude-mythos-5")},
    **{m: Row(2048, _MIN) for m in ("claude-opus-4-7", "claude-mythos-preview")},
    **{m: Row(4096, _MIN) for m in ("claude-opus-4-6", "claude-opus-4-5", "claude-haiku-4-5")},
    **{m: Row(1024, _MIN) for m in ("claude-opus-4-8", "claude-sonnet-5", "claude-sonnet-4-6",
                                    "claude-sonnet-4-5", "claude-opus-4-1", "claude-opus-4",
                                    "claude-sonnet-4")},
    "claude-haiku-3-5": Row(2048, _MIN),
    **{m: Row(1024, f"{_MIN_2025}: Opus/Sonnet 3.x")
       for m in ("claude-sonnet-3-7", "claude-sonnet-3-5", "claude-opus-3")},
    "claude-haiku-3": Row(2048, f"{_MIN_2025}: Haiku 3"),
}

#: Claude Code's two TTL buckets (CC-PC "Which TTL each request gets", archived 2026-10-08): the main
#: conversation (interactive turns, -p runs, SDK turns and the helpers run inline with them) gets 1h
#: on a subscription within plan usage, else 5m; everything else (sub-agents, workflows, teammates,
#: forks, compaction, titles) gets 5m unless the user chooses a TTL for that bucket.
CLAUDE_CODE_OTHER_TTL = Row("5m", "CC-PC: only the main conversation gets 1h (subscription within plan); "
                                  "sub-agents, workflows, forks and compaction write 5m "
                                  "(docs/rules.md#claude-code-harness)")


def claude_code_ttl(main: bool, asked: str) -> str:
    """The TTL Claude Code writes with in a bucket when the main conversation runs at `asked`."""
    return asked if main else str(CLAUDE_CODE_OTHER_TTL.value)


#: Whether the API keeps thinking blocks of earlier assistant turns in the prompt (A-TH: the thinking
#: guide, "Thinking block preservation by model", llms-txt-archive/anthropic-platform
#: docs/en/build-with-claude/thinking.md @7967a16b, 2026-08-21; A-PC "What invalidates the cache",
#: same sync). Keep-all: Opus 4.5 and later Opus, Sonnet 4.6 and later Sonnet, Fable 5, Mythos 5,
#: Mythos Preview. Last-turn-only: earlier Opus and Sonnet, all Haiku through Haiku 4.5: once a user
#: message that is not only tool results is sent, every earlier turn's thinking is stripped.
_KEEP = "A-TH 2026-08-21: keeps thinking blocks of all prior turns (docs/rules.md#anthropic-thinking-blocks-and-effort)"
_STRIP = ("A-TH 2026-08-21: keeps the last turn's thinking only; after a non-tool-result user message "
          "earlier thinking blocks are stripped from the prompt (docs/rules.md#anthropic-thinking-blocks-and-effort)")
ANTHROPIC_KEEPS_THINKING: dict[str, Row] = {
    **{m: Row(True, _KEEP) for m in ("claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6",
                                     "claude-opus-4-5", "claude-sonnet-5", "claude-sonnet-4-6", "claude-fable-5",
                                     "claude-mythos-5", "claude-mythos-preview")},
    **{m: Row(False, _STRIP) for m in ("claude-opus-4-1", "claude-opus-4", "claude-opus-3", "claude-sonnet-4-5",
                                      "claude-sonnet-4", "claude-sonnet-3-7", "claude-sonnet-3-5",
                                      "claude-haiku-4-5", "claude-haiku-3-5", "claude-haiku-3")},
}


#: The effort every model runs at when a request sets none (A-EF: platform.claude.com/docs/en/
#: build-with-claude/effort @7967a16b, 2026-08-21: 'Setting effort to "high" produces exactly the
#: same behavior as omitting the effort parameter'; A-PC: set to the default it does not invalidate).
ANTHROPIC_DEFAULT_EFFORT = Row("high", "A-EF 2026-08-21: effort 'high' is the default, the same as omitting it "
                                       "(docs/rules.md#anthropic-thinking-blocks-and-effort)")

#: Where the thinking configuration and the resolved effort enter the prompt, hence which layers a
#: change of either invalidates (A-PC 2026-08-21 "What invalidates the cache": messages always; tools
#: and system "model-specific", on models that render the configuration ahead of them; no list given).
_CONFIG_AHEAD = ("CC-PC 2026-10-08: 'on most models, each effort level has its own cache, so changing effort "
                 "mid-session recomputes the entire request'; A-PC 2026-08-21: thinking parameters have the same "
                 "model-specific effect as effort; per-model placement unpublished (UNCONFIRMED) "
                 "(docs/rules.md#anthropic-thinking-blocks-and-effort)")
_CONFIG_MESSAGES = ("A-PC up to 2026-07-23 (@544a0da6): 'Cached system prompts and tools will be reused when "
                    "thinking parameters change'; these models take no effort parameter "
                    "(docs/rules.md#anthropic-thinking-blocks-and-effort)")
ANTHROPIC_CONFIG_LAYER: dict[str, Row] = {
    **{m: Row("tools", _CONFIG_AHEAD) for m in ("claude-opus-5", "claude-opus-4-8", "claude-opus-4-7",
                                                "claude-opus-4-6", "claude-opus-4-5", "claude-sonnet-5",
                                                "claude-sonnet-4-6", "claude-fable-5", "claude-mythos-5",
                                                "claude-mythos-preview")},
    **{m: Row("messages", _CONFIG_MESSAGES) for m in ("claude-opus-4-1", "claude-opus-4", "claude-opus-3",
                                                      "claude-sonnet-4-5", "claude-sonnet-4", "claude-sonnet-3-7",
                                                      "claude-sonnet-3-5", "claude-haiku-4-5", "claude-haiku-3-5",
                                                      "claude-haiku-3")},
}


def anthropic_config_layer(model: str) -> str:
    """'tools' when a thinking or effort change invalidates the whole prompt, else 'messages'
    (also for a model the tables do not know: the policy names it as an error of its own)."""
    row = ANTHROPIC_CONFIG_LAYER.get(canonical_model(model))
    return str(row.value) if row is not None else "messages"


def anthropic_strips_thinking(model: str) -> bool:
    """True when earlier turns' thinking blocks leave the prompt (an unknown model keeps them: the
    policy names an unknown model as an error of its own)."""
    row = ANTHROPIC_KEEPS_THINKING.get(canonical_model(model))
    return row is not None and not row.value


_DATE = re.compile(r"-(\d{8})$")
_OLD_STYLE = re.compile(r"^claude-(\d)(?:-(\d))?-(opus|sonnet|haiku)(.*)$")


def canonical_model(model: str) -> str:
    """`claude-sonnet-4-5-20250929`, `anthropic/claude-3-5-haiku-latest`, `us.anthropic.claude-…-v1:0`
    -> the id our tables use (`claude-sonnet-4-5`, `claude-haiku-3-5`, …). Other ids pass through lowercased."""
    m = model.strip().lower()
    m = m.rsplit("/", 1)[-1]
    m = re.sub(r"^(?:[a-z]{2,4}\.)?anthropic\.", "", m)       # Bedrock inference profiles
    m = re.sub(r"-v\d+(?::\d+)?$", "", m)
    m = re.sub(r"-latest$", "", m)
    m = _DATE.sub("", m)
    old = _OLD_STYLE.match(m)
    if old:
        major, minor, family, rest = old.groups()
        m = f"claude-{family}-{major}" + (f"-{minor}" if minor else "") + rest
    m = re.sub(r"^(claude-(?:opus|sonnet|haiku)-4)-0$", r"\1", m)
    return m


def anthropic_min_tokens(model: str) -> Row:
    row = ANTHROPIC_MIN_TOKENS.get(canonical_model(model))
    if row is None:
        raise UserError(f"unknown Anthropic model {model!r} (known: {', '.join(sorted(ANTHROPIC_MIN_TOKENS))})")
    return row


# --- Automatic prefix caching (OpenAI, DeepSeek) --------------------------------------------

@dataclass(frozen=True, slots=True)
class AutoRule:
    """One family's automatic caching: hits counted from `min_tokens` in `increment` steps."""

    min_tokens: int
    increment: int
    ttl: float            # idle lifetime, refreshed by a hit
    max_lifetime: float   # hard cap from the first write
    write_multiplier_applies: bool  # writes billed at a premium (GPT-5.6+), else free
    source: str


_OPENAI_IN_MEMORY = AutoRule(1024, 128, 300.0, 3600.0, False,
                             "O-PC, docs/rules.md#openai-retention: in_memory retention 5–10 min idle "
                             "(lower bound used), max 1 h; min 1,024 tokens, hits in 128-token increments")
_OPENAI_24H = AutoRule(1024, 128, 86400.0, 86400.0, False,
                       "O-PC, docs/rules.md#openai-retention: 24h retention default for "
                       "gpt-5.5/5.4/5.2/5.1/gpt-5/gpt-5-codex/gpt-4.1; min 1,024 tokens, 128-token increments")
_OPENAI_56 = AutoRule(1024, 128, 1800.0, 1800.0, True,
                      "O-PC, docs/rules.md#openai-retention: GPT-5.6+ writes 1.25x, reads 0.1x, TTL 30m only; "
                      "min 1,024 visible tokens")

#: Longest matching prefix of the canonical id wins.
OPENAI_RULES: dict[str, AutoRule] = {
    "gpt-5.6": _OPENAI_56, "gpt-5.7": _OPENAI_56, "gpt-6": _OPENAI_56,
    "gpt-5.5": _OPENAI_24H, "gpt-5.4": _OPENAI_24H, "gpt-5.2": _OPENAI_24H, "gpt-5.1": _OPENAI_24H,
    "gpt-5": _OPENAI_24H, "gpt-4.1": _OPENAI_24H,
    "gpt-4o": _OPENAI_IN_MEMORY, "o1": _OPENAI_IN_MEMORY, "o3": _OPENAI_IN_MEMORY,
    "o4": _OPENAI_IN_MEMORY, "gpt-5.3": _OPENAI_IN_MEMORY,
}

DEEPSEEK_RULE = AutoRule(64, 64, 3600.0, 3600.0, False,
                         "DS news0802, docs/rules.md#deepseek: 64-token units, <64 not cached, cleared "
                         "after hours–days (1 h assumed: the lower bound of 'hours')")


def openai_rule(model: str) -> AutoRule:
    m = canonical_model(model)
    best = max((k for k in OPENAI_RULES if m.startswith(k)), key=len, default=None)
    if best is None:
        raise UserError(f"unknown OpenAI model {model!r} (known families: {', '.join(sorted(OPENAI_RULES))})")
    return OPENAI_RULES[best]
