"""A scenario's `latency:` section: the latency model's coefficients inline, or a fitted model
written by `prefixsim replay --latency-out` (`latency: {from: fitted.json}`), or both (inline wins,
key by key); unset, each model's family default (prefixsim/latency/defaults.py). Kept out of
schema.py, which holds the rest of the format; scenario/latency_book.py turns it into models."""
from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

from prefixsim.scenario.fields import Strict

Seconds = Annotated[float, Field(ge=0, le=3600)]


class LatencySpec(Strict):
    """Time to first token = overhead_s + uncached_s_per_1k x uncached/1000 + cached_s_per_1k x
    cached/1000, per request (uncached: input and cache writes; cached: cache reads)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, populate_by_name=True)

    from_: str | None = Field(None, alias="from", description="A fitted model (JSON) written by `prefixsim replay "
                              "--latency-out`, relative to the scenario file; a model it does not fit is refused.")
    overhead_s: Seconds | None = Field(None, description="Seconds before the first token that do not grow with the "
                                                         "prompt (default: the model family's, docs/rules.md#latency).")
    uncached_s_per_1k: Seconds | None = Field(None, description="Seconds per 1,000 prompt tokens the cache did not "
                                                                "serve (input and cache writes).")
    cached_s_per_1k: Seconds | None = Field(None, description="Seconds per 1,000 prompt tokens read from the cache.")
