"""Gemini API traffic: `generateContent` request/response JSON Lines logs and VCR cassettes, in the
REST API's camelCase or the google-genai SDK's snake_case, with the explicit caches
(`cachedContents` create / update / delete) they hold.

Usage (G-CC): `promptTokenCount` includes `cachedContentTokenCount` (implicit or explicit hits), so
uncached = prompt - cached; output = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is
billed as output and never sent back). A request is replayed under `provider: gemini` (implicit
caching, a best-effort range) and priced with genai-prices' `google` rates.

Explicit caches: a create is its own request (billed as input, `usageMetadata.totalTokenCount`
tokens), kept from its creation to its delete or expiry (the response's `expireTime - createTime`,
else the request's `ttl`, else 1 h; an update moves the expiry), storage billed for that time. A
request naming `cachedContent` starts with that cache's blocks, read by reference at the cached
rate. A cache the log does not create is one block of the observed `cachedContentTokenCount`
tokens, its storage unknown (not billed, and said so).

Sizes are counted with cl100k_base (Gemini's tokenizer is not public) and pinned to the observed
usage as the OpenAI reader does (`openai_sizes`): exact at each request's end, at a cache's end,
and wherever a later request starts with an earlier one."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import xxhash

from prefixsim.errors import UserError, shown
from prefixsim.model import CachedRef, Call, Layer, Request, Usage
from prefixsim.providers.gemini_tables import GEMINI_EXPLICIT_DEFAULT_TTL
from prefixsim.sources import problems
from prefixsim.sources.anthropic_log import DEFAULT_SPACING, DEFAULT_TTFT, Sizer, _seconds, _stamp_text, generated_id
from prefixsim.sources.cassette import back_to_back, note_back_to_back, interactions, load_document, request_of, requests_in
from prefixsim.sources.gemini_wire import GeminiExchange, _ttl, is_call, kind, looks_gemini, observed_usage, split, streamed
from prefixsim.sources.timeorder import ordered_lines
from prefixsim.sources.openai_sizes import SizerMemory, _chain, _sizes
from prefixsim.sources.record import Record, check_model, first_given, request_key, token_count
from prefixsim.sources.scan import LineChecks
from prefixsim.wire import gemini as G
from prefixsim.wire.anthropic import dumps
from prefixsim.wire.openai import Piece

#: Gemini's tokenizer is not public: counts use this encoding and are pinned to the observed usage.
ENCODING = "cl100k_base"
_MODEL_IN_URI = re.compile(r"/models/([^/:?]+)(?::|$)")


def model_of(ex: GeminiExchange) -> str:
    """The model id (without `models/` or a Vertex path): the body's, the uri's, or the response's."""
    model = G.field(ex.body, "model")
    if not isinstance(model, str) or not model.strip():
        m = _MODEL_IN_URI.search(ex.uri)
        model = m.group(1) if m else G.field(ex.response, "modelVersion") or G.field(ex.response, "model")
    if not isinstance(model, str) or not model.strip():
        raise UserError(f"request has no model (model: {shown(model)})")
    model = model.strip().rsplit("/", 1)[-1]
    check_model(model, "gemini")
    return model


@dataclass
class _Cache:
    pieces: tuple[Piece, ...]
    tokens: int
    record: int          # index of its creation among the reader's records
    created: float
    expires: float
    deleted: float | None = None


class Reader:
    """One log or cassette: each event (a line, an interaction) in file order; `records()` at the end
    gives the requests with every explicit cache's storage time filled in."""

    def __init__(self, path: str, sizer: Sizer) -> None:
        self.path = path
        self.st: SizerMemory = sizer.__dict__.setdefault("gemini_state", SizerMemory())
        self.out: list[Record] = []
        self.caches: dict[str, _Cache] = {}
        self.events = 0
        self.unknown: set[str] = set()
        #: a cassette's calls placed back to back by their durations, by interaction (None: no durations)
        self.offsets: list[float] | None = None
        self.interaction = 0

    def _time(self, ex: GeminiExchange, line: int) -> float:
        if ex.stamp is not None:
            return _seconds(ex.stamp, self.path, line)
        if self.offsets is not None:
            return self.offsets[self.interaction]
        return self.events * DEFAULT_SPACING

    def event(self, ex: GeminiExchange, rid: str | None, line: int) -> Record | None:
        """The Record of a generate or create call (None for an update or delete, applied here)."""
        what = kind(ex)
        t = self._time(ex, line)
        self.events += 1
        if what in ("update", "delete"):
            self._change(ex, what, t, line)
            return None
        model = model_of(ex)
        if what == "create":
            return self._create(ex, rid, model, t, line)
        return self._generate(ex, rid, model, t, line)

    def _sized(self, model: str, pieces: list[Piece], total: int | None,
               anchor: tuple[int, int] | None = None) -> tuple[list[bytes], list[int]]:
        seed = xxhash.xxh3_128_digest(f"gemini\0{model}".encode())
        chain = _chain(seed, pieces)
        if anchor is not None and anchor[0] > 0:   # a named cache's end: its tokens, as created or observed
            self.st.remember(self.st.anchors, chain[anchor[0] - 1], anchor[1])
        sizes = _sizes(self.st, ENCODING, pieces, chain, total)
        if total is not None and chain:
            self.st.remember(self.st.anchors, chain[-1], total)
        return chain, sizes

    def _create(self, ex: GeminiExchange, rid: str | None, model: str, t: float, line: int) -> Record:
        name = G.field(ex.response, "name")
        if not isinstance(name, str) or not name.startswith("cachedContents/"):
            raise UserError("cachedContents.create without the created cache's name in its response "
                            "(requests naming it cannot be matched)")
        pieces = G.own_pieces(ex.body, self.st.seen)
        if not pieces:
            raise UserError(f"cachedContents.create of {name} holds no contents, tools or system instruction")
        usage = G.field(ex.response, "usageMetadata")
        total = None if not isinstance(usage, dict) else token_count(G.field(usage, "totalTokenCount"),
                                                                     "usageMetadata.totalTokenCount")
        _, sizes = self._sized(model, pieces, total or None)
        tokens = total or sum(sizes)
        ttl = _ttl(ex, "createTime")
        ttl = float(GEMINI_EXPLICIT_DEFAULT_TTL.value) if ttl is None else ttl   # type: ignore[arg-type]
        self.caches[name] = _Cache(tuple(pieces), tokens, len(self.out), t, t + ttl)
        request = Request(model=model, blocks=tuple(p.block(n) for p, n in zip(pieces, sizes)))
        call = Call(t=t, request=request, stream=f"cache {name.split('/', 1)[1]}", label=rid or name, output_tokens=0,
                    ttft=DEFAULT_TTFT, cached=CachedRef(name, len(pieces), create=True, kept_s=ttl, recorded=True))
        stamp = ex.stamp or G.field(ex.response, "createTime")
        obs = Usage(input_tokens=tokens) if total else None
        rec = Record(call, rid or name, _stamp_text(stamp, t) if ex.stamp else (stamp or _stamp_text(None, t)),
                     obs, self.path, line, provider="gemini")
        self.out.append(rec)
        return rec

    def _change(self, ex: GeminiExchange, what: str, t: float, line: int) -> None:
        path = ex.uri.split("?", 1)[0].rstrip("/")
        name = f"cachedContents/{path.rsplit('/cachedContents/', 1)[1]}" if "/cachedContents/" in path \
            else G.field(ex.body, "name")
        c = self.caches.get(name) if isinstance(name, str) else None
        if c is None:
            problems.note(self.path, line or None, f"{what} of {name} which this log does not create (ignored)")
            return
        if what == "delete":
            c.deleted = t if c.deleted is None else c.deleted
            return
        ttl = _ttl(ex, "updateTime")
        if ttl is None:
            raise UserError(f"cachedContents update of {name} gives neither ttl nor expireTime / updateTime")
        c.expires = t + ttl

    def _generate(self, ex: GeminiExchange, rid: str | None, model: str, t: float, line: int) -> Record:
        body = ex.body
        obs = observed_usage(G.field(ex.response, "usageMetadata"))
        name = G.cache_name(G.setting(body, "cachedContent"))
        prefix: tuple[Piece, ...] = ()
        anchor = None
        if name is not None:
            c = self.caches.get(name)
            if c is not None and c.created <= t < (c.expires if c.deleted is None else min(c.deleted, c.expires)):
                prefix, anchor = c.pieces, (len(c.pieces), c.tokens)
            else:
                if name not in self.unknown:
                    self.unknown.add(name)
                    why = "ended before this request" if c is not None else "not created in this log"
                    problems.note(self.path, line or None, f"{name} {why}: read as one block of the observed "
                                  "cachedContentTokenCount; its storage is not billed (unknown)")
                prefix = (Piece(Layer.SYSTEM, dumps({"cachedContent": name}), "cachedContent", (), uncertain=True),)
                anchor = (1, obs.cache_read if obs else 0)
        pieces = [*prefix, *G.own_pieces(body, self.st.seen)]
        if not pieces:
            raise UserError("request has no contents")
        chain, sizes = self._sized(model, pieces, obs.prompt_tokens if obs else None, anchor)
        output = ()
        out = G.output_piece(ex.response, self.st.seen)
        if out is not None and obs is not None:
            visible = token_count(G.field(G.field(ex.response, "usageMetadata"), "candidatesTokenCount"),
                                  "candidatesTokenCount")
            output = (out.block(visible),)
            ext = _chain(chain[-1], [out])
            self.st.remember(self.st.anchors, ext[-1], obs.prompt_tokens + visible)
        request = Request(model=model, blocks=tuple(p.block(n) for p, n in zip(pieces, sizes)), output=output)
        rid = rid or generated_id(self.path, len(self.out))
        call = Call(t=t, request=request, stream="main", label=rid, output_tokens=obs.output_tokens if obs else 0,
                    ttft=DEFAULT_TTFT, cached=CachedRef(name, len(prefix)) if name is not None else None)
        rec = Record(call, rid, _stamp_text(ex.stamp, t), obs, self.path, line, provider="gemini")
        self.out.append(rec)
        return rec

    def records(self) -> list[Record]:
        """The requests, each creation carrying the time its cache was kept (creation to delete or expiry)."""
        out = list(self.out)
        for c in self.caches.values():
            rec = out[c.record]
            end = c.expires if c.deleted is None else min(c.deleted, c.expires)
            ref = replace(rec.call.cached, kept_s=max(0.0, end - c.created))   # type: ignore[arg-type]
            out[c.record] = replace(rec, call=replace(rec.call, cached=ref))
        return out


def request_id(obj: dict, ex: GeminiExchange) -> str | None:
    rid = first_given(obj.get("id"), obj.get("request_id"))
    if rid is None:
        rid = G.field(ex.response, "responseId")
    return request_key(rid)


def line_time(obj: Any) -> float | None:
    """A call line's time as `Reader.event` reads it (None: the line has none; its place in the log is
    its time). UserError: the line is no Gemini call (`timeorder.LineTime`)."""
    ex = split(obj)
    if ex is None or not looks_gemini(obj):
        raise UserError("not a Gemini call")
    return None if ex.stamp is None else _seconds(ex.stamp, "", 0)


def load_jsonl(path: Path, sizer: Sizer) -> list[Record]:
    """One call per line, in time order (`timeorder`: the caches and the counts the reader anchors
    follow the replay's order, not the file's); a line that is no Gemini call, or whose body, usage
    or time cannot be used, is skipped and named."""
    reader = Reader(str(path), sizer)
    checks = LineChecks(path)

    def one(obj: Any, n: int) -> Record | None:
        ex = split(obj)
        if ex is None or not looks_gemini(obj):
            raise UserError("not a Gemini call; needs 'contents' (or a cachedContents uri) and a model")
        rid = request_id(obj, ex)
        if checks.duplicate(rid, n):
            return None
        return reader.event(ex, rid, n)

    times: list[tuple[int, float]] = []
    for n, _, obj in ordered_lines(path, line_time):
        rec = problems.guarded(str(path), n, one, obj, n)
        if rec is not None:
            times.append((n, rec.call.t))
            checks.usage(rec.observed, n)
    for n, t in sorted(times):   # out of order is said of the file as written
        checks.time(t, n)
    checks.finish()
    return reader.records()


def load_cassette(path: Path, sizer: Sizer) -> list[Record]:
    """A VCR cassette's generateContent and cachedContents calls (other endpoints passed over)."""
    reader = Reader(str(path), sizer)
    inters = interactions(load_document(path), path)
    reader.offsets = back_to_back(inters)

    def one(inter: Any, i: int) -> None:
        reader.interaction = i
        body, resp, uri, method = request_of(inter)
        if not is_call(uri) or method == "GET":   # list / get of caches change nothing
            return
        if resp is None and ":streamGenerateContent" in uri:
            resp = streamed(inter["response"])
        ex = GeminiExchange(body if isinstance(body, dict) else {}, resp if isinstance(resp, dict) else None, None, uri, method)
        rid = request_key(G.field(ex.response, "responseId"), "responseId") if kind(ex) == "generate" else None
        reader.event(ex, rid, 0)

    for i, inter in enumerate(inters):
        problems.guarded(str(path), None, one, inter, i, where=f"interaction {i}")
    records = reader.records()
    note_back_to_back(str(path), reader.offsets, records)
    return records


def sniff_cassette(path: Path) -> bool:
    """Whether a cassette holds Gemini API calls."""
    return any(is_call(uri) for _, uri, _ in requests_in(path))
