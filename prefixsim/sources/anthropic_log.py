"""Anthropic Messages API logs: JSONL of request bodies (optionally with the response or its usage) and
VCR cassettes (YAML with `interactions[].request.parsed_body` / `response.parsed_body`).

Bodies are rendered exactly as sent (`render_anthropic`). Block sizes are counted with cl100k; when
the log has the response's usage, the blocks not sized before are scaled so the prompt totals the
observed size, which keeps predicted and observed numbers on one scale (Claude's tokenizer is not
public), while a block once sized keeps its size. Bedrock and Vertex AI bodies take their model
from the URL; a request that ran server tools is replayed as its model iterations.
"""
from __future__ import annotations

import datetime as dt
import math
import operator
from dataclasses import replace
from pathlib import Path
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.io.yamlsafe import check_aliases
from prefixsim.model import PROMPT_END, Block, Call, Layer, Request, Usage
from prefixsim.providers.anthropic import breakpoints as anthropic_breakpoints
from prefixsim.providers.model_ids import canonical_model
from prefixsim.sources import problems
from prefixsim.sources.cassette import back_to_back, decode_body, note_back_to_back, recorded_stamp
from prefixsim.sources.cloud import cloud_endpoint, cloud_model, with_url_model
from prefixsim.sources.files import read_regular
from prefixsim.sources.problems import guarded
from prefixsim.sources.record import LATEST_EPOCH, Record, check_model, first_given, request_key
from prefixsim.sources.scan import scan
from prefixsim.sources.server_tools import server_breakpoint, server_iterations  # noqa: F401  (server_iterations: tests)
from prefixsim.sources.usage import messages_usage, summed
from prefixsim.wire.anthropic import History, render_anthropic

#: Seconds between consecutive requests of a log without timestamps (well inside any TTL).
DEFAULT_SPACING = 10.0
DEFAULT_TTFT = 1.0


def is_body(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list) and "model" in obj


def looks_anthropic(body: dict, usage: dict | None) -> bool:
    """A Messages API body, by what only Anthropic writes: a Claude model, a top-level `system`,
    `anthropic_version`, or its usage keys. A body with model and messages alone (Cohere's, a bare
    OpenAI-compatible one) is no evidence: `sources.detect` refuses it rather than read it as Anthropic's."""
    model = body.get("model")
    return (isinstance(model, str) and canonical_model(model).startswith("claude")) or "system" in body \
        or "anthropic_version" in body or (isinstance(usage, dict) and "input_tokens" in usage)


def _url_of(obj: dict) -> object:
    req = obj.get("request")
    return obj.get("url") or obj.get("uri") or (
        (req.get("url") or req.get("uri")) if isinstance(req, dict) else None)


def split_entry(obj: Any) -> tuple[dict | None, dict | None, str | None]:
    """(request body, usage, timestamp) of one log entry in any of the accepted shapes."""
    if not isinstance(obj, dict):
        return None, None, None
    stamp = first_given(obj.get("timestamp"), obj.get("time"))
    if is_body(obj):
        return obj, obj.get("usage") if isinstance(obj.get("usage"), dict) else None, stamp
    url = _url_of(obj)
    body = with_url_model(obj.get("request") or obj.get("body") or obj.get("params"), url)
    if isinstance(body, dict) and not is_body(body):
        body = with_url_model(body.get("body") or body.get("parsed_body"), url)
    resp = _response(obj)
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else (
        resp.get("usage") if isinstance(resp, dict) else None)
    return (body if is_body(body) else None), usage, stamp


def _response(obj: dict) -> Any:
    """A log entry's response: an object, its `body`, or a streamed (SSE) text assembled into the
    message it streamed, with the usage of its last `message_delta` (`cassette.decode_body`)."""
    resp = obj.get("response") or {}
    if isinstance(resp, dict) and "body" in resp:
        resp = resp["body"] if isinstance(resp["body"], dict) else decode_body(resp["body"])
    elif isinstance(resp, (str, bytes)):
        resp = decode_body(resp)
    return resp if isinstance(resp, dict) else {}


def response_content(obj: Any) -> list | None:
    """The content blocks of a log entry's response, when the log kept them."""
    resp = _response(obj) if isinstance(obj, dict) else None
    content = resp.get("content") if isinstance(resp, dict) else None
    return content if isinstance(content, list) else None


def observed_usage(u: dict | None) -> Usage | None:
    """The response's usage as token classes (`usage.messages_usage`); None without one. A usage that
    lists its sampling `iterations` (threshold compaction: a `compaction` iteration the top-level
    counts leave out, then the `message` one) is their sum: every iteration was billed."""
    if not isinstance(u, dict) or "input_tokens" not in u:
        return None
    its = u.get("iterations")
    if isinstance(its, list) and its and all(isinstance(i, dict) and "input_tokens" in i for i in its):
        return summed([messages_usage(i) for i in its])
    return messages_usage(u)


class Sizer:
    """Counts each distinct block content once (by its content key): a conversation log repeats its
    whole history in every request, so tokenizing follows the distinct content, not the file's size.
    With `share`, equal contents also come back as one bytes object, for a caller that holds every
    request (`load`); a replay walk drops each request, so it keeps only the counts (memory per
    distinct block, not per byte of it). It also keeps the size each content was given once scaled
    to an observed total (`sized`): the same bytes have the same size in every request."""

    def __init__(self, count_text, share: bool = True) -> None:
        self.count_text = count_text
        self.share = share
        self._seen: dict[bytes, tuple[bytes | None, int]] = {}
        self.scaled: dict[bytes, int] = {}
        # The previous request's rendered blocks, their sizes and its sized blocks (`with_sizes`).
        self._made: tuple[tuple[Block, ...], list[int], list[Block]] = ((), [], [])

    def __call__(self, b: Block) -> tuple[bytes, int]:
        hit = self._seen.get(b.key)
        if hit is None:
            n = self.count_text(b.data.decode("utf-8", errors="replace"))
            hit = self._seen[b.key] = (b.data if self.share else None, n)
        return hit[0] or b.data, hit[1]

    def with_sizes(self, blocks: tuple[Block, ...], sizes: list[int]) -> tuple[Block, ...]:
        """The blocks (each counted) with their sizes. A log repeats its history, and `render.History`
        gives it back as the same Block objects: the leading ones that are the previous request's,
        with the same sizes, are its sized blocks again (list slices), the rest are made."""
        last, last_sizes, last_made = self._made
        m = min(len(blocks), len(last))
        same = list(map(operator.is_, blocks[:m], last[:m]))
        k = same.index(False) if False in same else m
        if sizes[:k] != last_sizes[:k]:
            k = next(i for i, (x, y) in enumerate(zip(sizes, last_sizes)) if x != y)
        seen = self._seen
        made = last_made[:k]
        made += [Block(b.layer, seen[b.key][0] or b.data, b.path, b.breakpoint, tokens=n)
                 for b, n in zip(blocks[k:], sizes[k:])]
        self._made = (blocks, sizes, made)
        return tuple(made)


def sized(request: Request, sizer: Sizer, total: int | None) -> Request:
    """Fix every block's size. Without an observed total, the cl100k counts. With one, a block whose
    content an earlier request already sized keeps that size (one prefix, one size: rescaling every
    request would give the same bytes a different size in each, and a cached prefix would seem to
    grow or shrink); the blocks not seen before share the rest of the total in proportion to their
    counts (cumulatively, so no rounding drift). When the known blocks already exceed the total, the
    new ones keep their counts; the request's total then differs from the observed one."""
    seen = sizer._seen
    counts = [(seen.get(b.key) or sizer(b))[1] for b in request.blocks]
    if total is None or sum(counts) == 0:
        sizes = counts
    else:
        known = [sizer.scaled.get(b.key) for b in request.blocks]
        fresh = [c for c, k in zip(counts, known) if k is None]
        rest = total - sum(k for k in known if k is not None)
        counted = sum(fresh)
        scaled: list[int] = []
        if rest >= 0 and counted > 0:
            cum = prev = 0
            for c in fresh:
                cum += c
                here = round(rest * cum / counted)
                scaled.append(here - prev)
                prev = here
        else:
            scaled = fresh
        new = iter(scaled)
        sizes = [k if k is not None else next(new) for k in known]
        for b, k, n in zip(request.blocks, known, sizes):
            if k is None:
                sizer.scaled.setdefault(b.key, n)
    return replace(request, blocks=sizer.with_sizes(request.blocks, sizes))


def prompt_end(request: Request, obs: Usage | None) -> int:
    """The uncached tokens the API reports past a breakpoint on the prompt's last block (the few
    tokens that close the prompt: 1 to 3 in the recordings of tests/data). They are a property of
    the request, as its size is, so they are kept as observed rather than spread over the blocks,
    which would make the cached prefix look that much longer. 0 when the last block is not cached
    (its uncached tail then holds real blocks) or the usage is unknown."""
    if obs is None or not request.blocks or obs.input_tokens >= obs.prompt_tokens:
        return 0
    return obs.input_tokens if (request.blocks[-1].breakpoint or request.auto_cache) else 0


def sized_with_end(request: Request, sizer: Sizer, obs: Usage | None,
                   label: str = "end of the prompt after the last breakpoint") -> Request:
    """The request sized to its observed prompt, the tokens that close it (`prompt_end`) a block apart."""
    trailer = prompt_end(request, obs)
    request = sized(request, sizer, obs.prompt_tokens - trailer if obs else None)
    if trailer:
        request = replace(request, blocks=(*request.blocks, Block(Layer.MESSAGES, PROMPT_END, label, tokens=trailer)))
    return request


def _record(body: dict, usage: dict | None, stamp: str | None, index: int, path: str, line: int,
            sizer: Sizer, rid: str | None = None, history: History | None = None,
            content: list | None = None, at: float | None = None, url: object = None) -> Record:
    """One request (UserError: the body, its usage or its timestamp cannot be used); `content` is
    its response's content blocks, when the log kept them (server-tool iterations); `at` its time
    when the log records none (a cassette's calls placed back to back by their durations)."""
    request = render_anthropic(body, history)
    check_model(request.model, "anthropic")
    cloud = cloud_endpoint(url)   # Claude on Bedrock / Vertex AI: that platform's rules and prices, on its endpoint
    if cloud is not None:
        request = replace(request, endpoint=cloud[1])
    anthropic_breakpoints(request)   # a request the API would reject (a fifth breakpoint) never ran
    obs = observed_usage(usage)
    try:
        later = [server_breakpoint(render_anthropic(b)) for b in server_iterations(body, content)]
    except UserError:   # a response whose blocks cannot be rendered: the request as one iteration
        later = []
    if isinstance(usage, dict) and isinstance(usage.get("iterations"), list) and any(
            isinstance(i, dict) and i.get("type") == "compaction" for i in usage["iterations"]):
        problems.note(path, line or None, "a response compacted the conversation (a `compaction` iteration): its "
                                          "usage is compared and priced as the sum of the iterations, but only "
                                          "the request as sent is replayed")
    if any(not r.auto_cache and sum(1 for b in r.blocks if b.breakpoint) >= 4 and not r.blocks[-1].breakpoint
           for r in later):
        problems.note(path, line or None, "a request ran server tools with all four breakpoints in use: the API's "
                                          "automatic 5-minute breakpoint after the server-tool results is not added "
                                          "(whether it takes a fifth slot is not documented)")
    if later:
        request, *later = sized_many([request, *later], sizer, obs.prompt_tokens if obs else None)
    else:
        request = sized_with_end(request, sizer, obs)
    t = _seconds(stamp, path, line) if stamp is not None else at if at is not None else index * DEFAULT_SPACING
    meta = body.get("metadata")
    stream = (request_key(meta.get("user_id"), "metadata.user_id") if isinstance(meta, dict) else None) or "main"
    rid = rid or generated_id(path, index)
    call = Call(t=t, request=request, stream=stream, label=rid, output_tokens=obs.output_tokens if obs else 0,
                ttft=DEFAULT_TTFT)
    # Each iteration samples once the previous one's response (its server-tool call) is out.
    its = tuple(Call(t=t + 2 * DEFAULT_TTFT * k, request=r, stream=stream, label=f"{rid} iteration {k + 1}",
                     output_tokens=0, ttft=DEFAULT_TTFT) for k, r in enumerate(later, start=1))
    return Record(call, rid, _stamp_text(stamp, t), obs, path, line, iterations=its,
                  provider=cloud[0] if cloud is not None else "anthropic")


def sized_many(requests: list[Request], sizer: Sizer, total: int | None) -> list[Request]:
    """Sizes for the iterations of one request whose observed usage sums them: blocks sized before
    keep their size; the rest of `total` goes to the new contents in proportion to their counts,
    each counted as often as the iterations carry it (rounded per content, so the sum may differ
    from `total` by a few tokens)."""
    shared = [[sizer(b) for b in r.blocks] for r in requests]
    counts = {b.key: n for r, sh in zip(requests, shared) for b, (_, n) in zip(r.blocks, sh)}
    size = {k: sizer.scaled[k] for k in counts if k in sizer.scaled}
    if total is not None:
        occurrences = [b.key for r in requests for b in r.blocks]
        rest = total - sum(size[k] for k in occurrences if k in size)
        counted = sum(counts[k] for k in occurrences if k not in size)
        factor = rest / counted if rest >= 0 and counted > 0 else 1.0
        for k, n in counts.items():
            if k not in size:
                size[k] = sizer.scaled[k] = round(n * factor)
    out = []
    for r, sh in zip(requests, shared):
        out.append(replace(r, blocks=tuple(Block(b.layer, data, b.path, b.breakpoint, tokens=size.get(b.key, n))
                                           for b, (data, n) in zip(r.blocks, sh))))
    return out


def generated_id(path: str, index: int) -> str:
    """The id of a request its log gives none: the path as given, not only the file's name, since ids
    deduplicate requests across paths (two folders' `calls.jsonl#0` are two requests)."""
    return f"{path}#{index}"


def _stamp_text(stamp: Any, t: float) -> str:
    """A record's timestamp as ISO text (epoch numbers converted), or `+Ns` for a log without times."""
    if stamp is None or stamp == "":
        return f"+{t:g}s"
    if isinstance(stamp, str):
        return stamp
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _seconds(stamp: Any, path: str, line: int) -> float:
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and math.isfinite(stamp):
        t = float(stamp) / (1000.0 if stamp > 1e11 else 1.0)
    elif isinstance(stamp, str):
        try:
            when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            # A stamp without a zone is UTC (logs are written by servers), never the machine's local time.
            t = (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()
        except (ValueError, OverflowError):
            t = math.nan
    else:
        t = math.nan
    if not 0 <= t <= LATEST_EPOCH:   # NaN fails too
        raise UserError(f"unreadable timestamp {shown(stamp)} (ISO 8601 or epoch seconds / ms, "
                        "from 1970 to 9999)", path, line)
    return t


def request_id(obj: Any) -> str | None:
    """A log line's request id (None without one); UserError: the line is no Messages request."""
    if split_entry(obj)[0] is None:
        typ = obj.get("type") if isinstance(obj, dict) else None
        kind = f" (type {shown(typ)})" if typ else ""
        raise UserError(f"not an Anthropic Messages request{kind}; needs 'model' and 'messages'")
    return request_key(first_given(obj.get("id"), obj.get("request_id")))


def line_time(obj: Any) -> float | None:
    """A request line's time as `_record` reads it (None: the line has none; its place in the log is
    its time). UserError: the line is no request (`timeorder.LineTime`)."""
    request_id(obj)
    stamp = split_entry(obj)[2]
    return None if stamp is None else _seconds(stamp, "", 0)


def line_record(obj: Any, rid: str | None, index: int, path: str, line: int, sizer: Sizer,
                history: History) -> Record:
    """The request of a line `request_id` accepted (UserError: its body, usage or timestamp cannot
    be used); `history` is the same reader's previous line, whose equal messages are not rendered again."""
    body, usage, stamp = split_entry(obj)
    return _record(body, usage, stamp, index, path, line, sizer, rid, history, response_content(obj),
                   url=_url_of(obj) if isinstance(obj, dict) else None)


def load_jsonl(path: Path, sizer: Sizer) -> list[Record]:
    """A JSONL log: one request per line (a body, or {request, response|usage, timestamp}), in file
    order. A line that is no request, or whose body, usage or timestamp cannot be used, is skipped and named."""
    return [rec for _, rec in scan(path, request_id, line_record, sizer, line_time)]


def load_cassette(path: Path, sizer: Sizer) -> list[Record]:
    """A VCR cassette: the Messages calls among its interactions (count_tokens calls are skipped). An
    interaction that cannot be used is skipped and named; a cassette whose YAML aliases would expand
    past `yamlsafe.MAX_ALIAS_NODES` is refused before any body is rendered."""
    from ruamel.yaml import YAML  # lazy: start-up: the YAML parser loads only to read YAML

    yaml = YAML(typ="safe", pure=True)
    try:
        doc = yaml.load(read_regular(path).decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UserError(f"not UTF-8 text (byte {e.start})", str(path)) from None
    except Exception as e:  # ruamel raises several types; all are the user's file being malformed
        mark = getattr(e, "problem_mark", None)
        why = problems.unusable(e) if isinstance(e, RecursionError) else getattr(e, "problem", e)
        raise UserError(f"not valid YAML: {why}", str(path), mark.line + 1 if mark else None) from None
    check_aliases(doc, str(path))
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions", []), list):
        raise UserError("a cassette is a mapping with a list of `interactions:`", str(path), 1)

    out: list[Record] = []
    platforms: set[str] = set()
    inters = doc.get("interactions") or []
    offsets = back_to_back(inters)
    for i, inter in enumerate(inters):
        at = offsets[i] if offsets is not None else None
        rec = guarded(str(path), None, _interaction, inter, i, path, len(out), sizer, at, where=f"interaction {i}")
        if rec is not None:
            out.append(rec)
            req = inter.get("request") if isinstance(inter, dict) else None
            found = cloud_model(req.get("uri")) if isinstance(req, dict) else None
            if found:
                platforms.add(found[0])
    if platforms:
        names = " and ".join("Amazon Bedrock" if p == "bedrock" else "Vertex AI" for p in sorted(platforms))
        problems.note(str(path), None, f"requests sent to {names} are replayed with that platform's cache rules and "
                                       "priced at its own prices, on the endpoint the URL names")
    note_back_to_back(str(path), offsets, out)
    return out


def _interaction(inter: Any, i: int, path: Path, index: int, sizer: Sizer, at: float | None = None) -> Record | None:
    """One interaction's Messages call (None: another endpoint; UserError: it cannot be used)."""
    if not isinstance(inter, dict):
        raise UserError("is not a mapping")
    req = inter.get("request") or {}
    uri = str(req.get("uri", "")) if isinstance(req, dict) else ""
    body = with_url_model(_parsed(req), uri) if isinstance(req, dict) else None
    if not is_body(body) or "count_tokens" in uri:
        return None
    resp = inter.get("response") or {}
    resp = _parsed(resp) if isinstance(resp, dict) else None
    usage = resp.get("usage") if isinstance(resp, dict) else None
    content = resp.get("content") if isinstance(resp, dict) and isinstance(resp.get("content"), list) else None
    stamp = recorded_stamp(inter) if at is None else None   # go-vcr's durations space calls finer than a Date
    return _record(body, usage, stamp, index, str(path), 0, sizer, f"{path}#{i}", content=content, at=at, url=uri)


def _parsed(part: dict) -> Any:
    """A cassette request's or response's JSON body: `parsed_body`, else `body` decoded (JSON text as
    vcrpy writes it, gzip or base64, a streamed response assembled: `cassette.decode_body`); None
    when it is none of these."""
    return part["parsed_body"] if "parsed_body" in part else decode_body(part.get("body"))
