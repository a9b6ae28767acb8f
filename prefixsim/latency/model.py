"""Time to first token of one request from how the cache served it:

    ttft = overhead + a * uncached_tokens + b * cached_tokens

where uncached counts every prompt token the cache did not serve (input at full price and tokens
written to the cache: both are computed) and cached the tokens read from it. One model per model id;
`LatencyBook` finds a request's. Queueing, batching, the network and thinking are not in it
(docs/rules.md#latency)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from prefixsim.errors import UserError
from prefixsim.model import Usage

#: Coefficients are per 1,000 tokens: a fit's figures read as seconds without exponents.
PER = 1000
#: The fitted-model file's format marker and version (`latency: {from: fitted.json}`).
FORMAT = "prefixsim-latency"
VERSION = 1


#: The model's coefficients, as its fields, `latency:` keys and a fitted file's keys name them.
COEFFICIENTS = ("overhead_s", "uncached_s_per_1k", "cached_s_per_1k")


@dataclass(frozen=True, slots=True)
class LatencyModel:
    """Seconds to the first token: `overhead_s`, plus seconds per 1,000 uncached and cached tokens."""

    overhead_s: float
    uncached_s_per_1k: float
    cached_s_per_1k: float
    source: str = ""

    def ttft(self, uncached: int | float, cached: int | float) -> float:
        return self.overhead_s + (self.uncached_s_per_1k * uncached + self.cached_s_per_1k * cached) / PER

    def of(self, u: Usage) -> float:
        """A request's time to first token as its usage says the cache served it."""
        return self.ttft(u.input_tokens + u.cache_creation, u.cache_read)

    def without_cache(self, u: Usage) -> float:
        """The same request with nothing read from the cache (every prompt token computed)."""
        return self.ttft(u.prompt_tokens, 0)

    def coefficients(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in COEFFICIENTS}

    def line(self) -> str:
        return (f"{self.overhead_s:.3g} s + {self.uncached_s_per_1k:.3g} s/1K uncached + "
                f"{self.cached_s_per_1k:.3g} s/1K cached")


@dataclass(frozen=True)
class LatencyBook:
    """The model of each model id: `models` (canonical ids) first, else `fallback(model)` (the
    family's default), with `override` (coefficients a scenario sets inline) on top of either."""

    models: dict[str, LatencyModel] = field(default_factory=dict)
    fallback: Callable[[str], LatencyModel] | None = None
    override: dict[str, float] = field(default_factory=dict)
    override_source: str = ""
    canonical: Callable[[str], str] = str

    def for_model(self, model: str) -> LatencyModel:
        base = self.models.get(self.canonical(model))
        if base is None:
            if self.fallback is None:
                known = ", ".join(sorted(self.models)) or "none"
                raise UserError(f"latency: no model fitted for {model} (the file fits: {known})")
            base = self.fallback(model)
        if not self.override:
            return base
        values = {**base.coefficients(), **self.override}
        return LatencyModel(**values, source=f"{self.override_source}; the rest: {base.source}"
                            if len(self.override) < len(COEFFICIENTS) else self.override_source)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between the closest ranks (numpy's
    default): the p50 of [1, 2, 3, 4] is 2.5, its p95 3.85."""
    if not values:
        return math.nan
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def fitted_document(models: dict[str, tuple[LatencyModel, dict[str, Any]]]) -> dict[str, Any]:
    """The JSON a fit writes (`replay --latency-out`): each model id's coefficients, source and figures."""
    return {"format": FORMAT, "version": VERSION,
            "models": {m: {**lm.coefficients(), "source": lm.source, **facts} for m, (lm, facts) in sorted(models.items())}}


def read_fitted(doc: Any, name: str) -> dict[str, LatencyModel]:
    """The models of a fitted-model document; a document of another shape is refused by name."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UserError(f"{name}: not a fitted latency model (write one with prefixsim replay --latency-out)")
    if doc.get("version") != VERSION:
        raise UserError(f"{name}: fitted latency model version {doc.get('version')!r}; this prefixsim reads {VERSION}")
    models = doc.get("models")
    if not isinstance(models, dict) or not models:
        raise UserError(f"{name}: 'models' holds no fitted model")
    out = {}
    for m, row in models.items():
        if not isinstance(row, dict):
            raise UserError(f"{name}: models.{m} is not a mapping of coefficients")
        values = {}
        for k in COEFFICIENTS:
            v = row.get(k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 3600:
                raise UserError(f"{name}: models.{m}.{k} must be a number of seconds from 0 to 3600, not {v!r}")
            values[k] = float(v)
        out[m] = LatencyModel(**values, source=str(row.get("source") or f"fitted, {name}"))
    return out
