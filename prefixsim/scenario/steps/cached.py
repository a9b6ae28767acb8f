"""Gemini explicit context caching steps: create, update (TTL) and delete a CachedContent
(G-CC, docs/rules.md#gemini-explicit-context-caching). The cache's life is kept on the timeline
(`Timeline.caches`); `Timeline.send` makes a request that starts with a live cache reference it, and
`Timeline.play` writes each creation's final kept time once the timeline is over."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prefixsim.errors import UserError
from prefixsim.providers.gemini_explicit import CachedContent
from prefixsim.scenario.state import Conv
from prefixsim.scenario.steps.registry import step

if TYPE_CHECKING:
    from prefixsim.scenario.builder import Timeline


@step("create_cache")
def create_cache(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    provider = tl.s.provider or "anthropic"
    if provider != "gemini":
        raise UserError(f"timeline step {k + 1} (create_cache): explicit context caching is Gemini's; "
                        f"the provider is {provider!r}, not 'gemini'")
    old = tl.caches.get(spec.name)
    if old is not None and old.life.alive(tl.t):
        raise UserError(f"timeline step {k + 1} (create_cache): {spec.name!r} already exists until "
                        f"t={old.life.end:g} s; delete it first or use another name")
    n = len(conv.messages) if spec.messages is None else spec.messages
    if n > len(conv.messages):
        raise UserError(f"timeline step {k + 1} (create_cache): messages: {n}, but the conversation "
                        f"has {len(conv.messages)}")
    held = conv.fork()
    held.messages = held.messages[:n]
    held.marks = set()
    tl.create_cached(held, spec.name, CachedContent.create(spec.name, tl.t, spec.ttl),
                     spec.label or f"create {spec.name}")
    return conv


def _live(tl: Timeline, spec, k: int, kind: str):
    c = tl.caches.get(spec.name)
    if c is None:
        raise UserError(f"timeline step {k + 1} ({kind}): no cache named {spec.name!r} "
                        f"(created: {', '.join(tl.caches) or 'none'})")
    if not c.life.alive(tl.t):
        raise UserError(f"timeline step {k + 1} ({kind}): {spec.name!r} is gone at t={tl.t:g} s "
                        f"(it ended at t={c.life.end:g} s)")
    return c


@step("update_cache")
def update_cache(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    _live(tl, spec, k, "update_cache").life.update_ttl(tl.t, spec.ttl)
    return conv


@step("delete_cache")
def delete_cache(tl: Timeline, conv: Conv, spec, k: int) -> Conv:
    _live(tl, spec, k, "delete_cache").life.delete(tl.t)
    return conv
