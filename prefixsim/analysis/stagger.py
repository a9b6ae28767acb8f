"""Parallel children: launched together vs staggered. N siblings share a prefix S (sub-agents of one
type, or fork children of a cold parent) and each adds its own task T. Child i starts at i·δ; an
entry is readable from τ (time to first token) after the first child starts (A-PC), so child i reads
S iff i·δ ≥ τ. With W = #{i : i·δ < τ} writers:

    cost(δ) = W·w·(S + T) + (N − W)·(r·S + w·T),     extra latency of the last child = (N − 1)·δ

Claude Code instead holds all siblings until the first response begins (CC-WF): one writer, latency τ.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..model import Call, Layer
from .common import Builder, Prices, request, simulate_cost


@dataclass(frozen=True)
class StaggerParams:
    children: int = 5
    shared: int = 16_000
    task: int = 1_000
    ttft: float = 3.0
    ttl: str = "5m"


def writers(f: StaggerParams, delay: float) -> int:
    """The first child always writes; a later one writes too if it starts before that write is readable."""
    return min(f.children, 1) + sum(1 for i in range(1, f.children) if i * delay < f.ttft)


def closed_form(p: Prices, f: StaggerParams, delay: float) -> Decimal:
    w, r = p.write(f.ttl), p.read
    k = writers(f, delay)
    return k * w * (f.shared + f.task) + (f.children - k) * (r * f.shared + w * f.task)


def simulate(p: Prices, book, f: StaggerParams, delay: float) -> Decimal:
    b = Builder()
    shared = b.blk("shared", f.shared, Layer.SYSTEM)
    calls = [Call(i * delay, request(p.model, [shared, b.blk(f"task-{i}", f.task)], [0, -1], f.ttl),
                  stream=f"child{i}") for i in range(f.children)]
    return simulate_cost(calls, book, ttft=f.ttft)


def curve(p: Prices, f: StaggerParams, delays: list[float]) -> list[dict]:
    return [{"stagger_s": d, "input_cost_usd": float(closed_form(p, f, d)), "writers": writers(f, d),
             "last_child_delay_s": (f.children - 1) * d} for d in delays]


def held_until_first_response(p: Prices, f: StaggerParams) -> Decimal:
    """CC-WF: siblings wait until the first agent's response begins, then all of them read S."""
    return closed_form(p, f, f.ttft if f.ttft > 0 else 1.0)
