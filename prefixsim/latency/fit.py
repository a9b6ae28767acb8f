"""The latency model fitted to measured requests: a robust fit of ttft = overhead + a*uncached +
b*cached, plus g*generated (characters) where the measured time ends at a line written once a content block was
complete (a Claude Code transcript writes a response's first line after its first block is generated,
so that block's decoding sits in the measured time and is taken out of the time to first token),
least absolute deviations by iteratively reweighted least squares (the median's
regression: a transcript's times have a long right tail, thinking and tool time, that would pull a
least-squares fit), checked on held-back requests against a constant predictor, their median. A fit that the measurements cannot carry (too few
requests, one prompt size throughout, repeated stamps) is refused with the reason instead."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from prefixsim.latency.model import PER, LatencyModel, percentile

#: Fewer requests than this leave too little for three coefficients and a held-back fifth.
MIN_REQUESTS = 10
#: The check's folds: request i is held back with every HOLD-th after it (i mod HOLD), deterministic.
HOLD = 5
#: Residuals below this (seconds) weigh as this in the reweighting (1/|r| would be infinite at 0).
FLOOR = 1e-7
#: A measured time to first token at or below this is two equal stamps, not a measurement.
REPEATED = 0.001
LABELS = ("overhead", "uncached", "cached", "generated")


@dataclass(frozen=True, slots=True)
class Sample:
    """One measured request: tokens the cache did not serve, tokens it served, seconds from its start to
    the line that times its response, and the output characters generated before that line was written (0:
    the time ends at the first token; None: the source does not show them, e.g. a thinking block whose
    text the transcript leaves empty)."""

    uncached: int
    cached: int
    ttft: float
    generated: int | None = 0


@dataclass
class Fit:
    """One model id's fit, or why there is none (`refused`)."""

    model: str
    n: int                                   # requests measured
    repeated: int = 0                        # of them, with equal start and response stamps (left out)
    ungenerated: int = 0                     # of them, whose generation before the timed line is unknown (left out)
    generation_s_per_1k: float = 0.0         # seconds per 1,000 characters generated before the timed line (not TTFT)
    latency: LatencyModel | None = None      # the fit on every usable request
    residuals: dict[str, float] = field(default_factory=dict)   # p5, p50, p95 of measured - fitted, s
    held: int = 0                            # requests held back for the check
    mae_held: float | None = None            # median absolute error on them, of the fit on the rest
    mae_constant: float | None = None        # ... of the rest's median time (a constant predictor)
    constant: float | None = None            # that median, s
    notes: tuple[str, ...] = ()              # constraints the fit took (robust_fit)
    refused: str = ""

    @property
    def used(self) -> int:
        return self.n - self.repeated - self.ungenerated

    @property
    def beats_constant(self) -> bool:
        return self.mae_held is not None and self.mae_constant is not None and self.mae_held < self.mae_constant


def _design(samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[1.0, s.uncached / PER, s.cached / PER, (s.generated or 0) / PER] for s in samples])
    return x, np.array([s.ttft for s in samples])


def _solve(x: np.ndarray, y: np.ndarray, keep: list[int]) -> np.ndarray:
    """Least absolute deviations on columns `keep` (weights 1/|residual|, from the least-squares
    start); the coefficients of the other columns are 0."""
    a = x[:, keep]
    beta = np.linalg.lstsq(a, y, rcond=None)[0]
    for _ in range(1000):
        sw = np.sqrt(1.0 / np.maximum(np.abs(y - a @ beta), FLOOR))
        new = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)[0]
        done = np.allclose(new, beta, rtol=0, atol=1e-12)
        beta = new
        if done:
            break
    out = np.zeros(x.shape[1])
    out[keep] = beta
    return out


def robust_fit(samples: Sequence[Sample]) -> tuple[np.ndarray, tuple[str, ...]]:
    """(overhead, a, b, g) and what was constrained. A column with no variation (no request read from
    the cache, nothing generated before the timed line) is left out and a coefficient the fit makes
    negative is fixed at 0, the rest fitted again (time cannot fall as tokens grow); a b above a is tied
    to it, one coefficient for every prompt token (a read cannot take longer than computing the token)."""
    x, y = _design(samples)
    keep = [0] + [j for j in (1, 2, 3) if np.ptp(x[:, j]) > 0]
    while True:
        beta = _solve(x, y, keep)
        negative = [j for j in keep if beta[j] < 0]
        if not negative or len(keep) == 1:
            break
        keep.remove(min(negative, key=lambda j: beta[j]))
    notes = tuple(f"{LABELS[j]} fixed at 0, negative or not varied" for j in (1, 2) if j not in keep)
    if beta[2] > beta[1]:
        tied = np.column_stack([x[:, 0], x[:, 1] + x[:, 2], x[:, 3]])
        both = _solve(tied, y, [0] + [j for j in (1, 2) if np.ptp(tied[:, j]) > 0 and (j == 1 or 3 in keep)])
        beta = np.array([both[0], max(both[1], 0.0), max(both[1], 0.0), max(both[2], 0.0)])
        notes = ("cached tied to uncached, the fit read slower than computing",)
    return np.maximum(beta, 0.0), notes


def _mae(pred: np.ndarray, y: np.ndarray) -> float:
    return float(np.median(np.abs(pred - y)))


def fit_model(model: str, samples: Sequence[Sample]) -> Fit:
    """Fit one model id's requests (in the order they were sent); the check fits all but every
    HOLD-th request and measures the median absolute error on those held back."""
    usable = [s for s in samples if s.ttft > REPEATED]
    fit = Fit(model, len(samples), repeated=len(samples) - len(usable))
    if fit.repeated * 2 > len(samples):
        fit.refused = (f"{fit.repeated} of {len(samples)} requests have equal start and response stamps: "
                       "the log does not time them")
        return fit
    known = [s for s in usable if s.generated is not None]
    if known and len(known) < len(usable):
        # a request whose generation before the timed line is unknown would put its decoding into the
        # time to first token: left out while others show theirs
        fit.ungenerated = len(usable) - len(known)
        usable = known
    if len(usable) < MIN_REQUESTS:
        fit.refused = f"{len(usable)} timed requests; a fit needs at least {MIN_REQUESTS}"
        return fit
    if len({s.ttft for s in usable}) == 1:
        fit.refused = "every request took the same time: repeated stamps, not a measurement"
        return fit
    beta, notes = robust_fit(usable)
    x, y = _design(usable)
    r = y - x @ beta
    fit.generation_s_per_1k = round(float(beta[3]), 6)
    overhead, a, b = (round(float(v), 6) for v in beta[:3])
    fit.latency = LatencyModel(overhead, a, b,
                               source=f"fitted by prefixsim replay --latency to {len(usable)} requests of {model}")
    fit.notes = notes
    fit.residuals = {f"p{q}": round(float(percentile([float(v) for v in r], q)), 4) for q in (5, 50, 95)}
    # Each request is held back once (fold k: the k-th, (k+HOLD)-th, ... request) and predicted by the
    # fit on the others, and by their median: a check on a few held-back requests decides nothing
    fitted: list[float] = []
    constant: list[float] = []
    measured: list[float] = []
    for k in range(HOLD):
        train = [s for i, s in enumerate(usable) if i % HOLD != k]
        held = [s for i, s in enumerate(usable) if i % HOLD == k]
        if not held:
            continue
        tb, _ = robust_fit(train)
        hx, hy = _design(held)
        fitted.extend(hx @ tb)
        constant.extend([float(np.median([s.ttft for s in train]))] * len(held))
        measured.extend(hy)
    y_held = np.array(measured)
    fit.held = len(measured)
    fit.mae_held = round(_mae(np.array(fitted), y_held), 4)
    fit.constant = float(np.median(y))
    fit.mae_constant = round(_mae(np.array(constant), y_held), 4)
    return fit


def wall_time(latency: LatencyModel, samples: Sequence[Sample]) -> tuple[float, float]:
    """(seconds to first token with the cache as it served, the same requests with nothing read)."""
    with_cache = sum(latency.ttft(s.uncached, s.cached) for s in samples)
    without = sum(latency.ttft(s.uncached + s.cached, 0) for s in samples)
    return with_cache, without
