"""Provider rules as data. Every row names its source key and the section of docs/rules.md that
states the rule with its primary source (the keys are listed in docs/rules.md#source-keys: A-PC =
Anthropic prompt-caching doc @2026-08-21, O-PC / O-OLD = OpenAI prompt-caching guide, DS = DeepSeek
context-caching guide and launch note)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from prefixsim.errors import UserError
from prefixsim.model import TTL_SECONDS
from prefixsim.io.suggest import unknown
from prefixsim.providers.model_ids import canonical_model

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Sourced(Generic[T]):
    value: T
    source: str


# --- Anthropic ------------------------------------------------------------------------------

ANTHROPIC_MAX_BREAKPOINTS = Sourced(4, "A-PC, docs/rules.md#anthropic-prefix-breakpoints-and-lookback: "
                                "at most 4 cache_control breakpoints; automatic mode uses one")
ANTHROPIC_LOOKBACK = Sourced(20, "A-PC, docs/rules.md#anthropic-prefix-breakpoints-and-lookback: "
                         "reads walk back at most 20 block positions per breakpoint, itself included")
ANTHROPIC_DEFAULT_TTL = Sourced("5m", "A-PC, docs/rules.md#anthropic-ttl-and-refresh: default 5 minutes, optional ttl '1h'")
#: Seconds past its TTL an entry may still be read: the TTL is a minimum and deletion follows
#: "promptly, though not immediately"; in public transcripts entries were read up to 310 s after the
#: previous request's start under a 5-minute TTL, and gone from 301 s. A miss in that band says so.
ANTHROPIC_TTL_SLACK = Sourced(15, "A-PC (the TTL is a minimum, deletion 'promptly, though not immediately'); OBS "
                                  "(docs/rules.md#anthropic-ttl-and-refresh: read up to 310 s, gone from 301 s)")
#: Seconds past its TTL an entry is still read (from the start of the request that wrote or last read
#: it): in 18 public sources, 26 of 35 follow-ups read at 300-310 s, 5 of 14 at 310-315 s; 5 s is the widest
#: grace that makes no source and no session worse (docs/rules.md#anthropic-ttl-and-refresh).
ANTHROPIC_TTL_GRACE = Sourced(5, "A-PC (the TTL is a minimum, deletion 'promptly, though not immediately'); OBS "
                                 "(docs/rules.md#anthropic-ttl-and-refresh: 26 of 35 read at 300-310 s)")


def anthropic_lifetime(ttl: str) -> float:
    """Seconds past its latest write or read that an Anthropic entry of `ttl` ("5m", "1h") is still
    read: its TTL and ANTHROPIC_TTL_GRACE (the closed forms and audits count as the simulator does)."""
    return float(TTL_SECONDS[ttl] + ANTHROPIC_TTL_GRACE.value)

#: Minimum cacheable prompt length by canonical model id (A-PC table @2026-08-21; older models from
#: the 2025-07 doc quoted in haystack-core-integrations PR #2051). Below it: uncached, silently.
_MIN = "A-PC, docs/rules.md#anthropic-minimum-cacheable-length"
_MIN_2025 = "A-PC 2025-07 (haystack PR #2051), docs/rules.md#anthropic-minimum-cacheable-length"
ANTHROPIC_MIN_TOKENS: dict[str, Sourced] = {
    **{m: Sourced(512, _MIN) for m in ("claude-opus-5", "claude-fable-5", "claude-mythos-5")},
    **{m: Sourced(2048, _MIN) for m in ("claude-opus-4-7", "claude-mythos-preview")},
    **{m: Sourced(4096, _MIN) for m in ("claude-opus-4-6", "claude-opus-4-5", "claude-haiku-4-5")},
    **{m: Sourced(1024, _MIN) for m in ("claude-opus-4-8", "claude-sonnet-5", "claude-sonnet-4-6",
                                    "claude-sonnet-4-5", "claude-opus-4-1", "claude-opus-4",
                                    "claude-sonnet-4")},
    "claude-haiku-3-5": Sourced(2048, _MIN),
    **{m: Sourced(1024, f"{_MIN_2025}: Opus/Sonnet 3.x")
       for m in ("claude-sonnet-3-7", "claude-sonnet-3-5", "claude-opus-3")},
    "claude-haiku-3": Sourced(2048, f"{_MIN_2025}: Haiku 3"),
    # The models after the 2026-08-21 copy (genai-prices 0.2.3 prices them): 512 for Opus 5.5, Sonnet 5.5 and
    # Fable / Mythos 5.1 in third-party quotes of the page of October 2026 (UNCONFIRMED; 5.2 taken as 5.1);
    # Haiku 5.5: no figure found, so Haiku 4.5's 4,096, the pessimistic end of 512-4,096 (prefixsim's assumption).
    **{m: Sourced(512, f"{_MIN}: UNCONFIRMED, third-party quotes of the October 2026 page")
       for m in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-mythos-5-1", "claude-fable-5-2",
                 "claude-mythos-5-2")},
    "claude-haiku-5-5": Sourced(4096, f"{_MIN}: no published figure; Haiku 4.5's, the pessimistic end "
                                      "(prefixsim's assumption)"),
}

#: Amazon Bedrock's own minimums where they differ from the Claude API's: 4,096 tokens per checkpoint
#: for Claude Opus 4.7 and Mythos Preview (AWS prompt-caching page, supported-models table, as issue
#: 31's audit read it; not in the copies read here: UNCONFIRMED).
_MIN_AWS = "AWS, docs/rules.md#anthropic-minimum-cacheable-length: Bedrock's supported-models table (UNCONFIRMED)"
PLATFORM_MIN_TOKENS: dict[str, dict[str, Sourced]] = {
    "bedrock": {m: Sourced(4096, _MIN_AWS) for m in ("claude-opus-4-7", "claude-mythos-preview")},
}

#: Claude Code's two TTL buckets (CC-PC "Which TTL each request gets", archived 2026-10-08): the main
#: conversation (interactive turns, -p runs, SDK turns and the helpers run inline with them) gets 1h
#: on a subscription within plan usage, else 5m; everything else (sub-agents, workflows, teammates,
#: forks, compaction, titles) gets 5m unless the user chooses a TTL for that bucket.
CLAUDE_CODE_OTHER_TTL = Sourced("5m", "CC-PC: only the main conversation gets 1h (subscription within plan); "
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
ANTHROPIC_KEEPS_THINKING: dict[str, Sourced] = {
    **{m: Sourced(True, _KEEP) for m in ("claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6",
                                     "claude-opus-4-5", "claude-sonnet-5", "claude-sonnet-4-6", "claude-fable-5",
                                     "claude-mythos-5", "claude-mythos-preview")},
    **{m: Sourced(False, _STRIP) for m in ("claude-opus-4-1", "claude-opus-4", "claude-opus-3", "claude-sonnet-4-5",
                                      "claude-sonnet-4", "claude-sonnet-3-7", "claude-sonnet-3-5",
                                      "claude-haiku-4-5", "claude-haiku-3-5", "claude-haiku-3")},
}


#: The effort every model runs at when a request sets none (A-EF: platform.claude.com/docs/en/
#: build-with-claude/effort @7967a16b, 2026-08-21: 'Setting effort to "high" produces exactly the
#: same behavior as omitting the effort parameter'; A-PC: set to the default it does not invalidate).
ANTHROPIC_DEFAULT_EFFORT = Sourced("high", "A-EF 2026-08-21: effort 'high' is the default, the same as omitting it "
                                       "(docs/rules.md#anthropic-thinking-blocks-and-effort)")

#: Where the resolved effort enters the prompt, hence which layers a change of it invalidates (A-PC
#: 2026-08-21 "What invalidates the cache": messages always; tools and system "model-specific"; no list
#: given). The thinking configuration enters at the messages on every model (`THINKING_LAYER`).
_CONFIG_AHEAD = ("CC-PC 2026-10-08: 'on most models, each effort level has its own cache, so changing effort "
                 "mid-session recomputes the entire request'; per-model placement unpublished (UNCONFIRMED) "
                 "(docs/rules.md#anthropic-thinking-blocks-and-effort)")
#: A change of the thinking configuration invalidates the messages and keeps tools and system, on every model.
THINKING_LAYER = Sourced("messages", (
    "A-PC @544a0da6: 'Cached system prompts and tools will be reused when thinking parameters change'; A-PC 2026-08-21: "
    "model-specific, no list (UNCONFIRMED); OBS: 4 of 4 switches on Opus 4.5 / 4.6 in 2 public Claude Code sources "
    "read tools and system (docs/rules.md#anthropic-thinking-blocks-and-effort)"))
_CONFIG_MESSAGES = ("A-PC up to 2026-07-23 (@544a0da6): 'Cached system prompts and tools will be reused when "
                    "thinking parameters change'; these models take no effort parameter "
                    "(docs/rules.md#anthropic-thinking-blocks-and-effort)")
ANTHROPIC_CONFIG_LAYER: dict[str, Sourced] = {
    **{m: Sourced("tools", _CONFIG_AHEAD) for m in ("claude-opus-5", "claude-opus-4-8", "claude-opus-4-7",
                                                "claude-opus-4-6", "claude-opus-4-5", "claude-sonnet-5",
                                                "claude-sonnet-4-6", "claude-fable-5", "claude-mythos-5",
                                                "claude-mythos-preview")},
    **{m: Sourced("messages", _CONFIG_MESSAGES) for m in ("claude-opus-4-1", "claude-opus-4", "claude-opus-3",
                                                      "claude-sonnet-4-5", "claude-sonnet-4", "claude-sonnet-3-7",
                                                      "claude-sonnet-3-5", "claude-haiku-4-5", "claude-haiku-3-5",
                                                      "claude-haiku-3")},
}


def anthropic_config_layer(model: str) -> str:
    """'tools' when an effort change invalidates the whole prompt, else 'messages' (also for a model the
    tables do not know: the policy names it as an error of its own)."""
    row = ANTHROPIC_CONFIG_LAYER.get(canonical_model(model))
    return str(row.value) if row is not None else "messages"


def anthropic_strips_thinking(model: str) -> bool:
    """True when earlier turns' thinking blocks leave the prompt (an unknown model keeps them: the
    policy names an unknown model as an error of its own)."""
    row = ANTHROPIC_KEEPS_THINKING.get(canonical_model(model))
    return row is not None and not row.value


_ADAPTIVE = "AWS-AT 2026-12-02: the model decides whether to think (docs/rules.md#claude-code-transcripts-parent-chain)"
_ADAPTIVE_LATER = ("AWS-AT 2026-12-02 lists up to Opus 4.7; a later generation is taken to think adaptively as it does "
                   "(UNCONFIRMED; Opus 4.8 adaptive only: simstudioai/sim#4771) (docs/rules.md#claude-code-transcripts-parent-chain)")
_BUDGET = ("AWS-AT 2026-12-02: a thinking budget (`type: enabled`); with it on, a response begins with its thinking "
           "(docs/rules.md#claude-code-transcripts-parent-chain)")
ANTHROPIC_ADAPTIVE_THINKING: dict[str, Sourced] = {
    **{m: Sourced(True, _ADAPTIVE) for m in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-mythos-preview")},
    **{m: Sourced(True, _ADAPTIVE_LATER) for m in ("claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-fable-5",
                                               "claude-mythos-5")},
    **{m: Sourced(False, _BUDGET) for m in ("claude-opus-4-5", "claude-opus-4-1", "claude-opus-4", "claude-opus-3",
                                        "claude-sonnet-4-5", "claude-sonnet-4", "claude-sonnet-3-7", "claude-sonnet-3-5",
                                        "claude-haiku-4-5", "claude-haiku-3-5", "claude-haiku-3")},
}


def anthropic_thinks_adaptively(model: str) -> bool:
    """True when the model may answer without thinking although thinking is on, so a response without a
    thinking block says nothing of the setting (an unknown model too: nothing is inferred from it)."""
    row = ANTHROPIC_ADAPTIVE_THINKING.get(canonical_model(model))
    return row is None or bool(row.value)


def anthropic_min_tokens(model: str, platform: str = "anthropic") -> Sourced:
    """The minimum cacheable prompt of a Claude model on a platform (anthropic, bedrock, vertex)."""
    own = PLATFORM_MIN_TOKENS.get(platform, {}).get(canonical_model(model))
    if own is not None:
        return own
    row = ANTHROPIC_MIN_TOKENS.get(canonical_model(model))
    if row is None:
        raise UserError(unknown("Anthropic model", model, sorted(ANTHROPIC_MIN_TOKENS), show=6))
    return row


# --- Claude on Bedrock and Vertex --------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ClaudePlatform:
    """Where Claude is served, and how its prompt caching differs from the Claude API's (A-PC rules).

    `one_hour`: the canonical models that offer ttl '1h' (None: every model, as on the API); a 1h
    breakpoint on another model is written and billed as 5m. `org_wide`: entries are shared across
    the organisation / project, not per workspace. `spaced`: the canonical models on which each
    checkpoint needs the minimum number of tokens past the previous checkpoint, not only from the start."""

    name: str
    one_hour: frozenset[str] | None
    org_wide: bool
    spaced: frozenset[str]
    source: str

    def offers_1h(self, model: str) -> bool:
        return self.one_hour is None or canonical_model(model) in self.one_hour

    def spaces(self, model: str) -> bool:
        return canonical_model(model) in self.spaced


CLAUDE_API = ClaudePlatform("anthropic", None, False, frozenset(),
                            "A-PC, docs/rules.md#anthropic-prefix-breakpoints-and-lookback")
#: 1h on Bedrock: AWS lists Claude Sonnet 4.5, Haiku 4.5 and Opus 4.5 (1-hour TTL launch, Jan 2026);
#: Sonnet 4.6 / Opus 4.6 are reported working (anomalyco/opencode issue #23106); later models are
#: assumed to keep it (UNCONFIRMED). Claude 4.1 and older: 5m only.
_BEDROCK_1H = frozenset({"claude-opus-5", "claude-fable-5", "claude-mythos-5", "claude-mythos-preview",
                         "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5",
                         "claude-sonnet-5", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-haiku-4-5"})
#: Spaced checkpoints on the models of the GA page's table, whose example they are (Claude 3.7 Sonnet,
#: 3.5 Haiku; 3.5 Sonnet v2 in preview); a Sonnet 4.5 Converse recording wrote checkpoints a few tokens
#: apart (tests/data/bedrock-api), so later models only ask each prefix to reach the minimum.
_BEDROCK_SPACED = frozenset({"claude-sonnet-3-7", "claude-haiku-3-5", "claude-sonnet-3-5"})
BEDROCK = ClaudePlatform(
    "bedrock", _BEDROCK_1H, True, _BEDROCK_SPACED,
    "AWS, docs/rules.md#bedrock-and-vertex-claude: cachePoint checkpoints (at most 4; the simplified single "
    "cachePoint checks about 20 preceding blocks), each at least the model's minimum (on Claude 3.x past the "
    "previous one: 1,024 then 2,048 cumulative on Claude 3.7 Sonnet; OBS: not on Sonnet 4.5); TTL 5m, 1h on "
    "Claude 4.5 and later; caches shared per AWS account (organisation), not per workspace (A-PC)")
VERTEX = ClaudePlatform(
    "vertex", None, True, frozenset(),
    "V-PC, docs/rules.md#bedrock-and-vertex-claude: 'behaves as described in the Anthropic documentation'; "
    "caches unique to the Google Cloud project, shared across it, not per workspace (A-PC)")
CLAUDE_PLATFORMS = {p.name: p for p in (CLAUDE_API, BEDROCK, VERTEX)}
#: Automatic caching (a top-level cache_control) where a platform does not offer it: A-PC (2026-08-21)
#: "Bedrock does not support automatic caching" (a 400 on the legacy Bedrock API, Opus 4.6 and earlier).
#: A design using it there is refused; a replayed request carrying it is priced uncached, said so.
NO_AUTOMATIC = {"bedrock": Sourced(True, "A-PC (2026-08-21): 'Bedrock does not support automatic caching', "
                                         "docs/rules.md#anthropic-bedrock-and-vertex-ai-recordings")}


# --- Automatic prefix caching (OpenAI, DeepSeek) --------------------------------------------

@dataclass(frozen=True, slots=True)
class Measured:
    """What public traffic shows of a cache whose documented retention is a range (Gemini's best-effort
    implicit caching, from nothing read; DeepSeek's "hours to days"): the printed figure, between the
    range's two ends (the rule's `ttl` and `ttl_optimistic`; a `ttl` of 0: nothing read). `ttl`: idle seconds
    an entry is still read; `min_tokens`: the smallest prompt seen cached; `source`: the evidence,
    and where it and the documentation disagree; `output`: whether a reply is read with its prompt;
    `increment`: the read rounded down to a multiple of it (the cache's own unit);
    `unread`: how often a follow-up within `ttl` read nothing."""

    ttl: float
    min_tokens: int
    source: str
    output: bool = False
    increment: int = 1
    #: (follow-ups within `ttl` that read nothing, follow-ups within `ttl`) in that traffic: a hit the
    #: printed figure predicts is not certain, and nothing recorded tells the misses apart.
    unread: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class AutoRule:
    """One family's automatic caching.

    Reads count the longest cached prefix, cut down to a multiple of `increment` (the spacing of the
    provider's breakpoints; 1 = the exact boundary) and zero below `min_tokens`. Retention is a
    documented range: `ttl` is the pessimistic idle lifetime (the printed figure unless `measured`)
    and `ttl_optimistic` the optimistic one; no refresh keeps an entry past `max_lifetime` from its write.
    `partial`: breakpoints lie at token intervals, so a prefix that ends inside a block is read
    (O-PC earlier models). `writes`: "every" position past the minimum is cached, only the request's
    "end" (DeepSeek's end-of-input unit), or the "breakpoints" of GPT-5.6+. `common_units`:
    the common prefix of two requests becomes a unit that a third request can read (DS kv_cache).
    """

    min_tokens: int
    increment: int
    ttl: float
    ttl_optimistic: float
    max_lifetime: float
    write_multiplier_applies: bool  # writes billed at a premium (GPT-5.6+), else free
    source: str
    partial: bool = True
    writes: str = "every"
    common_units: bool = False
    #: The minimum at the optimistic end, where traffic shows reads below the documented one (None:
    #: the documented minimum at both ends).
    min_tokens_optimistic: int | None = None
    #: A best-effort cache whose pessimistic end reads nothing: the printed figure follows what traffic
    #: shows instead (None: the printed figure is the pessimistic end).
    measured: Measured | None = None

    @property
    def printed(self) -> str:
        """Which figure a run prints: "measured" (what traffic shows) or the range's "pessimistic" end."""
        return "pessimistic" if self.measured is None else "measured"

    def idle(self, bound: str) -> float:
        if bound == "optimistic":
            return self.ttl_optimistic
        return self.measured.ttl if bound == "printed" and self.measured is not None else self.ttl

    def step(self, bound: str) -> int:
        """The unit reads are rounded down to at `bound`."""
        return self.measured.increment if bound == "printed" and self.measured is not None else self.increment

    def minimum(self, bound: str) -> int:
        """The cacheable minimum at `bound`: the documented one, or at the optimistic end and in the
        printed figure of a measured rule what the traffic shows."""
        if bound == "optimistic" and self.min_tokens_optimistic is not None:
            return self.min_tokens_optimistic
        if bound == "printed" and self.measured is not None:
            return self.measured.min_tokens
        return self.min_tokens


# O-PC = developers.openai.com/api/docs/guides/prompt-caching, archived copy
# llms-txt-archive/openai-platform api/docs/guides/prompt-caching.md @25f7cbb7 (GPT-5.6 era, read 2026-11-30).
# O-OLD = the earlier copy of the same guide ("cache hits occur in increments of 128 tokens").
_OPENAI_IN_MEMORY = AutoRule(
    1024, 128, 300.0, 600.0, 3600.0, False,
    "O-PC, docs/rules.md#openai-retention: in_memory entries 'typically remain active for around 5 to 10 minutes of inactivity, up to "
    "one hour' (5 min pessimistic, 10 min optimistic, 1 h cap from the write); cached_tokens rounded down "
    "to 128; breakpoint spacing 'model-dependent' (O-PC), 128 tokens (O-OLD); min 1,024 tokens")
_OPENAI_24H = AutoRule(
    1024, 128, 1800.0, 86400.0, 86400.0, False,
    "O-PC, docs/rules.md#openai-retention: prompt_cache_retention '24h' (the default without Zero Data Retention) 'typically keeps entries "
    "available for around 30 minutes and can retain them for up to 24 hours' (30 min pessimistic, 24 h "
    "optimistic and cap); cached_tokens rounded down to 128, spacing 128 (O-OLD); min 1,024 tokens")
_OPENAI_55 = AutoRule(
    1024, 2048, 1800.0, 86400.0, 86400.0, False,
    "O-PC, docs/rules.md#openai-automatic-prompt-caching: GPT-5.5 implicit breakpoints 'at regular 2,048-token intervals' (hidden system tokens taken as 0), "
    "'24h' retention only, typically ~30 min, up to 24 h; min 1,024 tokens")
_OPENAI_56 = AutoRule(
    1024, 1, 1800.0, 1800.0, float("inf"), True,
    "O-PC, docs/rules.md#openai-automatic-prompt-caching: GPT-5.6+ writes only at breakpoints (implicit: the end of the latest user message, tool-response "
    "group or initial developer group; explicit prompt_cache_breakpoint), at most 4 writes per request, "
    "billed 1.25x; lookups at the first 2 and latest 50 explicit breakpoints, the implicit one, 20 earlier "
    "eligible message ends and the initial developer block's end; cached_tokens at the exact boundary; "
    "ttl '30m' only ('at least 30 minutes after the latest write or reuse'); min 1,024 visible tokens",
    partial=False, writes="breakpoints")

#: Longest matching prefix of the canonical id wins. Extended retention only for the models O-PC
#: lists (gpt-5.5(-pro), 5.4, 5.2, the 5.1 family, gpt-5, gpt-5-codex, gpt-4.1); their mini/nano
#: siblings are not on that list, so they keep in_memory.
OPENAI_RULES: dict[str, AutoRule] = {
    "gpt-5.6": _OPENAI_56, "gpt-5.7": _OPENAI_56, "gpt-6": _OPENAI_56,
    "gpt-5.5": _OPENAI_55, "gpt-5.4": _OPENAI_24H, "gpt-5.2": _OPENAI_24H, "gpt-5.1": _OPENAI_24H,
    "gpt-5": _OPENAI_24H, "gpt-4.1": _OPENAI_24H,
    "gpt-5-mini": _OPENAI_IN_MEMORY, "gpt-5-nano": _OPENAI_IN_MEMORY,
    "gpt-4.1-mini": _OPENAI_IN_MEMORY, "gpt-4.1-nano": _OPENAI_IN_MEMORY,
    "gpt-4o": _OPENAI_IN_MEMORY, "o1": _OPENAI_IN_MEMORY, "o3": _OPENAI_IN_MEMORY,
    "o4": _OPENAI_IN_MEMORY, "gpt-5.3": _OPENAI_IN_MEMORY,
}

# DS = api-docs.deepseek.com/guides/kv_cache (current, V4 era, read 2026-11-30) and /news/news0802 (2024-08-02).
#: OpenAI's extended (24h) retention, by exact model id (O-PC "Retention defaults", @25f7cbb7, read
#: 2026-11-30: gpt-5.5, gpt-5.5-pro, gpt-5.4, gpt-5.2, the gpt-5.1 family, gpt-5, gpt-5-codex, gpt-4.1).
#: Not on it, so in_memory: gpt-5.4-mini / -nano, gpt-5.4-pro, gpt-5.2-pro, gpt-5-pro (and every -mini /
#: -nano). A name is matched exactly, never by its prefix.
OPENAI_EXTENDED_RETENTION = frozenset({
    "gpt-5.5", "gpt-5.5-pro", "gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-mini",
    "gpt-5.1-codex-max", "gpt-5.1-chat-latest", "gpt-5", "gpt-5-codex", "gpt-4.1"})
#: Dated snapshots, each mapped to its model explicitly (OpenAI's model pages); a dated id not listed
#: here is not assumed to keep its family's retention (in_memory, the pessimistic choice, said so).
OPENAI_SNAPSHOTS = {"gpt-4.1-2025-04-14": "gpt-4.1", "gpt-5-2025-08-07": "gpt-5", "gpt-5.1-2025-11-13": "gpt-5.1",
                    "gpt-5.2-2025-12-11": "gpt-5.2"}
#: Azure OpenAI's hosts: there the default retention is in-memory ("typically clears caches within 5
#: to 10 minutes of inactivity and always removes them within one hour"; extended only when a request
#: sets prompt_cache_retention), not OpenAI's 24h default (AZ-PC, docs/rules.md#openai-retention).
AZURE_OPENAI_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")


def openai_extended(model: str) -> bool:
    """Whether a model id (as sent, router prefix dropped) is on OpenAI's extended-retention list."""
    m = canonical_model(model)
    return OPENAI_SNAPSHOTS.get(m, m) in OPENAI_EXTENDED_RETENTION


def openai_rule(model: str, retention: str = "") -> AutoRule:
    """The rule of an OpenAI model under a request's `prompt_cache_retention` ("" = the default: 24h
    where the model supports it, O-PC "Retention defaults"); "in_memory" on a 24h-capable model
    takes the in_memory window."""
    m = canonical_model(model)
    best = max((k for k in OPENAI_RULES if m.startswith(k)), key=len, default=None)
    if best is None:
        families = sorted(k for k in OPENAI_RULES if not k.endswith(("-mini", "-nano")))
        raise UserError(f"unknown OpenAI model {model!r} (known families: {', '.join(families)})")
    rule = OPENAI_RULES[best]
    if rule is _OPENAI_24H and (retention == "in_memory" or not openai_extended(model)):
        return _OPENAI_IN_MEMORY
    return rule
