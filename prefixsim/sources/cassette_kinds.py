"""Which readers a recorded cassette is for: the APIs whose HTTP calls, or whose Realtime session
(WebSocket messages), it holds. `sources.detect` names a cassette's format by `kind_of`; a cassette
that records several APIs (a test that talks to Gemini, then OpenAI) is read by each reader `held`
names. Loaded only for a cassette (sources.detect imports it on first use), so it loads every
cassette reader's sniffer up front."""
from __future__ import annotations

from pathlib import Path

from prefixsim.errors import UserError
from prefixsim.sources import bedrock_log, gemini_log, openai_cassette, realtime
from prefixsim.sources.cassette import requests_in
from prefixsim.sources.files import suffix

#: The formats a cassette can hold (the refusal of a cassette none of them reads names them).
CASSETTE_FORMATS = ("anthropic", "openai", "deepseek", "cohere", "gemini", "bedrock", "realtime")


def kind_of(p: Path) -> str:
    """A cassette's format: the first API whose calls it holds (UserError: none, naming where its
    calls go)."""
    if gemini_log.sniff_cassette(p):
        return "gemini"
    if bedrock_log.sniff_cassette(p):
        return "bedrock"
    kind = openai_cassette.sniff_cassette(p)
    if kind:
        return kind
    if realtime.sniff_cassette(p):   # WebSocket messages, not HTTP calls: after every HTTP reader
        return "realtime"
    if not any(True for _ in requests_in(p)):   # no interactions: the reader names why
        return "openai" if suffix(p) == ".json" else "anthropic"
    held = openai_cassette.endpoints(p)
    raise UserError(f"cannot tell the format: no call of a known format ({', '.join(CASSETTE_FORMATS)})"
                    + (f"; its calls go to {', '.join(held)}" if held else "") + "; use --source", str(p))


def held(p: Path) -> set[str]:
    """The formats whose calls a cassette holds, by reader ("openai" for OpenAI's, DeepSeek's and
    Cohere's; "anthropic" for Messages calls)."""
    found = {"gemini": gemini_log.sniff_cassette(p), "bedrock": bedrock_log.sniff_cassette(p),
             "realtime": realtime.sniff_cassette(p)}
    kind = openai_cassette.sniff_cassette(p)
    return {k for k, hit in found.items() if hit} | ({"anthropic" if kind == "anthropic" else "openai"} if kind else set())
