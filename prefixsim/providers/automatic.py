"""Automatic prefix caching (OpenAI, DeepSeek): no cache_control; the provider caches prompts at its
own breakpoints and a request reads the longest cached prefix it fully matches.

Breakpoints at token intervals (OpenAI before GPT-5.6) end inside blocks, so a request whose block
differs from a cached one part-way reads the common start of that block: the policy remembers, per
parent digest, the block the latest chain continued with, and tokenizes only that one pair of blocks.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from typing import Callable

import xxhash

from prefixsim.core.chain import extend_chain
from prefixsim.core.store import EntryState, Store
from prefixsim.core.tokens import TokenCounter, common_block_tokens
from prefixsim.model import Block, Layer, Request
from prefixsim.providers.auto_text import describe_rule
from prefixsim.providers.base import Decision
from prefixsim.providers.gemini_tables import gemini_rule
from prefixsim.providers.deepseek_tables import DEEPSEEK_RULE
from prefixsim.providers.tables import AutoRule, openai_rule

#: Parents whose next block is remembered (least recently written forgotten first), and the bytes of
#: remembered block text at most: memory stays bounded on long traffic; a forgotten parent only loses
#: the part-block read, never a whole-block one.
REMEMBERED_PARENTS = 8192
REMEMBERED_BYTES = 64 << 20
#: Common-prefix units kept per parent (DeepSeek), newest first.
UNITS_PER_PARENT = 8
_UNIT_MARK = b"\x02unit"

#: "printed": the figure a run prints (a measured rule's, else the pessimistic end of the range).
BOUNDS = ("printed", "pessimistic", "optimistic")


class AutomaticPolicy:
    def __init__(self, name: str, rule_for: Callable[[str, str], AutoRule], bound: str = "printed") -> None:
        assert bound in BOUNDS, bound
        self.name = name
        self.bound = bound
        self._rule_for = rule_for
        # parent digest -> (digest, block, layer params) of the block the latest chain continued with;
        # the block only when its text can be compared token by token (`_comparable`), else None
        self._next: OrderedDict[bytes, tuple[bytes, Block | None, tuple[bytes, ...]]] = OrderedDict()
        self._held = 0   # bytes of block text in self._next
        # parent digest -> [(length, digest of the next block's first `length` bytes, layer params,
        # tokens, unit digest)], newest first
        self._units: OrderedDict[bytes, list[tuple[int, bytes, tuple[bytes, ...], int, bytes]]] = OrderedDict()
        self._roles: dict[bytes, str] = {}   # block content key -> role of the message it starts

    def rule(self, request: Request) -> AutoRule:
        return self._rule_for(request.model, request.retention)

    def rule_of(self, model: str, retention: str = "") -> AutoRule:
        """The rule of a model by its id alone (an audit, which has no request to read it from)."""
        return self._rule_for(model, retention)

    def has_range(self, model: str | None = None) -> bool:
        """Whether `model`'s documented retention is a range (then runs report both bounds); without a
        model, True: the automatic caches' rules take a bound."""
        if model is None:
            return True
        r = self._rule_for(model, "")
        return r.ttl != r.ttl_optimistic

    def describe(self, model: str) -> dict[str, str]:
        return describe_rule(self.name, self._rule_for(model, ""))

    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float, *, marks: object = None, d0: bytes = b"",
               counter: TokenCounter | None = None, call: object = None) -> Decision:
        rule = self.rule(request)
        if rule.writes == "breakpoints":
            return self._at_breakpoints(rule, request, digests, cum, store, now, available_at)
        least = rule.minimum(self.bound)
        n = len(digests)
        total = cum[-1] if cum else 0
        live = EntryState.LIVE
        hit, extra, blocked, unit = -1, 0, None, None
        for j in range(n - 1, -1, -1):
            state = store.state(digests[j], now)
            if state is live:
                hit = j
                break
            if state is not EntryState.MISSING and blocked is None:
                blocked = (state, j)
            inside, unit = self._inside(rule, request, j, digests[j - 1] if j else d0, digests[j], store, now, counter)
            if inside:
                hit, extra = j - 1, min(inside, cum[j] - (cum[j - 1] if j else 0))
                break
        matched = (cum[hit] if hit >= 0 else 0) + extra
        step = rule.step(self.bound)
        read = _rounded(matched, step, least)
        # a cached prefix of this chain that rounds down to nothing: shorter than the first read
        dropped = read == 0 and hit >= 0
        if read == 0:   # a part-block read rounded down to nothing reads nothing (O-PC: none below the minimum)
            hit, unit = -1, None
        if hit >= 0:   # reading a prefix keeps its shorter prefixes alive too (Store.touch_prefix)
            store.touch_prefix(digests, hit, now)
        if unit is not None:   # a common-prefix unit read is refreshed like any entry
            store.touch(unit, now)
        ttl = rule.idle(self.bound)
        if rule.writes == "every":
            written_to = [j for j in range(hit + 1, n) if cum[j] >= least]
        else:
            written_to = [n - 1] if n - 1 > hit and total >= least else []
        for j in written_to:
            store.write(digests[j], cum[j], now, available_at, ttl, j, rule.max_lifetime)
        if rule.common_units:
            self._common_unit(rule, request, digests, cum, d0, hit, store, now, available_at, counter)
        if request.output and (self.bound != "printed" or rule.measured is None or rule.measured.output):
            self._write_output(rule, request, digests, total, d0, store, now, available_at, counter)
        self._remember(request, digests, d0, hit)
        written = cum[written_to[-1]] - read if written_to and rule.write_multiplier_applies else 0
        return Decision(read=read, write_5m=written, write_1h=0, uncached=total - read - written,
                        hit=hit, blocked=blocked, below_minimum=hit < 0 and (total < _first_read(least, step) or dropped),
                        breakpoints=())

    def _write_output(self, rule: AutoRule, request: Request, digests: list[bytes], total: int, d0: bytes,
                      store: Store, now: float, available_at: float, counter: TokenCounter | None) -> None:
        """The response's own tokens stay cached after the prompt (O-PC: the cache holds the KV states
        the model computed, "generating output tokens" included; DS kv_cache: the end of the output is
        a cache prefix unit): a later request that sends the output back reads through it. Written at
        every output block past the minimum ("every"), or at the output's end only (DeepSeek's unit)."""
        ext = Request(model=request.model, blocks=request.blocks + request.output, layer_params=request.layer_params)
        chain = list(digests)
        extend_chain(chain, d0, ext, len(digests))
        n = len(digests)
        cum = total
        ends = []
        for k, b in enumerate(request.output):
            cum += b.tokens if b.tokens is not None else (counter.count(b) if counter is not None else 0)
            ends.append(cum)
        ttl = rule.idle(self.bound)
        least = rule.minimum(self.bound)
        last = len(ends) - 1
        for k, tokens in enumerate(ends):
            if tokens >= least and (rule.writes == "every" or k == last):
                store.write(chain[n + k], tokens, now, available_at, ttl, n + k, rule.max_lifetime)

    def _at_breakpoints(self, rule: AutoRule, request: Request, digests: list[bytes], cum: list[int],
                        store: Store, now: float, available_at: float) -> Decision:
        """GPT-5.6+ (O-PC "How caching works", "How prefix matching works"): reads only at lookup
        boundaries, longest first, counted exactly; writes only at breakpoints past the read."""
        n = len(digests)
        total = cum[-1] if cum else 0
        least = rule.minimum(self.bound)
        explicit = sorted({i for i in request.explicit if 0 <= i < n})
        lookups = set(explicit[:2]) | set(explicit[-50:])
        marks = list(explicit)
        if request.cache_mode != "explicit":
            ends = self._eligible_ends(request, 21)
            lookups.update(ends)
            dev = _developer_end(request.blocks)
            if dev is not None:
                lookups.add(dev)
            implicit = ends[0] if ends else dev
            if implicit is not None:
                marks.append(implicit)
        hit, blocked = -1, None
        for j in sorted(lookups, reverse=True):
            state = store.state(digests[j], now)
            if state is EntryState.LIVE:
                hit = j
                break
            if state is not EntryState.MISSING and blocked is None:
                blocked = (state, j)
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0:
            store.touch_prefix(digests, hit, now)
        # "Each request can create up to four cache writes"; which four when more are marked is not
        # said: the deepest are kept.
        targets = sorted({j for j in marks if j > hit and cum[j] >= least})[-4:]
        for j in targets:
            store.write(digests[j], cum[j], now, available_at, rule.idle(self.bound), j, rule.max_lifetime)
        written = cum[targets[-1]] - read if targets else 0
        below = hit < 0 and bool(marks) and all(cum[j] < least for j in marks)
        return Decision(read=read, write_5m=written, write_1h=0, uncached=total - read - written, hit=hit,
                        blocked=blocked, below_minimum=below, breakpoints=())

    def _eligible_ends(self, request: Request, limit: int) -> list[int]:
        """Block indices ending an eligible message, latest first, at most `limit`: user messages and
        the last tool response of each consecutive group (O-PC, implicit mode). Walks back from the end
        only as far as it needs."""
        blocks = request.blocks
        ends: list[int] = []
        i = len(blocks) - 1
        later = ""
        while i >= 0 and len(ends) < limit and blocks[i].layer == Layer.MESSAGES:
            msg = _message(blocks[i], i)
            start = i
            while start > 0 and blocks[start - 1].layer == Layer.MESSAGES and _message(blocks[start - 1], start - 1) == msg:
                start -= 1
            kind = self._role(blocks[start])
            if kind == "user" or (kind == "tool" and later != "tool"):
                ends.append(i)
            later = kind
            i = start - 1
        return ends

    def _role(self, block: Block) -> str:
        """user / assistant / tool of the message a block starts, from its bytes (memoized by content)."""
        role = self._roles.get(block.key)
        if role is None:
            role = _role_of(block.data)
            if len(self._roles) >= REMEMBERED_PARENTS:
                self._roles.clear()
            self._roles[block.key] = role
        return role

    def _inside(self, rule: AutoRule, request: Request, j: int, parent: bytes, d: bytes, store: Store,
                now: float, counter: TokenCounter | None) -> tuple[int, bytes | None]:
        """Tokens of block j read from a cached prefix that ends inside it (0: none), and the
        common-prefix unit that holds them (None: the sibling block's own entry)."""
        live = EntryState.LIVE
        block = request.blocks[j]
        if rule.partial and counter is not None:
            rec = self._next.get(parent)
            # the sibling's entry is keyed by its whole chain: live, it holds the parent prefix too
            if (rec is not None and rec[1] is not None and rec[0] != d and store.state(rec[0], now) is live
                    and _comparable(rec[1], rec[2], block, request)):
                return common_block_tokens(counter.tokenizer, rec[1], block)[0], None
        best: tuple[int, bytes | None] = (0, None)
        if rule.common_units:
            for length, head, params, tokens, ud in self._units.get(parent, ()):
                if (tokens > best[0] and len(block.data) >= length and params == _params_to(request, block)
                        and xxhash.xxh3_128_digest(block.data[:length]) == head and store.state(ud, now) is live):
                    best = (tokens, ud)
        return best

    def _common_unit(self, rule: AutoRule, request: Request, digests: list[bytes], cum: list[int], d0: bytes,
                     hit: int, store: Store, now: float, available_at: float, counter: TokenCounter | None) -> None:
        """DS kv_cache: the common prefix of this request and the latest one it shares a start with is
        persisted as a unit of its own, readable by later requests (not by this one)."""
        n = len(digests)
        least = rule.minimum(self.bound)
        q = hit + 1
        while q < n:
            rec = self._next.get(digests[q - 1] if q else d0)
            if rec is None or rec[0] != digests[q]:
                break
            q += 1
        if q >= n:
            return
        base = cum[q - 1] if q else 0
        parent = digests[q - 1] if q else d0
        rec = self._next.get(parent)
        block = request.blocks[q]
        tokens = nbytes = 0
        if rec is not None and rec[1] is not None and counter is not None and _comparable(rec[1], rec[2], block, request):
            tokens, nbytes = common_block_tokens(counter.tokenizer, rec[1], block)
        ttl = rule.idle(self.bound)
        if tokens > 0 and base + tokens >= least:
            head = xxhash.xxh3_128_digest(block.data[:nbytes])
            ud = xxhash.xxh3_128_digest(parent + _UNIT_MARK + head)
            store.write(ud, base + tokens, now, available_at, ttl, -1, rule.max_lifetime)
            units = [u for u in self._units.pop(parent, ()) if u[4] != ud]
            self._units[parent] = [(nbytes, head, _params_to(request, block), tokens, ud), *units][:UNITS_PER_PARENT]
            if len(self._units) > REMEMBERED_PARENTS:
                self._units.popitem(last=False)
        elif tokens == 0 and q - 1 > hit and base >= least:
            store.write(digests[q - 1], base, now, available_at, ttl, q - 1, rule.max_lifetime)

    def _remember(self, request: Request, digests: list[bytes], d0: bytes, hit: int) -> None:
        nxt = self._next
        blocks = request.blocks
        for j in range(hit + 1, len(digests)):
            parent = digests[j - 1] if j else d0
            old = nxt.pop(parent, None)
            if old is not None and old[1] is not None:
                self._held -= len(old[1].data)
            block = blocks[j] if blocks[j].tokens is None or blocks[j].sees is not None else None
            if block is not None:
                self._held += len(block.data)
            nxt[parent] = (digests[j], block, request.layer_params)
        while nxt and (len(nxt) > REMEMBERED_PARENTS or self._held > REMEMBERED_BYTES):
            _, old = nxt.popitem(last=False)
            if old[1] is not None:
                self._held -= len(old[1].data)


def _message(block: Block, i: int) -> str:
    """The message a block belongs to: `messages[3].content[1]` -> `messages[3]`; unnamed blocks are
    messages of their own."""
    return block.path.split(".", 1)[0] if block.path else f"#{i}"


def _role_of(data: bytes) -> str:
    """Chat messages carry a role, Responses items a type; the Anthropic-style rendering of scenario
    messages starts with {"role":...}. Bytes that are no JSON object count as a user message."""
    if data.startswith(b'{"role":"user"'):
        return "user"
    if data.startswith(b'{"role":"assistant"'):
        return "assistant"
    if not data.startswith(b"{"):
        return "user"
    try:
        obj, _ = json.JSONDecoder().raw_decode(data.decode("utf-8", errors="replace"))
    except ValueError:
        return "user"
    role = obj.get("role") if isinstance(obj, dict) else None
    kind = obj.get("type") if isinstance(obj, dict) else None
    if role == "tool" or kind in ("function_call_output", "custom_tool_call_output"):
        return "tool"
    if role == "user":
        return "user"
    return "other"


def _developer_end(blocks: tuple[Block, ...]) -> int | None:
    """The last block of the initial consecutive developer (system) messages, after the tools."""
    i = 0
    while i < len(blocks) and blocks[i].layer == Layer.TOOLS:
        i += 1
    end = None
    while i < len(blocks) and blocks[i].layer == Layer.SYSTEM:
        end = i
        i += 1
    return end


def _params_to(request: Request, block: Block) -> tuple[bytes, ...]:
    """The layer parameters the chain has mixed in by the time it reaches `block`."""
    return tuple(request.layer_params[:block.layer + 1])


def _comparable(old: Block, old_params: tuple[bytes, ...], new: Block, request: Request) -> bool:
    """Two blocks at the same chain position whose bytes can be compared token by token: same layer,
    same parameters mixed in, and both holding their text: sized by the tokenizer from their bytes,
    or both sized by a log and holding what the model sees (a synthetic block with a fixed size carries a label or a digest
    instead of its text)."""
    return (old.layer == new.layer and (old.tokens is None) == (new.tokens is None)
            and (old.tokens is None or (old.sees is not None and new.sees is not None))
            and tuple(old_params[:new.layer + 1]) == _params_to(request, new))


def _first_read(minimum: int, increment: int) -> int:
    """The shortest prefix a read can give: the first multiple of the increment from the minimum
    (GPT-5.5: 1,024 documented, breakpoints every 2,048 tokens, so 2,048)."""
    return -(-minimum // increment) * increment


def _rounded(tokens: int, increment: int, minimum: int) -> int:
    """Cached tokens end at the last breakpoint: a multiple of the increment (O-PC: 128, GPT-5.5's
    2,048-token breakpoints), none below the minimum."""
    if tokens < minimum:
        return 0
    return tokens - tokens % increment


def _listed(name: str, rule_for: Callable[[str, str], AutoRule], listed_only: bool) -> Callable[[str, str], AutoRule]:
    """The tables' lookup, or (a replay of real traffic) one that answers an unlisted model too."""
    if listed_only:
        return rule_for
    from prefixsim.providers.unlisted import or_unlisted   # lazy: scenarios never need it

    return or_unlisted(name, rule_for)


def openai(bound: str = "printed", listed_only: bool = True) -> AutomaticPolicy:
    return AutomaticPolicy("openai", _listed("openai", openai_rule, listed_only), bound)


def deepseek(bound: str = "printed", listed_only: bool = True) -> AutomaticPolicy:
    # one rule covers every DeepSeek model (DS kv_cache): nothing is unlisted
    return AutomaticPolicy("deepseek", lambda model, retention: DEEPSEEK_RULE, bound)


def gemini(bound: str = "printed", listed_only: bool = True) -> AutomaticPolicy:
    return AutomaticPolicy("gemini", _listed("gemini", gemini_rule, listed_only), bound)
