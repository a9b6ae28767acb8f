"""A serving engine as a provider policy, so scenarios can say `provider: vllm` or `provider: sglang`.

The engine keeps its own cache (capacity-bound, no TTL), one per model: a different model is a
different server. The runner's Store is left untouched: engine entries never expire, so its TTL and
availability states do not apply. Engines bill no write premium, so every token not read from
cache is uncached input; the saving is prefill work, given as GPU-seconds at a flat rate.

A miss the capacity caused is told apart by a shadow cache without a capacity: when it would
have read more, a block the request needed was evicted (or never fit), and the Decision's `blocked`
says so, as the store-based policies do for their TTL and eviction states.

Not modelled, on purpose: queueing (a request that finds every block held is served at its own
time and caches the head of its chain; the engines would make it wait or preempt another, whose KV
is then freed and recomputed); chunked prefill (the prompt is cached at once at the start, SGLang's
after its prefill); output KV growing during decode (it is allocated at the end); the KV of a
running request's partial last block; speculative decoding (vLLM with EAGLE drops the last
matched block, SGLang with EAGLE keys the tree by bigrams); requests that skip the cache (vLLM
prompt-logprob and all-pooling requests do not read it; SGLang's logprob_start_len limits the
match); SGLang's strip-thinking option (reasoning tokens not cached); host-memory and external KV
tiers (SGLang HiCache, vLLM KV connectors / LMCache); sliding-window and Mamba layers; schedule
policies that reorder the queue (SGLang lpm, dfs-weight; vLLM priority).
"""
from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import xxhash

from prefixsim.core.store import EntryState, Store
from prefixsim.engines import make_cache
from prefixsim.engines.base import (
    DEFAULT_DECODE_TOKENS_PER_S,
    DEFAULT_PREFILL_TOKENS_PER_S,
    EngineKeys,
    PrefixCache,
    committed_tokens,
    prefill_seconds,
)
from prefixsim.engines.kvsize import MODELS, parse_capacity, split_capacity
from prefixsim.engines.tokens import BlockTokenIds, pseudo_ids
from prefixsim.errors import UserError
from prefixsim.model import Block, Call, Layer, Outcome, Request
from prefixsim.providers.base import Decision
from prefixsim.providers.tables import canonical_model
from prefixsim.wire.anthropic import dumps

if TYPE_CHECKING:
    from prefixsim.scenario.schema import EngineSpec

_SOURCES = {
    "vllm": "vllm-project/vllm vllm/v1/core/kv_cache_utils.py, block_pool.py, kv_cache_manager.py "
            "(docs/rules.md#vllm)",
    "sglang": "sgl-project/sglang python/sglang/srt/mem_cache/radix_cache.py, cache_finished_req "
              "(docs/rules.md#sglang)",
}


# How a rendered assistant message opens: render.message_blocks puts {"role":"assistant"} before its
# first content block; an OpenAI chat log renders each message whole, usually role first.
_ASSISTANT = dumps({"role": "assistant"})[:-1]

# Unanswered requests remembered for their reply (a log interleaves many conversations), at most this
# many and this many prompt tokens in all (each keeps its prompt's ids: 8 bytes a token).
MAX_PENDING = 4096
MAX_PENDING_TOKENS = 1 << 24


@dataclass(slots=True, eq=False)
class _Running:
    """A request between its start and its end: the KV it holds in the cache and in the shadow, and
    its output, as stand-in tokens until a later request quotes the reply (`reply`)."""

    seq: int
    model: str
    keys: EngineKeys
    prompt: list[int]
    output: int
    hold: Any
    shadow_hold: Any
    reply: list[int] | None = None
    out: Any = None
    shadow_out: Any = None
    done: bool = False

    def output_ids(self) -> list[int]:
        """The output tokens: the reply a later request quoted, else stand-ins no prompt contains."""
        return self.reply if self.reply is not None else _stand_in(self.seq, self.output)


def _stand_in(seq: int, n: int) -> list[int]:
    return pseudo_ids(b"prefixsim/engine-output/%d" % seq, n)


#: vLLM's default block size and SGLang's default page size, in tokens.
_DEFAULT_UNIT = {"vllm": 16, "sglang": 1}


class EnginePolicy:
    """`decide` for a vLLM or SGLang prefix cache of `capacity` tokens per model (None: unlimited).

    `block_size` is vLLM's block size (default 16) or SGLang's page size (default 1); `encoding`
    names the tokenizer whose ids the engine matches (it should be the run's tokenizer; blocks
    whose counts differ fall back to content-derived ids); `lora` names an adapter every request
    uses; `cache_salt` is the salt of requests that carry none; `prefill_tokens_per_s` converts hit
    tokens into GPU-seconds saved.

    Requests take time: one holds its KV from its start until its end, start + uncached prompt
    tokens / prefill rate + output tokens / `decode_tokens_per_s` (defaults
    DEFAULT_PREFILL_TOKENS_PER_S, DEFAULT_DECODE_TOKENS_PER_S), and held KV is never evicted. At its
    end the request caches its prompt and output but the last token (`committed_tokens`). The output's
    tokens are those of the assistant message that the first later prompt to contain this request's
    whole prompt quotes right after it (on any stream: a next turn, a fork), cut to `output_tokens`;
    until such a request comes, and for any rest, they are stand-ins that no prompt contains.
    """

    def __init__(self, engine: str = "vllm", capacity: int | None = None, *, block_size: int | None = None,
                 eviction: str = "lru", encoding: str = "cl100k_base", lora: str = "", cache_salt: str = "",
                 prefill_tokens_per_s: float | None = None, decode_tokens_per_s: float | None = None) -> None:
        make_cache(engine, capacity, block_size=block_size, eviction=eviction)  # validate early
        self.name = engine
        self.capacity = capacity
        self.block_size = block_size
        self.eviction = eviction
        self.lora = lora
        self.cache_salt = cache_salt
        self.prefill_tokens_per_s = prefill_tokens_per_s
        self.decode_tokens_per_s = decode_tokens_per_s
        self.tokens = BlockTokenIds(encoding)
        self.caches: dict[str, PrefixCache] = {}
        # Unlimited twins of the caches, kept only when a capacity can evict (see the module doc).
        self.shadows: dict[str, PrefixCache] | None = None if capacity is None else {}
        self._running: list[tuple[float, int, _Running]] = []  # heap by end time, then start order
        # Requests whose reply no later prompt has quoted yet, by (model, keys, prompt length, digest of
        # the prompt's ids); the oldest are forgotten past MAX_PENDING (their outputs stay stand-ins).
        self._pending: dict[tuple, _Running] = {}
        self._pending_tokens = 0
        self._seq = 0

    def cache_for(self, model: str, caches: dict[str, PrefixCache] | None = None) -> PrefixCache:
        key = canonical_model(model)
        caches = self.caches if caches is None else caches
        cache = caches.get(key)
        if cache is None:
            capacity = self.capacity if caches is self.caches else None
            cache = caches[key] = make_cache(self.name, capacity, block_size=self.block_size,
                                             eviction=self.eviction)
        return cache

    def has_range(self, model: str | None = None) -> bool:
        return False   # one documented retention, no range

    def describe(self, model: str) -> dict[str, str]:
        unit = "block size" if self.name == "vllm" else "page size"
        d = {"provider": self.name,
             "caching": "automatic prefix caching, no TTL; hit capped at prompt length - 1",
             unit: f"{self.block_size or _DEFAULT_UNIT[self.name]} tokens",
             "capacity": "unlimited" if self.capacity is None else f"{self.capacity:,} tokens",
             "eviction": self.eviction, "source": _SOURCES[self.name]}
        if self.lora:
            d["lora"] = self.lora
        if self.cache_salt:
            d["cache salt"] = self.cache_salt
        d["prefill rate"] = (f"{self.prefill_tokens_per_s:,.0f} tokens/s" if self.prefill_tokens_per_s else
                             "not given (engine.prefill_tokens_per_s turns cached tokens into GPU-seconds)")
        d["request time"] = (f"uncached tokens / {self._prefill_rate:,.0f} tokens/s + output tokens / "
                             f"{self._decode_rate:,.0f} tokens/s; running requests hold their KV")
        d["output"] = ("cached at the request's end, but its last token; its tokens are the reply a "
                       "later prompt quotes after this one")
        return d

    @property
    def _prefill_rate(self) -> float:
        return self.prefill_tokens_per_s or DEFAULT_PREFILL_TOKENS_PER_S

    @property
    def _decode_rate(self) -> float:
        return self.decode_tokens_per_s or DEFAULT_DECODE_TOKENS_PER_S

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float, *, marks: object = None, d0: bytes = b"",
               counter: object = None, call: Call | None = None) -> Decision:
        self.finish_until(now)
        total = cum[-1] if cum else 0
        model = canonical_model(request.model)
        cache = self.cache_for(request.model)
        ids = self.tokens.request_ids(request, cum)
        keys = EngineKeys(lora=self.lora, salt=request.cache_salt or self.cache_salt)
        prompt_key = self._learn_replies(request, model, keys, ids, cum)
        read, hold = cache.begin(ids, keys)
        # The last request block read (-1: none). A read of all an engine gives (the prompt but its
        # last token, in whole blocks) reads every block; a shorter one stopped where the prompt
        # parted from the cache: the blocks before it are read, the block it stopped in is where it
        # parted, as the automatic caches count it (the runner calls any read a hit, never cold).
        unit = self.block_size or _DEFAULT_UNIT[self.name]
        hit = len(cum) - 1 if read and read >= (total - 1) // unit * unit else bisect_right(cum, read) - 1
        blocked = None
        shadow_hold = None
        if self.shadows is not None:
            unlimited, shadow_hold = self.cache_for(request.model, self.shadows).begin(ids, keys)
            if unlimited > read:
                # The block holding the first token not read was lost to capacity; it no longer counts
                # as (partly) read, so the runner names it whether the read stopped inside it or not.
                stop = bisect_right(cum, read)
                hit, blocked = stop - 1, (EntryState.EVICTED, stop)
        output = call.output_tokens if call is not None else 0
        self._seq += 1
        rec = _Running(self._seq, model, keys, ids, output, hold, shadow_hold)
        end = now + (total - read) / self._prefill_rate + output / self._decode_rate
        heapq.heappush(self._running, (end, rec.seq, rec))
        if ids:
            self._remember(prompt_key, rec)
        # A prompt of one block (page) or less can never be read: its last token is always computed.
        below = read == 0 and 0 < total <= unit
        return Decision(read=read, write_5m=0, write_1h=0, uncached=total - read, hit=hit, blocked=blocked,
                        below_minimum=below, breakpoints=())

    def finish_until(self, now: float | None = None) -> None:
        """End every running request whose end is at or before `now` (None: all), in end order:
        each caches its prompt and output and releases what it held."""
        running = self._running
        while running and (now is None or running[0][0] <= now):
            rec = heapq.heappop(running)[2]
            seq = committed_tokens(rec.prompt, rec.output_ids())
            rec.out = self.caches[rec.model].end(rec.hold, seq, rec.keys)
            if self.shadows is not None:
                rec.shadow_out = self.shadows[rec.model].end(rec.shadow_hold, seq, rec.keys)
            rec.done = True

    def _learn_replies(self, request: Request, model: str, keys: EngineKeys, ids: list[int],
                       cum: list[int]) -> tuple:
        """Where an assistant message follows a prefix of this prompt that is exactly a pending
        request's prompt, that message is the pending request's output. Returns this prompt's key."""
        digest = xxhash.xxh3_128()
        buf = memoryview(array("q", ids).tobytes())
        blocks = request.blocks
        done = 0  # tokens fed to the digest
        for b, block in enumerate(blocks):
            start = cum[b - 1] if b else 0
            if start and block.layer == Layer.MESSAGES and block.data.startswith(_ASSISTANT):
                digest.update(buf[8 * done:8 * start])
                done = start
                rec = self._pending.pop((model, keys, start, digest.digest()), None)
                if rec is not None:
                    self._pending_tokens -= len(rec.prompt)
                    self._learn(rec, _message_ids(blocks, b, ids, cum))
        digest.update(buf[8 * done:])
        return (model, keys, len(ids), digest.digest())

    def _remember(self, key: tuple, rec: _Running) -> None:
        old = self._pending.pop(key, None)   # the same prompt again: the newer request waits instead
        if old is not None:
            self._pending_tokens -= len(old.prompt)
        self._pending[key] = rec
        self._pending_tokens += len(rec.prompt)
        while len(self._pending) > MAX_PENDING or self._pending_tokens > MAX_PENDING_TOKENS:
            self._pending_tokens -= len(self._pending.pop(next(iter(self._pending))).prompt)

    def _learn(self, rec: _Running, reply: list[int]) -> None:
        """`rec`'s output is `reply` (cut to its output count; stand-ins fill a shorter reply)."""
        stand_in = rec.output_ids()
        rec.reply = reply[:rec.output] + stand_in[len(reply):]
        if rec.done:  # already cached under stand-ins: give those tokens their real identity
            seq = committed_tokens(rec.prompt, rec.reply)
            self.caches[rec.model].rekey(rec.out, seq, rec.keys)
            if self.shadows is not None:
                self.shadows[rec.model].rekey(rec.shadow_out, seq, rec.keys)

    def gpu_seconds_saved(self, outcomes: Iterable[Outcome]) -> float:
        """Prefill GPU-seconds the cache saved over `outcomes` at this policy's prefill rate."""
        if not self.prefill_tokens_per_s:
            raise ValueError("no prefill rate given (prefill_tokens_per_s)")
        return prefill_seconds(sum(o.usage.cache_read for o in outcomes), self.prefill_tokens_per_s)


def _message_ids(blocks: Sequence[Block], first: int, ids: list[int], cum: list[int]) -> list[int]:
    """The token ids of the message whose first block is `first` (its blocks share the path head
    "messages[i].")."""
    head = blocks[first].path.split("].", 1)[0] + "]." if "]." in blocks[first].path else None
    last = first
    while head and last + 1 < len(blocks) and blocks[last + 1].path.startswith(head):
        last += 1
    return ids[cum[first - 1] if first else 0:cum[last]]


def engine_options(engine: str, spec: "EngineSpec | None", model: str | None, encoding: str) -> dict[str, Any]:
    """`EnginePolicy` keywords for `engine` from a scenario's `engine:` setting (None: the defaults).

    vLLM takes `block_size`, SGLang `page_size`, so one setting serves variants of both engines. A
    GiB capacity is sized by `kv_model`, else by the scenario's model when kvsize knows it.
    """
    opts: dict[str, Any] = {"encoding": encoding}
    if spec is None:
        return opts
    kv_model = spec.kv_model or model
    parsed = split_capacity(spec.capacity)
    if parsed is not None and parsed[1] == "gib" and (kv_model or "").lower() not in MODELS:
        raise UserError(f"engine.capacity {spec.capacity!r} is KV memory: set engine.kv_model to size it "
                        f"(known: {', '.join(MODELS)})")
    opts["capacity"] = parse_capacity(spec.capacity, kv_model)
    opts["block_size"] = spec.block_size if engine == "vllm" else spec.page_size
    for name in ("eviction", "lora", "cache_salt", "prefill_tokens_per_s", "decode_tokens_per_s"):
        value = getattr(spec, name)
        if value is not None:
            opts[name] = value
    return opts
