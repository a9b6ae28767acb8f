"""A cassette recorded on a cache an earlier run of the same test left (docs/rules.md#an-earlier-run-of-a-recording).

A test suite's cassettes are (re-)recorded by running the tests against the live API, and a developer
runs a test more than once: its first request then reads what the previous run wrote a minute
before. That run is not in the file, but part of what it sent is known: the requests the test alone
decides, those that carry no model-written turn (a request after a reply depends on what the model
said, its text and the tools it called, which differ from run to run). When the first request of a
recording read cached tokens, its records carry that earlier run (`Record.earlier`), which the
replay steps into the cache before the recording's first request and reports nowhere else: the
observation proves a warm cache, and an earlier run of the same test is the writer the recording
itself names.

Only recordings of test suites (HTTP cassettes): a harness session (Claude Code, Codex) that starts
warm read an earlier, different session's prefix, which no file shows (replay/outside.py).
"""
from __future__ import annotations

from dataclasses import replace

from prefixsim.model import Call, Request
from prefixsim.sources.record import Record

#: How long before the recording's first request the earlier run ended: a developer re-running a
#: test, well inside every provider's shortest retention (5 minutes).
GAP_SECONDS = 60.0

#: How a model-written turn's first block begins, as the wire renderers frame it (wire/anthropic.py,
#: wire/openai.py, wire/bedrock.py: "assistant"; wire/gemini.py: "model").
_MODEL_TURN = (b'{"role":"assistant"', b'{"role":"model"')

#: The stream the earlier run's calls are stepped on: their own, so that the recording's first
#: request parts from nothing of its stream (its cause is told from the cache, not from a previous call).
SUFFIX = "|earlier run"


def warmed(records: list[Record]) -> list[Record]:
    """`records` of one recording, the first carrying the earlier run when its observed read proves
    one (else unchanged)."""
    scored = [r for r in records if r.observed is not None and not r.audit]
    if not scored:
        return records
    first = min(scored, key=lambda r: r.call.t)
    if first.observed is None or first.observed.cache_read == 0:
        return records
    calls = [r.call for r in records if not r.audit and r.call.cached is None]
    if not calls:
        return records
    shift = max(c.t for c in calls) - first.call.t + GAP_SECONDS
    earlier = tuple(_earlier(c, shift) for c in sorted(calls, key=lambda c: c.t) if fixed_by_the_test(c.request))
    if not earlier:
        return records
    return [replace(r, earlier=earlier) if r is first else r for r in records]


def _earlier(call: Call, shift: float) -> Call:
    return replace(call, t=call.t - shift, request=replace(call.request, output=()), stream=call.stream + SUFFIX,
                   parent=None, event=None, label=f"{call.label} (earlier run)".strip())


def fixed_by_the_test(req: Request) -> bool:
    """Whether `req` carries no model-written turn: what the test alone decides, so its earlier run
    sent it too. A request after a reply depends on what the model said (its text, the tools it
    called, which tools the harness then loads), which differs from run to run."""
    return bool(req.blocks) and not any(b.data.startswith(_MODEL_TURN) for b in req.blocks)
