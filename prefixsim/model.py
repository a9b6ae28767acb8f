"""Frozen value types shared by every layer: blocks, requests, calls, usage, causes, outcomes."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum

import xxhash


class Layer(IntEnum):
    """Render order of a request: a change in one layer invalidates it and every later layer."""

    TOOLS = 0
    SYSTEM = 1
    MESSAGES = 2

    @property
    def label(self) -> str:
        return self.name.lower()


#: Cache lifetimes by the names providers use for them (A-PC: 5m default, 1h optional).
TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}


def content_key(layer: int, data: bytes) -> bytes:
    """128-bit digest of one block's bytes; the chain mixes these, so each block is hashed once."""
    return xxhash.xxh3_128_digest(bytes((layer,)) + data)


#: The content of a synthetic block holding the few tokens that close a rendered prompt after its
#: last block (reported uncached past a breakpoint on that block); automatic caching skips it.
PROMPT_END = b"prompt end"


@dataclass(frozen=True, slots=True)
class Block:
    """One unit of a rendered request: a tool definition, a system text block or a message content block.

    `data` is exactly what was sent (cache_control markers excluded: moving a marker does not change
    the prefix). `breakpoint` is the TTL of a `cache_control` on this block. `tokens` fixes the size
    for synthetic blocks; None means the tokenizer counts `data`. `sees`: for a block whose size is
    fixed (a log's, sized from the observed usage) but which holds real text, what the model sees of it
    (the frame tokens before its texts, and the texts in order), so a cache that reads inside blocks
    compares it token by token as it does a counted block (O-PC); None for a synthetic block, whose
    data is a label or a digest and is never compared.
    """

    layer: Layer
    data: bytes
    path: str = ""
    breakpoint: str | None = None
    tokens: int | None = None
    sees: tuple[int, tuple[str, ...]] | None = field(default=None, compare=False)
    key: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.layer) is not Layer:
            object.__setattr__(self, "layer", Layer(self.layer))
        object.__setattr__(self, "key", content_key(self.layer, self.data))

    def with_breakpoint(self, ttl: str | None) -> "Block":
        """The same block with another cache_control; the content key is reused, not recomputed."""
        if ttl == self.breakpoint:
            return self
        b = object.__new__(Block)
        for name, value in (("layer", self.layer), ("data", self.data), ("path", self.path),
                            ("breakpoint", ttl), ("tokens", self.tokens), ("sees", self.sees),
                            ("key", self.key)):
            object.__setattr__(b, name, value)
        return b


@dataclass(frozen=True, slots=True)
class Request:
    """A provider-neutral request: blocks in render order plus what separates caches.

    `layer_params[L]` holds request parameters that the provider says invalidate layer L and every
    later one (tool_choice, thinking, images, web search, ...); they enter the digest chain at the
    start of that layer. `auto_cache` is the TTL of a top-level (automatic) cache_control.
    `retention` is OpenAI's `prompt_cache_retention` ("" when the request does not set it);
    `cache_mode` its `prompt_cache_options.mode` ("" = implicit) and `explicit` the indices of the
    blocks that end at a `prompt_cache_breakpoint` (GPT-5.6+; the markers are not in the bytes).
    `output` is what the response appended to the context, as a later request would send it back
    (a replayed OpenAI / DeepSeek call): automatic caches keep the generated tokens with the prompt.
    """

    model: str
    blocks: tuple[Block, ...]
    layer_params: tuple[bytes, bytes, bytes] = (b"", b"", b"")
    auto_cache: str | None = None
    workspace: str = ""
    cache_salt: str = ""
    retention: str = ""
    cache_mode: str = ""
    explicit: tuple[int, ...] = ()
    output: tuple[Block, ...] = ()
    #: Claude on Vertex AI / Bedrock: the endpoint it was sent to (global, regional, multi-region), which
    #: its price depends on ("" = as the model id says, or the run's setting)
    endpoint: str = ""


@dataclass(frozen=True, slots=True)
class CachedRef:
    """A Gemini explicit cache (`CachedContent`) a call creates or reads by reference: the request's
    first `blocks` blocks. A creation (`create`) is billed as input, and its storage for `kept_s`
    seconds (creation to delete or expiry); a read takes those blocks at the cached rate whatever
    the implicit cache holds (G-CC, docs/rules.md#gemini-explicit-context-caching)."""

    name: str
    blocks: int
    create: bool = False
    kept_s: float = 0.0
    recorded: bool = False   # a creation a log shows the API made (its minimum size is not checked again)


@dataclass(frozen=True, slots=True)
class Call:
    """A request sent at time `t` (seconds) on a stream (main conversation, a sub-agent, ...).

    `parent` names the stream whose last request this one descends from (a fork's first request);
    `event` tags a known cause the source already knows of (e.g. "compaction").
    """

    t: float
    request: Request
    stream: str = "main"
    label: str = ""
    output_tokens: int = 0
    ttft: float | None = None
    parent: str | None = None
    event: str | None = None
    cached: CachedRef | None = None   # Gemini explicit caching: a CachedContent created or referenced


class CauseKind:
    """Why a request did not read everything that could have been cached (design.md list)."""

    HIT = ""
    COLD = "cold"
    TTL_EXPIRED = "ttl_expired"
    PREFIX_CHANGED = "prefix_changed"
    BELOW_MINIMUM = "below_minimum"
    NOT_YET_AVAILABLE = "not_yet_available"
    LOOKBACK_EXCEEDED = "lookback_exceeded"
    MODEL_SWITCH = "model_switch"
    EVICTED = "evicted"
    COMPACTION = "compaction"


@dataclass(frozen=True, slots=True)
class Cause:
    kind: str = CauseKind.HIT
    detail: str = ""

    def __str__(self) -> str:
        if not self.kind:
            return ""
        return f"{self.kind} ({self.detail})" if self.detail else self.kind


@dataclass(frozen=True, slots=True)
class Usage:
    """Token classes in Anthropic's terms: `input_tokens` is the uncached part only."""

    input_tokens: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    cache_read: int = 0
    output_tokens: int = 0

    @property
    def cache_creation(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_creation + self.cache_read

    @property
    def hit_rate(self) -> float:
        """Token hit rate = cache_read / (uncached + cache_write + cache_read); token-weighted."""
        total = self.prompt_tokens
        return self.cache_read / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one call produced: usage, its cost and the cause of any miss."""

    call: Call
    usage: Usage
    cause: Cause
    cost_usd: Decimal
    cost_no_cache_usd: Decimal
    price_source: str
    read_blocks: int
    n_blocks: int
    storage_usd: Decimal = Decimal(0)   # an explicit cache's storage, billed on its creation
