"""OpenAI and DeepSeek calls in recorded HTTP cassettes (VCR and its relatives): which interactions
are Chat Completions or Responses calls, and their records in order."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefixsim.errors import UserError
from prefixsim.sources import problems, routers
from prefixsim.sources.anthropic_log import Sizer
from prefixsim.sources.cassette import back_to_back, note_back_to_back, interactions, load_document, request_of, requests_in
from prefixsim.sources.cloud import cloud_model
from prefixsim.sources.openai_log import Exchange, looks_openai, record
from prefixsim.sources.openai_replies import inferred_outputs
from prefixsim.sources.record import Record
from prefixsim.sources.scan import LineChecks

#: Endpoints whose calls are replayed; others in a cassette (embeddings, model lists, files) are passed over.
#: Cohere's v2 Chat is read as Chat Completions (`routers.from_cohere`).
_ENDPOINTS = ("/chat/completions", "/responses", "/v2/chat")


def is_call(body: Any, uri: str, method: str) -> bool:
    """An interaction that is a Chat Completions or Responses call (by its path, or by its body when
    the cassette keeps no uri)."""
    if method and method != "POST":
        return False
    path = uri.split("?", 1)[0].split("#", 1)[0]   # pydantic-ai tags streamed calls `#stream`
    if path:
        return path.rstrip("/").endswith(_ENDPOINTS)
    return isinstance(body, dict) and "model" in body and ("messages" in body or "input" in body) \
        and (looks_openai({"request": body}))


def load_cassette(path: Path, sizer: Sizer, provider: str | None = None) -> list[Record]:
    """A VCR cassette's Chat Completions / Responses calls (other endpoints are passed over). An
    interaction that cannot be used is skipped and named."""
    doc = load_document(path)
    inters = interactions(doc, path)
    offsets = back_to_back(inters)
    checks = LineChecks(path)
    out: list[Record] = []
    where = str(path)

    def one(inter: Any, i: int) -> Record | None:
        body, resp, uri, method = request_of(inter)
        if not is_call(body, uri, method):
            return None
        if not isinstance(body, dict):
            raise UserError("request body is not a JSON object")
        usage = resp.get("usage") if isinstance(resp, dict) and isinstance(resp.get("usage"), dict) else None
        return record(Exchange(body, resp, usage, None, uri), f"{path}#{i}", len(out), where, 0, sizer, provider,
                      at=offsets[i] if offsets is not None else None)

    for i, inter in enumerate(inters):
        rec = problems.guarded(where, None, one, inter, i, where=f"interaction {i}")
        if rec is not None:   # an interaction has no line number: the notes name the file only
            checks.time(rec.call.t, 0)
            checks.usage(rec.observed, 0)
            out.append(rec)
    checks.finish()
    note_back_to_back(where, offsets, out)
    return inferred_outputs(out)


def sniff_cassette(path: Path) -> str | None:
    """'openai' when a cassette holds Chat Completions or Responses calls (of any OpenAI-compatible
    host), 'cohere' for Cohere's v2 Chat, 'anthropic' when it holds Messages calls (the Claude API's,
    Bedrock InvokeModel's or Vertex rawPredict's), None when it holds none of them (or does not parse:
    its reader names why)."""
    for body, uri, method in requests_in(path):
        if is_call(body, uri, method):
            return "cohere" if routers.host_provider(uri) == "cohere" or uri.split("?")[0].endswith("/v2/chat") \
                else "openai"
        if "/v1/messages" in uri or cloud_model(uri) or (isinstance(body, dict) and (
                "anthropic_version" in body or ("messages" in body and not uri))):
            return "anthropic"
    return None


def endpoints(path: Path, most: int = 3) -> list[str]:
    """The distinct endpoints (URI without query) a cassette's calls went to, the first `most`."""
    seen: list[str] = []
    for _, uri, _ in requests_in(path):
        u = uri.split("?", 1)[0]
        if u and u not in seen:
            seen.append(u)
    return seen[:most]
