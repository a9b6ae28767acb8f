"""OpenAI Chat Completions and Responses traffic, and DeepSeek's OpenAI-compatible API: JSONL request
logs and VCR cassettes, with usage when present.

Blocks are what the model sees (`wire/openai.py`): tools, instructions, then one block per message or
input item (per content part where a `prompt_cache_breakpoint` marks one). Sizes are counted with the
model's tiktoken encoding and OpenAI's chat framing, then anchored to observed usage: a request's
prompt count is exact at its end, and a later request that starts with the same blocks is exact at
that point too (the earlier count), as is the end of the output a response appended and the next
request sent back (prompt + completion tokens). Between anchors the counted sizes are kept, the
difference put on the tool definitions (whose rendering the count knows least) or the last block.

Usage: OpenAI counts cached tokens inside the prompt (uncached = prompt - cached - written; Chat
`usage.prompt_tokens_details.cached_tokens`, Responses `usage.input_tokens_details.cached_tokens` and
`cache_write_tokens`, O-PC); DeepSeek reports `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`
(DS kv_cache). A request is replayed with the rules and prices of the provider it was sent to:
DeepSeek when its model or its host says so, else OpenAI.

A Responses request that continues another with `previous_response_id` runs on the server-side
conversation: its prefix is the earlier request's input and output, rebuilt from the log.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import xxhash

from prefixsim.errors import UserError
from prefixsim.model import Call, Layer, Request, Usage
from prefixsim.providers.tables import AZURE_OPENAI_HOSTS, CLAUDE_PLATFORMS, canonical_model
from prefixsim.sources.anthropic_log import DEFAULT_SPACING, DEFAULT_TTFT, Sizer, _seconds, _stamp_text, generated_id
from prefixsim.sources.cassette import decode_body
from prefixsim.sources.openai_replies import inferred_outputs
from prefixsim.sources.openai_sizes import SizerMemory, _chain, _count, _sizes, _spread, state_of
from prefixsim.sources.record import Record, check_model, checked_usage, first_given, request_key, token_count
from prefixsim.sources import openai_repeat as repeat
from prefixsim.sources import routers
from prefixsim.sources.scan import scan
from prefixsim.wire import openai as R
from prefixsim.wire.anthropic import dumps

def _body_of(value: Any) -> Any:
    if isinstance(value, dict) and ("body" in value or "parsed_body" in value) and "model" not in value:
        inner = value.get("parsed_body", value.get("body"))
        return decode_body(inner)
    return value if isinstance(value, dict) else decode_body(value)


def split(obj: Any) -> tuple[dict | None, dict | None, dict | None, Any]:
    """(request body, response body, usage, timestamp) of a log line in any accepted shape: a body
    (optionally with `usage`), or {request|body|params, response|usage, timestamp|time|created}."""
    if not isinstance(obj, dict):
        return None, None, None, None
    raw = obj.get("request") or obj.get("body") or obj.get("params")
    body = _body_of(raw) if raw is not None else obj
    resp = obj.get("response")
    resp = _body_of(resp) if resp is not None else None
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else (
        resp.get("usage") if isinstance(resp, dict) else None)
    stamp = first_given(obj.get("timestamp"), obj.get("time"))
    return (body if isinstance(body, dict) else None), (resp if isinstance(resp, dict) else None), \
        (usage if isinstance(usage, dict) else None), stamp


_OPENAI_MODEL = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "deepseek")


def openai_model(model: Any) -> bool:
    """A model name OpenAI or DeepSeek writes (gpt-*, o1/o3/o4*, chatgpt-*, deepseek-*)."""
    return isinstance(model, str) and canonical_model(model).startswith(_OPENAI_MODEL)


def looks_openai(obj: dict) -> bool:
    """Chat Completions or Responses traffic: OpenAI / DeepSeek usage keys, a Responses `input`, a
    system-role message, or a model name of theirs."""
    body, _, usage, _ = split(obj)
    if usage and ("prompt_tokens" in usage or "input_tokens_details" in usage or "prompt_cache_hit_tokens" in usage):
        return True
    if not body or "model" not in body:
        return False
    if isinstance(body.get("input"), (list, str)) and "messages" not in body:
        return True
    if openai_model(body.get("model")) or routers.router_model(body.get("model")):
        return isinstance(body.get("messages"), list)
    msgs = body.get("messages")
    return isinstance(msgs, list) and any(isinstance(m, dict) and m.get("role") in ("system", "developer", "tool")
                                          for m in msgs)


def provider_of(model: str, uri: str = "", response: Any = None) -> str:
    """The provider whose cache rules and prices apply: by host, router upstream, model (`routers`)."""
    return routers.provider_of(model, uri, response)


#: Request settings OpenAI renders ahead of the conversation (hidden instructions), so a change of
#: any invalidates the whole prefix (O-PC "Which settings affect the cached prefix?": tools are
#: blocks of their own; these are the rest). Chat and Responses spell some differently.
PREFIX_SETTINGS = ("parallel_tool_calls", "response_format", "text", "reasoning", "reasoning_effort", "verbosity",
                   "context_management")


def prefix_settings(body: dict) -> bytes:
    """The settings of `PREFIX_SETTINGS` a request sets, as bytes mixed in before its first block
    (empty when it sets none). Of `reasoning` only the effort counts (a summary setting is output)."""
    found = []
    for key in PREFIX_SETTINGS:
        value = body.get(key)
        if key == "reasoning" and isinstance(value, dict):
            value = value.get("effort")
        if value is not None:
            found.append((key, value))
    return dumps(found) if found else b""


def _request_params(body: dict) -> tuple[str, str]:
    retention = body.get("prompt_cache_retention")
    options = body.get("prompt_cache_options")
    mode = options.get("mode") if isinstance(options, dict) else None
    return (retention if isinstance(retention, str) else "", mode if isinstance(mode, str) else "")


def render_openai(body: dict) -> Request:
    """A Chat Completions or Responses body -> Request (tools, instructions, messages / input items),
    block sizes left to the tokenizer."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise UserError("request has no 'model'")
    pieces = R.request_pieces(body)
    retention, mode = _request_params(body)
    return Request(model=model, blocks=tuple(p.block() for p in pieces), layer_params=(prefix_settings(body), b"", b""),
                   retention=retention, cache_mode=mode, explicit=tuple(i for i, p in enumerate(pieces) if p.mark))


def observed_usage(u: dict | None) -> Usage | None:
    """Usage as token classes (cached tokens are inside the prompt); UserError for fields that are not counts."""
    if not u:
        return None
    if "prompt_tokens" in u or "prompt_cache_hit_tokens" in u:   # Chat Completions (and DeepSeek's variant)
        names = ("prompt_tokens", "prompt_tokens_details", "completion_tokens")
    elif "input_tokens" in u:                                    # Responses
        names = ("input_tokens", "input_tokens_details", "output_tokens")
    else:
        return None
    details = u.get(names[1])
    details = details if isinstance(details, dict) else {}
    key = "prompt_cache_hit_tokens" if "prompt_cache_hit_tokens" in u else "num_cached_tokens"   # DeepSeek's, Mistral's
    cached = token_count(details.get("cached_tokens"), f"{names[1]}.cached_tokens") if "cached_tokens" in details \
        else token_count(u.get(key), key)
    if names[0] in u:
        prompt = token_count(u.get(names[0]), names[0])
    else:   # DeepSeek: hit + miss
        prompt = cached + token_count(u.get("prompt_cache_miss_tokens"), "prompt_cache_miss_tokens")
    written = token_count(details.get("cache_write_tokens"), f"{names[1]}.cache_write_tokens")
    if cached <= prompt and prompt - cached < written <= prompt:   # written and read by one request (OpenRouter's
        written = max(0, written - cached)                         # Gemini caches): the tokens count once, as read
    return checked_usage(Usage(input_tokens=prompt - cached - written, cache_write_5m=written, cache_read=cached,
                               output_tokens=token_count(u.get(names[2]), names[2])))


def _reasoning_tokens(u: dict | None) -> int:
    if not isinstance(u, dict):
        return 0
    for key in ("output_tokens_details", "completion_tokens_details"):
        d = u.get(key)
        if isinstance(d, dict) and isinstance(d.get("reasoning_tokens"), int):
            return max(0, d["reasoning_tokens"])
    return 0


def earlier_reasoning_dropped(pieces: list[R.Piece], body: dict) -> list[R.Piece]:
    """OpenAI's reasoning models keep the reasoning of the current turn only: reasoning items sent back
    before the latest user message are not in the context (reasoning guide: "input and output
    tokens from each step are carried over, while reasoning tokens are discarded"), unless the
    request asks for `reasoning.context: "all_turns"` (GPT-5.6+)."""
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("context") == "all_turns":
        return pieces
    last_user = max((i for i, p in enumerate(pieces) if p.data.startswith(b'{"role":"user"')), default=-1)
    if not any(p.reasoning and i < last_user for i, p in enumerate(pieces)):
        return pieces
    return [p for i, p in enumerate(pieces) if not (p.reasoning and i < last_user)]


def _conversation(body: dict) -> str | None:
    conv = body.get("conversation")
    conv = conv.get("id") if isinstance(conv, dict) else conv
    return conv if isinstance(conv, str) and conv else None


def _thread(body: dict) -> str | None:
    """The server-side conversation a Responses request continues: a `previous_response_id`, or a
    `conversation` (the Conversations API: every earlier item of it is in the context)."""
    prev = body.get("previous_response_id")
    if isinstance(prev, str) and prev:
        return f"previous_response_id:{prev}"
    conv = _conversation(body)
    return f"conversation:{conv}" if conv else None


@dataclass(frozen=True, slots=True)
class Exchange:
    """One recorded call, whatever held it: request body, response body, usage, time, where."""

    body: dict
    response: dict | None
    usage: dict | None
    stamp: Any
    uri: str = ""


def build(ex: Exchange, sizer: Sizer, provider: str | None = None) -> tuple[Request, Usage | None, str]:
    """The Request of one exchange with its blocks sized, its output attached, and the reader state
    updated; the observed usage; the provider. UserError: the body or usage cannot be used."""
    if routers.cohere_shape(ex.response):
        shaped, usage = routers.from_cohere(ex.response)  # type: ignore[arg-type]
        ex = replace(ex, response=shaped, usage=usage)
    st = state_of(sizer)
    # A Chat request of a conversation whose previous request was built: what it repeats is taken from it.
    talk = repeat.conversation(ex.body)
    last = st.built.get(talk) if talk is not None else None
    # Anthropic's markers, which a router passes on (none on the messages the previous request sent as they are)
    body, marks, auto = routers.breakpoints(ex.body, repeat.unmarked(last, ex.body))
    model = body.get("model")
    if model is None and isinstance(ex.response, dict) and isinstance(ex.response.get("model"), str):
        model = ex.response["model"]   # Azure OpenAI names the deployment in the URL, the model in the response
    if not isinstance(model, str) or not model.strip():
        raise UserError("request has no 'model'")
    provider = provider or provider_of(model, ex.uri, ex.response)
    check_model(model, provider)
    obs = observed_usage(ex.usage)
    claude = provider in CLAUDE_PLATFORMS   # Anthropic's rules through a router: its breakpoints, its closing tokens
    history: tuple[R.Piece, ...] = ()
    thread = _thread(body)
    if thread:
        history = st.conversations.get(thread) or (R.Piece(Layer.MESSAGES, dumps({"conversation": thread}),
                                                            thread.split(":", 1)[0], (), uncertain=True),)
    params = prefix_settings(body)
    head = (provider, model, params)
    if claude or thread:
        talk = last = None
    k = repeat.repeated(last, head, body)
    if last is None or k is None:
        last, k = None, 0
    shared = last.ends[k] if last is not None else 0   # its pieces that are the previous request's
    ends = last.ends[:k] if last is not None else []
    pieces = R.request_pieces(body, history, st.seen, (k, last.pieces[:shared]) if last is not None else None, ends)
    simple = talk is not None and repeat.plain(pieces[shared:])
    if not simple:
        last, shared = None, 0
        # An item sent back by reference (`item_reference`, a bare reasoning id) is the item it names.
        pieces = [q for p in pieces for q in (st.items.get(p.ref, (p,)) if p.ref else (p,))]
        if provider == "openai":
            pieces = earlier_reasoning_dropped(pieces, body)
    enc = R.encoding_for(model)
    seed = xxhash.xxh3_128_digest(f"{provider}\0{canonical_model(model)}".encode() + params)
    chain = last.chain[:shared] + _chain(last.chain[shared - 1], pieces[shared:]) if last is not None and shared \
        else _chain(seed, pieces)
    obs, shown = routers.claude_usage(obs, pieces[-1].path if pieces else "", marks, auto) if claude else (obs, obs)
    made: dict = {}
    sizes = _sizes(st, enc, pieces, chain, shown.prompt_tokens if shown else None, last, shared, made)
    if last is not None:   # the leading blocks of the same pieces at the same sizes: the same blocks
        same = shared if sizes[:shared] == last.sizes[:shared] else \
            next(i for i, (x, y) in enumerate(zip(sizes, last.sizes)) if x != y)
        blocks = last.blocks[:same] + tuple(map(st.block, pieces[same:], sizes[same:]))
    else:
        blocks = tuple(map(st.block, pieces, sizes))
    if simple:
        repeat.kept(st.built, talk, repeat.Built(head, body.get("tools"), body["messages"], ends, pieces, chain,
                                                 made["counts"], made["marks"], sizes, blocks))
    if claude:
        blocks = routers.marked(blocks, marks, obs.input_tokens - shown.input_tokens if obs and shown else 0)
    if shown is not None and chain:
        st.remember(st.anchors, chain[-1], shown.prompt_tokens)
    output = _output(st, enc, ex, provider, shown, pieces, chain, seed)
    retention, mode = _request_params(body)
    if not retention and any(h in ex.uri for h in AZURE_OPENAI_HOSTS):
        retention = "in_memory"   # Azure OpenAI's default (AZ-PC), not OpenAI's 24h
    if "input" in body:
        own = tuple(p for p in pieces if p.layer != Layer.TOOLS and p.path != "instructions")
        after = own + tuple(o for o, _ in output)
        if isinstance(ex.response, dict) and isinstance(ex.response.get("id"), str):
            st.remember(st.conversations, f"previous_response_id:{ex.response['id']}", after)
        conv = _conversation(body)
        if conv:
            st.remember(st.conversations, f"conversation:{conv}", after)
    key = body.get("prompt_cache_key")
    request = Request(model=model, blocks=blocks, layer_params=(params, b"", b""), retention=retention, cache_mode=mode,
                      cache_salt=key if isinstance(key, str) else "",
                      explicit=tuple(i for i, p in enumerate(pieces) if p.mark),
                      output=tuple(o.block(n) for o, n in output), auto_cache="5m" if claude and auto else None)
    return request, obs, provider


def _output(st: SizerMemory, enc: str, ex: Exchange, provider: str, obs: Usage | None, pieces: list[R.Piece],
            chain: list[bytes], seed: bytes) -> list[tuple[R.Piece, int]]:
    """The response's output as blocks with sizes (None without a response). Sized from the usage:
    reasoning items take the reasoning tokens, the rest the other output tokens. An OpenAI Chat
    response whose reasoning stayed hidden is left out: the next request cannot send it back."""
    out = R.output_pieces(ex.response, memo=st.seen)
    if not out:
        return []
    reasoning = _reasoning_tokens(ex.usage)
    chat = not isinstance(ex.response.get("output"), list)   # type: ignore[union-attr]
    if chat and reasoning and not any(p.data.find(b'"reasoning_content"') >= 0 for p in out):
        return []
    rs = [i for i, p in enumerate(out) if p.reasoning]
    counts = [0 if p.reasoning else _count(st, enc, p) for p in out]
    if obs is not None and obs.output_tokens:
        visible = obs.output_tokens - (reasoning if rs else 0)
        rest = [i for i in range(len(out)) if i not in rs]
        if visible >= 0 and rest:
            for i, n in zip(rest, _spread([counts[i] for i in rest], visible, [out[i].uncertain for i in rest])):
                counts[i] = n
        for k, i in enumerate(rs):
            counts[i] = reasoning // len(rs) + (1 if k < reasoning % len(rs) else 0)
    for i in rs:
        st.remember(st.reasoning, out[i].reasoning, counts[i])
    items = ex.response.get("output") if isinstance(ex.response, dict) else None   # type: ignore[union-attr]
    if isinstance(items, list):
        for i, item in enumerate(items):
            own = tuple(p for p in out if p.path == f"output[{i}]" or p.path.startswith(f"output[{i}]."))
            if own and isinstance(item, dict) and isinstance(item.get("id"), str):
                st.remember(st.items, item["id"], own)
    if obs is not None:
        ext = _chain(chain[-1] if chain else seed, out)
        st.remember(st.anchors, ext[-1], obs.prompt_tokens + sum(counts))
    return list(zip(out, counts))


def _time(ex: Exchange, index: int, path: str, line: int, at: float | None = None) -> tuple[float, Any]:
    """The request's time: its stamp (or its response's `created`), else `at` (a cassette's calls
    placed back to back by their durations), else its place in the log times the default spacing."""
    stamp = _stamp_of(ex)
    if stamp is not None:
        return _seconds(stamp, path, line), stamp
    return (at if at is not None else index * DEFAULT_SPACING), stamp


def _stamp_of(ex: Exchange) -> Any:
    if ex.stamp is None and isinstance(ex.response, dict):
        return first_given(ex.response.get("created_at"), ex.response.get("created"))
    return ex.stamp


def line_time(obj: Any) -> float | None:
    """A request line's time as `record` reads it (None: the line has none; its place in the log is
    its time). UserError: the line is no request (`timeorder.LineTime`)."""
    request_id(obj)
    body, resp, usage, stamp = split(obj)
    stamp = _stamp_of(Exchange(body or {}, resp, usage, stamp))
    return None if stamp is None else _seconds(stamp, "", 0)


def record(ex: Exchange, rid: str | None, index: int, path: str, line: int, sizer: Sizer,
           provider: str | None = None, at: float | None = None) -> Record:
    """One exchange as a Record (UserError: its body, usage or timestamp cannot be used); `at`: its
    time when the log records none (a cassette's calls placed back to back)."""
    request, obs, provider = build(ex, sizer, provider)
    t, stamp = _time(ex, index, path, line, at)
    rid, body = rid or generated_id(path, index), ex.body
    stream = request_key(first_given(body.get("prompt_cache_key"), body.get("user")), "prompt_cache_key / user") or "main"
    request, cached = routers.gemini_reference(ex.body, ex.uri, request, provider)   # OpenRouter's Gemini caches
    call = Call(t=t, request=request, stream=stream, label=rid, output_tokens=obs.output_tokens if obs else 0,
                ttft=DEFAULT_TTFT, cached=cached)
    return Record(call, rid, _stamp_text(stamp, t), obs, path, line, provider=provider,
                  **routers.charges(ex.usage, ex.response, ex.uri))   # OpenRouter's charge, cache_discount


def request_id(obj: Any) -> str | None:
    """A log line's request id (None without one); UserError: the line is no OpenAI request."""
    body, resp, _, _ = split(obj)
    if body is None or "model" not in body:
        raise UserError("not an OpenAI request; needs 'model' and 'messages' or 'input'")
    rid = first_given(obj.get("id"), obj.get("request_id"))
    if rid is None and isinstance(obj.get("response"), dict):
        rid = resp.get("id") if resp else None
    return request_key(rid)


def line_record(obj: dict, rid: str | None, index: int, path: str, line: int, sizer: Sizer,
                history: object = None, provider: str | None = None) -> Record:
    """The request of a line `request_id` accepted (UserError: its body, usage or timestamp cannot be
    used). Same shape as the Anthropic reader's; `history` is not used (the reader's state lives
    with the sizer, `state_of`)."""
    body, resp, usage, stamp = split(obj)
    return record(Exchange(body, resp, usage, stamp, str(obj.get("uri") or "")), rid, index, path, line, sizer,
                  provider)


def load_jsonl(path: Path, sizer: Sizer, provider: str | None = None) -> list[Record]:
    """One request per line: a body, or {request|body, response|usage, timestamp}, in file order. A
    line that is no request, or whose body, usage or timestamp cannot be used, is skipped and named."""
    def one(obj, rid, index, p, line, s, history):
        return line_record(obj, rid, index, p, line, s, history, provider)

    return inferred_outputs([rec for _, rec in scan(path, request_id, one, sizer, line_time)])
