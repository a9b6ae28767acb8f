"""`replay --latency`: the latency model fitted per model id to the times real traffic carries
(each request's start and its response's first line: Claude Code transcripts, Codex rollouts), with
what caching saved in wall time; the fitted models as the JSON a scenario's `latency: {from: ...}`
reads. Requests whose source logs no response time are counted, never fitted."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from prefixsim.latency.fit import REPEATED, Fit, Sample, fit_model, wall_time
from prefixsim.latency.model import fitted_document
from prefixsim.providers.tables import canonical_model
from prefixsim.sources.record import Record


@dataclass
class LatencyFits:
    """Every model id's fit, in order of requests, and the requests no fit could use."""

    fits: list[Fit] = field(default_factory=list)
    untimed: int = 0          # requests whose source logs no response time
    unobserved: int = 0       # timed requests without an observed usage (no token counts to fit on)
    saved: dict[str, tuple[float, float]] = field(default_factory=dict)   # model -> (with cache, without), s

    def document(self) -> dict[str, Any]:
        """The fitted models (`--latency-out`): only the fits that were made."""
        return fitted_document({f.model: (f.latency, {"requests": f.used, "residuals_s": f.residuals,
                                                      "held_back": f.held, "mae_held_s": f.mae_held,
                                                      "mae_constant_s": f.mae_constant,
                                                      "generation_s_per_1k_chars": f.generation_s_per_1k,
                                                      "left_out_generation_unknown": f.ungenerated,
                                                      "beats_constant": f.beats_constant})
                                for f in self.fits if f.latency is not None})


def samples(records: Iterable[Record]) -> tuple[dict[str, list[Sample]], int, int]:
    """(model id -> its timed requests in order, requests with no response time, timed ones without usage)."""
    by_model: dict[str, list[Sample]] = {}
    untimed = unobserved = 0
    for r in records:
        if r.audit or not r.timed or r.call.ttft is None:
            untimed += 1
            continue
        u = r.observed
        if u is None:
            unobserved += 1
            continue
        by_model.setdefault(canonical_model(r.call.request.model), []).append(
            Sample(u.input_tokens + u.cache_creation, u.cache_read, float(r.call.ttft), r.generated))
    return by_model, untimed, unobserved


def fit_traffic(records: Iterable[Record]) -> LatencyFits:
    """A fit per model id (most requests first, then by name), and its wall time with and without the cache."""
    by_model, untimed, unobserved = samples(records)
    out = LatencyFits(untimed=untimed, unobserved=unobserved)
    for model in sorted(by_model, key=lambda m: (-len(by_model[m]), m)):
        got = by_model[model]
        fit = fit_model(model, got)
        if fit.latency is not None:
            out.saved[model] = wall_time(fit.latency, [s for s in got if s.ttft > REPEATED])
        out.fits.append(fit)
    return out
