"""Parallel children: launched together vs staggered. N siblings share a prefix S (sub-agents of one
type, or fork children of a cold parent) and each adds its own task T. Child i starts at i·δ; an
entry is readable from τ (time to first token) after the first child starts (A-PC), so child i reads
S iff i·δ ≥ τ. With W = #{i : i·δ < τ} writers:

    cost(δ) = W·w·(S + T) + (N − W)·(r·S + w·T),     extra latency of the last child = (N − 1)·δ

Claude Code instead holds all siblings until the first response begins (CC-WF): one writer, latency τ.
"""
from __future__ import annotations

from decimal import Decimal

from prefixsim.analysis.common import Prices, request_cost
from prefixsim.scenario.studyparams import StaggerParams


def writers(f: StaggerParams, delay: float) -> int:
    """The first child always writes; a later one writes too if it starts before that write is readable."""
    return min(f.children, 1) + sum(1 for i in range(1, f.children) if i * delay < f.ttft)


def closed_form(p: Prices, f: StaggerParams, delay: float) -> Decimal:
    return cost_at(p, f, delay, f.shared, [f.shared + f.task] * f.children)


def cost_at(p: Prices, f: StaggerParams, delay: float, shared: int, lengths: list[int]) -> Decimal:
    """The same rule at given sizes (the shared prefix, each child's whole prompt), the model's
    minimum included: child i reads the shared prefix iff it is not a writer and the prefix reaches
    the minimum (the first child starts at t = 0, its write readable at ttft)."""
    m = p.min_tokens()
    return sum((request_cost(p, f.ttl, m, n, shared if i and not i * delay < f.ttft and shared >= m else 0)
                for i, n in enumerate(lengths)), Decimal(0))


def curve(p: Prices, f: StaggerParams, delays: list[float]) -> list[dict]:
    return [{"stagger_s": d, "input_cost_usd": float(closed_form(p, f, d)), "writers": writers(f, d),
             "last_child_delay_s": (f.children - 1) * d} for d in delays]


def held_until_first_response(p: Prices, f: StaggerParams) -> Decimal:
    """CC-WF: siblings wait until the first agent's response begins, then all of them read S."""
    return closed_form(p, f, f.ttft if f.ttft > 0 else 1.0)
