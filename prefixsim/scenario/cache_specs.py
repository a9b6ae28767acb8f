"""The Gemini explicit-cache steps' specs (create_cache, update_cache, delete_cache); their
functions are in steps/cached.py."""
from __future__ import annotations

from pydantic import Field

from prefixsim.scenario.fields import Count, Duration, StepBase


class CreateCacheSpec(StepBase):
    """Gemini explicit caching: create a CachedContent holding the conversation's tools, system
    instruction and first `messages` messages (all so far by default). Creating it is billed as input
    tokens; it is kept, and its storage billed per MTok-hour, until deleted or `ttl` after the last
    create or update. While it lives, requests that start with it read it at the cached rate."""

    name: str = "cache"
    messages: Count | None = Field(None, description="Messages of the conversation it holds (default: all so far).")
    ttl: Duration = Field(3600.0, description="Time to live (default 1 h, G-CC).")


class UpdateCacheSpec(StepBase):
    """Set a live CachedContent's TTL: it now expires `ttl` after this step."""

    name: str = "cache"
    ttl: Duration = 3600.0


class DeleteCacheSpec(StepBase):
    """Delete a live CachedContent: its storage stops here."""

    name: str = "cache"
