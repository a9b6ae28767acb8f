"""OpenAI Realtime API sessions recorded over WebSocket -> audited Records, one per `response.done`
that reports usage.

pydantic-ai records them as cassettes whose `interactions:` are WebSocket messages,
`{kind: message, direction: sent | received, data: <event>}` (OpenAI's endpoint, Azure OpenAI's
realtime and voice-live endpoints, a gateway in front of them). A realtime prompt is the session's
instructions and tools and a server-side conversation of items that are often audio (appended in
chunks, truncated by the server, transcribed or not): the cassette does not hold the prompt as the
model saw it, so nothing is rendered and simulated. Each response's usage is exact, so each is an
audit row (`Record.audit`): priced as observed, its cause told from its session's usage.

Prices: genai-prices prices realtime audio (and image) tokens apart from text (gpt-realtime: audio
input $32 / MTok, text $4), and prefixsim's token classes are text's. A response whose usage does
not show every token to be text gets no cost (`Record.unpriced` says why), never a made-up one.
docs/rules.md#openai-realtime-api
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.model import Usage
from prefixsim.sources import problems
from prefixsim.sources.cassette import interactions, load_document
from prefixsim.sources.genai import Seen, audited, model_name
from prefixsim.sources.record import Record, checked_usage, request_key, token_count

#: Seconds between consecutive responses: the cassettes keep their order, not their times.
SPACING = 1.0
NO_TIMES_NOTE = "no times recorded: responses placed in recorded order, 1 s apart"
#: The Realtime API's event families (client and server events), by the start of their `type`.
_FAMILIES = ("session.", "conversation.", "response.", "input_audio_buffer.", "output_audio_buffer.",
             "rate_limits.", "transcription_session.")


def event_of(inter: Any) -> dict | None:
    """The Realtime event a recorded WebSocket message carries; None for anything else (an HTTP
    interaction, a message of another protocol)."""
    if not isinstance(inter, dict) or "request" in inter or inter.get("kind", "message") != "message":
        return None
    data = inter.get("data")
    if inter.get("direction") not in ("sent", "received") or not isinstance(data, dict):
        return None
    kind = data.get("type")
    return data if isinstance(kind, str) and kind.startswith(_FAMILIES) else None


def sniff_cassette(path: Path) -> bool:
    """Whether a cassette records a Realtime session (False when it does not parse: its reader names why)."""
    try:
        return any(event_of(x) is not None for x in interactions(load_document(path), path))
    except problems.LINE_ERRORS:
        return False


@dataclass
class _Session:
    """The latest session event's model and id (session.created / .updated; a sent session.update
    naming a model counts until the server's answer)."""

    model: str | None = None
    sid: str | None = None

    def update(self, event: dict) -> None:
        s = event.get("session")
        if not isinstance(s, dict):
            raise UserError(f"{event['type']} carries no session object")
        if isinstance(s.get("model"), str) and s["model"].strip():
            self.model = s["model"]
        sid = request_key(s.get("id"), "session id")
        if sid is not None:
            self.sid = sid


def usage_of(usage: Any) -> tuple[Usage, str]:
    """A response's usage in prefixsim's classes (its input counts the cached tokens, as OpenAI's
    does), and "" when every token is text, else what the token classes cannot price."""
    if not isinstance(usage, dict):
        raise UserError(f"response.usage is not an object: {shown(usage)}")
    total = token_count(usage.get("input_tokens"), "input_tokens")
    out = token_count(usage.get("output_tokens"), "output_tokens")
    inp, outd = _details(usage, "input_token_details"), _details(usage, "output_token_details")
    cached = token_count(inp.get("cached_tokens"), "input_token_details.cached_tokens")
    if cached > total:
        raise UserError(f"cached_tokens {cached:,} exceed input_tokens {total:,}")
    cdet = _details(inp, "cached_tokens_details")
    counts = {f"{where}.{k}": token_count(d.get(k), f"{where}.{k}") for where, d in
              (("input_token_details", inp), ("output_token_details", outd), ("cached_tokens_details", cdet))
              for k in ("text_tokens", "audio_tokens", "image_tokens") if k in d}
    kinds = [k for k in ("audio", "image") if any(n for name, n in counts.items() if name.endswith(f".{k}_tokens"))]
    text_only = counts.get("input_token_details.text_tokens", 0) == total \
        and counts.get("output_token_details.text_tokens", 0) == out
    why = "" if text_only and not kinds else f"{' and '.join(kinds)} tokens" if kinds else "tokens not shown to be text"
    return checked_usage(Usage(input_tokens=total - cached, cache_read=cached, output_tokens=out)), why


def _details(obj: dict, key: str) -> dict:
    v = obj.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise UserError(f"usage field {key} is not an object: {shown(v)}")
    return v


def load_cassette(path: Path) -> list[Record]:
    """Each `response.done` the server sent with usage, as an audited Record in recorded order, on
    the stream of its session; a response.done that cannot be used is skipped and named."""
    inters = interactions(load_document(path), path)
    where = str(path)
    session = _Session()
    out: list[Record] = []
    ids: dict[str, int] = {}
    no_usage = 0

    def one(resp: Any, i: int) -> Record:
        if not isinstance(resp, dict):
            raise UserError("response.done carries no response object")
        usage, why = usage_of(resp["usage"])
        rid = request_key(resp.get("id"), "response id") or f"{where}#{i}"
        if rid in ids:
            raise UserError(f"duplicate response id {rid!r} (first at interaction {ids[rid]})")
        model = resp.get("model") if isinstance(resp.get("model"), str) and resp["model"].strip() else session.model
        if model is None:
            raise UserError("no session.created or session.updated before it names the model")
        stream = session.sid or request_key(resp.get("conversation_id"), "conversation id") or "main"
        t = len(out) * SPACING
        # Azure's realtime and voice-live endpoints serve OpenAI's models: OpenAI's rules and prices
        rec = audited(Seen(rid, stream, model, "openai", t, usage), "openai", model_name(model), where, 0)
        ids[rid] = i
        return replace(rec, timestamp=f"+{t:g}s", unpriced=why)

    events = 0
    for i, inter in enumerate(inters):
        event = event_of(inter)
        if event is None:
            continue
        events += 1
        kind = event["type"]
        if kind in ("session.created", "session.updated", "session.update"):
            problems.guarded(where, None, session.update, event, where=f"interaction {i}")
        elif kind == "response.done" and inter["direction"] == "received":
            resp = event.get("response")
            if isinstance(resp, dict) and resp.get("usage") is None:   # no usage reported: nothing to audit
                no_usage += 1
                continue
            rec = problems.guarded(where, None, one, resp, i, where=f"interaction {i}")
            if rec is not None:
                out.append(rec)
    if not events:   # --source realtime on a cassette of HTTP calls only
        raise UserError("no Realtime API event in the cassette (WebSocket messages `{kind: message, direction, "
                        "data: {type: ...}}`)", where)
    if no_usage:
        problems.note(where, None, f"{no_usage} response.done event{'s' if no_usage > 1 else ''} without usage "
                                   "(nothing to audit)")
    if out:
        problems.note(where, None, NO_TIMES_NOTE)
    return out
