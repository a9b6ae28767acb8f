"""Where two requests' prefixes part: layer, block index, JSON path, byte offset, an excerpt of each
side with a caret under the first differing byte, how much of B the cache A wrote serves under the
provider's rules (A's breakpoints, minimum lengths, the lookback: the simulator decides), and what the
parting costs on the next request (the tokens after it are written again)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from prefixsim import sources
from prefixsim.core.chain import chain, namespace_digest
from prefixsim.core.dollars import usd
from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.errors import UserError
from prefixsim.model import Call, Request
from prefixsim.providers.tables import CLAUDE_PLATFORMS
from prefixsim.sources.anthropic_log import split_entry
from prefixsim.sources.files import check_regular
from prefixsim.sources.problems import LINE_ERRORS, located_error, collecting
from prefixsim.wire.anthropic import render_anthropic

#: Bytes of each side shown after the first differing byte, and about half as many before it.
EXCERPT = 40
#: How far back an excerpt's start may move to begin at a word's start instead of inside it.
WORD_BACK = 24
#: Providers whose cache holds what a request's breakpoints mark (the others keep a prefix themselves).
MARKED = tuple(CLAUDE_PLATFORMS)   # anthropic, bedrock (cachePoint), vertex
#: B is sent this long after A (well inside a 5-minute TTL, after A's response began).
GAP_S = 60.0


@dataclass(frozen=True, slots=True)
class PrefixDiff:
    """`block` is the first differing block index (None: B extends A, or they are the same request).
    `readable_tokens`: what B reads from the cache A wrote under `provider`'s rules (None: the rules
    do not know the model). `caret`: the column of the first differing byte in `before` / `after`."""

    model_a: str
    model_b: str
    blocks_a: int
    blocks_b: int
    block: int | None
    layer: str
    path: str
    byte: int | None
    before: str
    after: str
    shared_tokens: int
    rewritten_tokens: int
    cost_usd: float | None
    same: bool = False
    provider: str = "anthropic"
    readable_tokens: int | None = None
    tokens_b: int = 0
    caret: int | None = None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}

    @property
    def differ(self) -> bool:
        """B is not the same request as A (what `diff` exits 1 for, as diff(1))."""
        return not self.same

    @property
    def marked(self) -> bool:
        """The provider caches what breakpoints mark (Claude, Bedrock), not a prefix of its own choosing."""
        return self.provider in MARKED

    def _read(self) -> str:
        if self.readable_tokens is None:
            return f"(how much the cache serves is not counted: {self.provider} rules do not know {self.model_a})"
        return (f"under {self.provider} rules B reads {self.readable_tokens:,} of its {self.tokens_b:,} tokens from "
                "the cache A wrote " + ("(what A's breakpoints cover and the rules let B read)" if self.marked else
                                        "(the longest prefix of A's the rules keep and let B read)"))

    def describe(self) -> str:
        if self.same:
            return f"A and B are the same request ({self.blocks_a} blocks); {self._read()}."
        if self.block is None:
            return (f"B extends A: all {self.blocks_a} blocks of A are a prefix of B ({self.shared_tokens:,} tokens "
                    f"shared); {self._read()}.")
        pad = " " * (len("  A: ") + (self.caret or 0))
        lines = [f"prefixes part at block {self.block}: {self.layer} layer, {self.path}"
                 + (f", byte {self.byte}" if self.byte is not None else ""),
                 f"  A: {self.before}", f"  B: {self.after}", *([f"{pad}^"] if self.caret is not None else []),
                 f"shared prefix {self.shared_tokens:,} tokens; {self.rewritten_tokens:,} tokens after the parting "
                 "are written again on the next request"
                 + (f" ({usd(self.cost_usd)} of extra write at {self.model_b}'s "
                    + ("5m write rate)" if self.marked else "input rate (no write premium))")
                    if self.cost_usd is not None else ""),
                 self._read()[:1].upper() + self._read()[1:] + "."]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Parting:
    """Where B's chain leaves A's, without counting tokens (`block` None: B extends A, or equal).
    `caret`: the column of the first differing byte in the excerpts (None: no byte compared)."""

    block: int | None
    layer: str
    path: str
    byte: int | None
    before: str
    after: str
    caret: int | None = None


def _wordy(b: int) -> bool:
    return chr(b).isalnum() or b == 0x5F or b >= 0x80   # letters, digits, _ and the bytes of a non-ASCII character


def _excerpt_start(x: bytes, lo: int) -> int:
    """`lo` moved back to the start of the word it falls in (up to WORD_BACK bytes), else to the start
    of the character it falls in: an excerpt never starts mid-word when the word is short enough."""
    k = lo
    while k > 0 and lo - k < WORD_BACK and _wordy(x[k - 1]):
        k -= 1
    if k > 0 and _wordy(x[k - 1]):   # a very long word: start at `lo`, on a character boundary
        k = lo
        while k > 0 and 0x80 <= x[k] < 0xC0:
            k -= 1
    return k


def _shown(data: bytes) -> str:
    """Bytes as an excerpt shows them: UTF-8 text, control characters escaped (one line)."""
    text = data.decode("utf-8", errors="replace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _excerpts(x: bytes, y: bytes, byte: int) -> tuple[str, str, int]:
    """Each side from a word's start before `byte` to EXCERPT bytes after it, and the caret's column."""
    lo = min(_excerpt_start(x, max(0, byte - EXCERPT // 2)), _excerpt_start(y, max(0, byte - EXCERPT // 2)))
    head = ("…" if lo > 0 else "") + _shown(x[lo:byte])

    def tail(z: bytes) -> str:
        end = min(len(z), byte + EXCERPT)
        while end < len(z) and 0x80 <= z[end] < 0xC0:   # end on a character boundary
            end += 1
        return _shown(z[byte:end]) + ("…" if end < len(z) else "")

    return head + tail(x), head + tail(y), len(head)


def where_parted(a: Request, b: Request) -> Parting:
    """The first block where B's chain leaves A's (both in A's namespace: a model switch parts at 0),
    its layer and JSON path, the byte offset and an excerpt of each side."""
    da = chain(namespace_digest("diff", a.model), a)
    db = chain(namespace_digest("diff", b.model), b)
    i = next((k for k in range(min(len(da), len(db))) if da[k] != db[k]), None)
    if i is None and len(db) < len(da):
        i = len(db)
    if i is None:
        return Parting(None, "", "", None, "", "")
    ob = a.blocks[i] if i < len(a.blocks) else None
    nb = b.blocks[i] if i < len(b.blocks) else None
    ref = nb or ob
    byte = caret = None
    before = after = ""
    if ob is not None and nb is not None:
        x, y = ob.data, nb.data
        byte = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
        before, after, caret = _excerpts(x, y, byte)
    elif ob is not None:
        before = _shown(ob.data[:EXCERPT]) + ("…" if len(ob.data) > EXCERPT else "")
    layer = ref.layer.label if ref else ""
    if a.model != b.model and i == 0:
        layer, path = "namespace", f"model {a.model} -> {b.model}"
    elif ob is not None and nb is not None and ob.key == nb.key:
        path = f"{ref.path}: {layer}-layer parameters changed"
    else:
        path = ref.path if ref else ""
    return Parting(i, layer, path, byte, before, after, caret)


def readable_tokens(a: Request, b: Request, provider: str = "anthropic") -> int | None:
    """What B, sent GAP_S after A on the same conversation, reads from the cache A wrote under
    `provider`'s rules (None: the rules do not know the model). The simulator decides: only what A's
    breakpoints wrote, above the minimum length, within the lookback, counts."""
    try:
        sim = Simulator(provider)
        sim.step(Call(t=0.0, request=a))
        return sim.step(Call(t=GAP_S, request=b)).usage.cache_read
    except UserError:
        return None


def diff_requests(a: Request, b: Request, provider: str = "anthropic") -> PrefixDiff:
    """The first block where B's chain leaves A's (both in A's namespace: a model switch parts at 0)."""
    counter = TokenCounter(get_tokenizer("cl100k_base"))
    p = where_parted(a, b)
    i = p.block
    shared = sum(counter.count(x) for x in b.blocks[: i if i is not None else len(a.blocks)])   # A's part of B
    total_b = sum(counter.count(x) for x in b.blocks)
    read = readable_tokens(a, b, provider)
    if i is None:
        same = len(a.blocks) == len(b.blocks)
        return PrefixDiff(a.model, b.model, len(a.blocks), len(b.blocks), None, "", "", None, "", "", shared, 0, 0.0,
                          same, provider, read, total_b)
    cost = None
    try:
        rates = PriceBook().rates(b.model, provider)   # an automatic cache's write is at the input rate
        cost = float((total_b - shared) * rates.cache_write_5m.base / 1_000_000)
    except UserError:
        pass
    return PrefixDiff(a.model, b.model, len(a.blocks), len(b.blocks), i, p.layer, p.path, p.byte, p.before, p.after,
                      shared, total_b - shared, cost, False, provider, read, total_b, p.caret)


def _body_from_file(path: Path) -> dict:
    check_regular(path)   # a FIFO would block the read forever
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise UserError(f"not valid JSON: {e.msg}", str(path), e.lineno, e.colno) from None
    except UnicodeDecodeError as e:
        raise UserError(f"not UTF-8 text (byte {e.start}); save the file as UTF-8", str(path)) from None
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", str(path)) from None
    except (RecursionError, ValueError) as e:   # nested past the stack, a 5,000-digit number
        raise located_error(e, str(path), None) from None

    body = split_entry(doc)[0] if isinstance(doc, dict) else None
    if body is None:
        raise UserError("not a request body (needs 'model' and 'messages')", str(path))
    return body


def load_pair(a: str, b: str | None, indices: tuple[int, int] | None) -> tuple[Request, Request, str]:
    """Two requests and the provider whose rules serve them: two (Anthropic) body files, or two
    indices of one log (the provider that served the first)."""
    if b is not None:
        out = []
        for p in (Path(a), Path(b)):
            try:
                out.append(render_anthropic(_body_from_file(p)))
            except LINE_ERRORS as e:   # a value of any type in the body: named, never a crash
                raise located_error(e, str(p), None) from None
        return out[0], out[1], "anthropic"
    if not indices:
        raise UserError("give two request files, or one log with --index I J")

    # --index counts requests: a skipped line would shift them onto other requests, so none is skipped.
    with collecting(strict=True, why="--index counts requests, so no line may be skipped: fix or delete it"):
        records = sources.load(a)
    for k in indices:
        if not 0 <= k < len(records):
            raise UserError(f"--index {k} is out of range: the log has {len(records)} requests", a)
    first = records[indices[0]]
    return first.call.request, records[indices[1]].call.request, first.provider
