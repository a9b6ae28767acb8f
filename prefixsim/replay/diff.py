"""Where two requests' prefixes part: layer, block index, JSON path, byte offset, an excerpt of each
side, and what the parting costs on the next request (the tokens after it are written again)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from prefixsim import sources
from prefixsim.core.chain import chain, namespace_digest
from prefixsim.core.pricing import PriceBook
from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.errors import UserError
from prefixsim.model import Request
from prefixsim.sources.anthropic_log import split_entry
from prefixsim.sources.files import check_regular
from prefixsim.sources.problems import LINE_ERRORS, located_error, collecting
from prefixsim.wire.anthropic import render_anthropic

EXCERPT = 40


@dataclass(frozen=True, slots=True)
class PrefixDiff:
    """`block` is the first differing block index (None: B extends A, or they are equal)."""

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

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}

    def describe(self) -> str:
        if self.block is None:
            return (f"B extends A: all {self.blocks_a} blocks of A are a prefix of B ({self.shared_tokens:,} tokens "
                    f"readable from the cache).")
        lines = [f"prefixes part at block {self.block}: {self.layer} layer, {self.path}"
                 + (f", byte {self.byte}" if self.byte is not None else ""),
                 f"  A: {self.before!r}", f"  B: {self.after!r}",
                 f"shared prefix {self.shared_tokens:,} tokens; {self.rewritten_tokens:,} tokens after the parting "
                 "are written again on the next request"
                 + (f" (${self.cost_usd:.6f} of extra write at {self.model_b}'s 5m rate)" if self.cost_usd is not None
                    else "")]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Parting:
    """Where B's chain leaves A's, without counting tokens (`block` None: B extends A, or equal)."""

    block: int | None
    layer: str
    path: str
    byte: int | None
    before: str
    after: str


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
    byte = None
    before = after = ""
    if ob is not None and nb is not None:
        x, y = ob.data, nb.data
        byte = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
        lo = max(0, byte - EXCERPT // 2)
        before = x[lo: byte + EXCERPT].decode("utf-8", errors="replace")
        after = y[lo: byte + EXCERPT].decode("utf-8", errors="replace")
    elif ob is not None:
        before = ob.data[:EXCERPT].decode("utf-8", errors="replace")
    layer = ref.layer.label if ref else ""
    if a.model != b.model and i == 0:
        layer, path = "namespace", f"model {a.model} -> {b.model}"
    elif ob is not None and nb is not None and ob.key == nb.key:
        path = f"{ref.path}: {layer}-layer parameters changed"
    else:
        path = ref.path if ref else ""
    return Parting(i, layer, path, byte, before, after)


def diff_requests(a: Request, b: Request) -> PrefixDiff:
    """The first block where B's chain leaves A's (both in A's namespace: a model switch parts at 0)."""
    counter = TokenCounter(get_tokenizer("cl100k_base"))
    p = where_parted(a, b)
    i = p.block
    shared = sum(counter.count(x) for x in b.blocks[: i if i is not None else len(b.blocks)])
    total_b = sum(counter.count(x) for x in b.blocks)
    if i is None:
        return PrefixDiff(a.model, b.model, len(a.blocks), len(b.blocks), None, "", "", None, "", "", shared, 0, 0.0)
    cost = None
    try:
        rates = PriceBook().rates(b.model, "anthropic")
        cost = float((total_b - shared) * rates.cache_write_5m.base / 1_000_000)
    except UserError:
        pass
    return PrefixDiff(a.model, b.model, len(a.blocks), len(b.blocks), i, p.layer, p.path, p.byte, p.before, p.after,
                      shared, total_b - shared, cost)


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


def load_pair(a: str, b: str | None, indices: tuple[int, int] | None) -> tuple[Request, Request]:
    """Two requests: two body files, or two indices of one log."""
    if b is not None:
        out = []
        for p in (Path(a), Path(b)):
            try:
                out.append(render_anthropic(_body_from_file(p)))
            except LINE_ERRORS as e:   # a value of any type in the body: named, never a crash
                raise located_error(e, str(p), None) from None
        return out[0], out[1]
    if not indices:
        raise UserError("give two request files, or one log with --index I J")

    # --index counts requests: a skipped line would shift them onto other requests, so none is skipped.
    with collecting(strict=True, why="--index counts requests, so no line may be skipped: fix or delete it"):
        records = sources.load(a)
    for k in indices:
        if not 0 <= k < len(records):
            raise UserError(f"--index {k} is out of range: the log has {len(records)} requests", a)
    return records[indices[0]].call.request, records[indices[1]].call.request
