"""The latency model fitted to measured requests: a robust least-squares fit (Huber weights by
iteratively reweighted least squares) of ttft = overhead + a*uncached + b*cached, checked on
held-back requests against a constant predictor. A fit that the measurements cannot carry (too few
requests, one prompt size throughout, repeated stamps) is refused with the reason instead."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from prefixsim.latency.model import PER, LatencyModel, percentile

#: Fewer requests than this leave too little for three coefficients and a held-back fifth.
MIN_REQUESTS = 10
#: Every HOLD-th request (the 5th, 10th, ...) is held back from the check's fit: deterministic.
HOLD = 5
#: Huber's tuning constant: 95 % efficiency under normal errors, bounded pull from the outliers a
#: transcript's stamps have (a tool that ran long before its result's line was written).
HUBER_K = 1.345
#: A measured time to first token at or below this is two equal stamps, not a measurement.
REPEATED = 0.001
NAMES = ("overhead_s", "uncached_s_per_1k", "cached_s_per_1k")


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured request: tokens the cache did not serve, tokens it served, seconds to first token."""

    uncached: int
    cached: int
    ttft: float


@dataclass
class Fit:
    """One model id's fit, or why there is none (`refused`)."""

    model: str
    n: int                                   # requests measured
    repeated: int = 0                        # of them, with equal start and response stamps (left out)
    latency: LatencyModel | None = None      # the fit on every usable request
    residuals: dict[str, float] = field(default_factory=dict)   # p5, p50, p95 of measured - fitted, s
    held: int = 0                            # requests held back for the check
    mae_held: float | None = None            # median absolute error on them, of the fit on the rest
    mae_constant: float | None = None        # ... of the rest's median time (a constant predictor)
    dropped: tuple[str, ...] = ()            # coefficients fixed at 0 (a negative fit, or no variation)
    refused: str = ""

    @property
    def used(self) -> int:
        return self.n - self.repeated


def _design(samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[1.0, s.uncached / PER, s.cached / PER] for s in samples])
    return x, np.array([s.ttft for s in samples])


def _solve(x: np.ndarray, y: np.ndarray, keep: list[int]) -> np.ndarray:
    """Huber IRLS on columns `keep`; the coefficients of the other columns are 0."""
    a = x[:, keep]
    w = np.ones(len(y))
    beta = np.linalg.lstsq(a, y, rcond=None)[0]
    for _ in range(100):
        r = y - a @ beta
        scale = 1.4826 * float(np.median(np.abs(r - np.median(r))))
        if scale <= 1e-12:
            break
        cut = HUBER_K * scale
        w = np.where(np.abs(r) <= cut, 1.0, cut / np.maximum(np.abs(r), 1e-300))
        sw = np.sqrt(w)
        new = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)[0]
        if np.allclose(new, beta, rtol=1e-10, atol=1e-12):
            beta = new
            break
        beta = new
    out = np.zeros(x.shape[1])
    out[keep] = beta
    return out


def robust_fit(samples: Sequence[Sample]) -> tuple[np.ndarray, tuple[str, ...]]:
    """(overhead, a, b) with none negative, and the coefficients fixed at 0: a column with no
    variation (no request read from the cache) is left out, and a coefficient the fit makes negative
    is fixed at 0 and the rest fitted again (time cannot fall as tokens grow)."""
    x, y = _design(samples)
    keep = [0] + [j for j in (1, 2) if np.ptp(x[:, j]) > 0]
    while True:
        beta = _solve(x, y, keep)
        negative = [j for j in keep if beta[j] < 0]
        if not negative or len(keep) == 1:
            return np.maximum(beta, 0.0), tuple(NAMES[j] for j in range(3) if j not in keep)
        keep.remove(min(negative, key=lambda j: beta[j]))


def _mae(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.median(np.abs(pred - y)))


def fit_model(model: str, samples: Sequence[Sample], source: str = "") -> Fit:
    """Fit one model id's requests (in the order they were sent); the check fits all but every
    HOLD-th request and measures the median absolute error on those held back."""
    usable = [s for s in samples if s.ttft > REPEATED]
    fit = Fit(model, len(samples), repeated=len(samples) - len(usable))
    if fit.repeated * 2 > len(samples):
        fit.refused = (f"{fit.repeated} of {len(samples)} requests have equal start and response stamps: "
                       "the log does not time them")
        return fit
    if len(usable) < MIN_REQUESTS:
        fit.refused = f"{len(usable)} timed requests; a fit needs at least {MIN_REQUESTS}"
        return fit
    if len({s.ttft for s in usable}) == 1:
        fit.refused = "every request took the same time: repeated stamps, not a measurement"
        return fit
    beta, dropped = robust_fit(usable)
    x, y = _design(usable)
    r = y - x @ beta
    fit.latency = LatencyModel(*(round(float(b), 6) for b in beta),
                               source=source or f"fitted to {len(usable)} requests of {model}")
    fit.dropped = dropped
    fit.residuals = {f"p{q}": round(percentile(list(r), q), 4) for q in (5, 50, 95)}
    train = [s for i, s in enumerate(usable) if i % HOLD != HOLD - 1]
    held = [s for i, s in enumerate(usable) if i % HOLD == HOLD - 1]
    tb, _ = robust_fit(train)
    hx, hy = _design(held)
    fit.held = len(held)
    fit.mae_held = round(_mae(hx @ tb, hy), 4)
    fit.mae_constant = round(_mae(np.full(len(hy), float(np.median([s.ttft for s in train]))), hy), 4)
    return fit


def wall_time(latency: LatencyModel, samples: Sequence[Sample]) -> tuple[float, float]:
    """(seconds to first token with the cache as it served, the same requests with nothing read)."""
    with_cache = sum(latency.ttft(s.uncached, s.cached) for s in samples)
    without = sum(latency.ttft(s.uncached + s.cached, 0) for s in samples)
    return with_cache, without
