"""Fork vs fresh sub-agent: the cost of N children as a function of the history they would inherit.

A fork child starts from the parent's exact prefix P = parent static + history H, so its first
request reads P; but it carries P on every turn of its own K-turn loop (seed 003's warning). A fresh
sub-agent starts from its own static prefix S (siblings of one type share it) and a task T. Both
loops grow by g tokens a turn. With 5m writes (w), reads (r) and siblings launched far enough apart
to read each other's writes (CC-WF: Claude Code holds them until the first response begins):

    fork(H) = r·P + w·(c + d) + (N−1)·(r·(P + c) + w·d) + N·Σ_{j=1}^{K−1} (r·(P + c + d + (j−1)·g) + w·g)
    sub     = w·(S + T)       + (N−1)·(r·S + w·T)       + N·Σ_{j=1}^{K−1} (r·(S + T + (j−1)·g) + w·g)

fork(H) grows with slope N·K·r in H, so a sub-agent is cheaper past H* = (sub − fork(0)) / (N·K·r).
c is the spawning call plus placeholder results (shared by the siblings), d one child's directive.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from ..model import Call, Layer
from .common import Builder, Prices, request, simulate_cost


@dataclass(frozen=True)
class ForkParams:
    children: int = 5
    turns: int = 3                 # requests each child makes (its own loop)
    parent_static: int = 18_000    # parent tools + system, part of what a fork inherits
    sub_static: int = 16_000       # a sub-agent's own tools + system (most tools, its own prompt)
    task: int = 1_000              # a sub-agent's task: it must restate the context it needs
    directive: int = 200           # a fork child's directive
    call: int = 120                # per child: its tool_use in the spawning message + placeholder result
    growth: int = 1_500            # tokens a loop turn adds (reply + tool result)
    ttl: str = "5m"

    @property
    def spawn(self) -> int:
        return self.children * self.call


def closed_form(p: Prices, f: ForkParams, history: int) -> tuple[Decimal, Decimal]:
    """(fork, sub-agent) input cost in USD for `history` tokens of parent history."""
    r, w = p.read, p.write(f.ttl)
    n, k, g = f.children, f.turns, f.growth
    big_p = f.parent_static + history
    c, d = f.spawn, f.directive
    loop = lambda first: sum(r * (first + j * g) + w * g for j in range(k - 1))  # noqa: E731
    fork = r * big_p + w * (c + d) + (n - 1) * (r * (big_p + c) + w * d) + n * loop(big_p + c + d)
    s, t = f.sub_static, f.task
    sub = w * (s + t) + (n - 1) * (r * s + w * t) + n * loop(s + t)
    return fork, sub


def crossing_history(p: Prices, f: ForkParams) -> float:
    """History size (tokens) past which the sub-agent design is cheaper (0: always cheaper)."""
    fork0, sub = closed_form(p, f, 0)
    slope = f.children * f.turns * p.read
    return max(0.0, float((sub - fork0) / slope))


def simulate(p: Prices, book, f: ForkParams, history: int, ttft: float = 2.0) -> tuple[Decimal, Decimal]:
    """The same two designs replayed through the Anthropic rules; only the children are counted."""
    b = Builder()
    m = p.model
    gap = ttft + 1.0  # siblings launched once the first response has begun

    parent = [b.blk("parent-static", f.parent_static, Layer.TOOLS)] + ([b.blk("history", history)] if history else [])
    calls = [Call(0.0, request(m, parent, [-1], f.ttl), stream="parent")]
    spawn = b.blk("spawn", f.spawn)
    for i in range(f.children):
        blocks = parent + [spawn, b.blk(f"directive-{i}", f.directive)]
        t0 = 10.0 + i * gap
        for j in range(f.turns):
            if j:
                blocks = blocks + [b.blk(f"fork-{i}-turn-{j}", f.growth)]
            calls.append(Call(t0 + j * 10.0, request(m, blocks, [len(parent), -1], f.ttl), stream=f"fork{i}"))
    fork = simulate_cost(calls, book, ttft, streams=lambda s: s.startswith("fork"))

    calls = []
    static = b.blk("sub-static", f.sub_static, Layer.TOOLS)
    for i in range(f.children):
        blocks = [static, b.blk(f"task-{i}", f.task)]
        t0 = 10.0 + i * gap
        for j in range(f.turns):
            if j:
                blocks = blocks + [b.blk(f"sub-{i}-turn-{j}", f.growth)]
            calls.append(Call(t0 + j * 10.0, request(m, blocks, [0, -1], f.ttl), stream=f"sub{i}"))
    sub = simulate_cost(calls, book, ttft)
    return fork, sub


def curves(p: Prices, base: ForkParams, histories: list[int], children=(1, 2, 5, 8, 16)) -> list[dict]:
    rows = []
    for n in children:
        f = replace(base, children=n)
        for h in histories:
            fork, sub = closed_form(p, f, h)
            rows.append({"children": n, "history_tokens": h, "fork_usd": float(fork), "subagent_usd": float(sub)})
    return rows


def crossings(p: Prices, base: ForkParams, children=(1, 2, 5, 8, 16)) -> list[dict]:
    out = []
    for n in children:
        f = replace(base, children=n)
        h = crossing_history(p, f)
        fork, sub = closed_form(p, f, int(round(h)))
        out.append({"children": n, "turns": f.turns, "crossing_history_tokens": round(h),
                    "cost_at_crossing_usd": round(float(sub), 6)})
    return out
