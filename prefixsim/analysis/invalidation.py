"""What one mid-session change costs, as a function of how late in the session it comes.

A session with static prefix S = tools + system and g tokens a turn, breakpoints on the system
prompt and the last message (Claude Code's placement). Before turn m the prompt is L = S + (m−1)·g;
turn m normally reads L and writes g. A change rewrites what it invalidates
(A-PC; docs/rules.md#anthropic-layered-invalidation):

    tools or system change, model/effort switch:   extra(m) = (w − r)·L
    tool_choice / thinking / images (messages):     extra(m) = (w − r)·(L − S)

so its cost grows linearly with the turn it lands on: change what you must early.
"""
from __future__ import annotations

from decimal import Decimal

from prefixsim.analysis.common import Builder, Prices, request, request_cost, simulate_cost
from prefixsim.model import Call, Layer, Request
from prefixsim.scenario.studyparams import InvalidationParams

KINDS = ("tools", "system", "messages", "model")


def closed_form(p: Prices, f: InvalidationParams, kind: str, turn: int) -> Decimal:
    static = f.tools + f.system
    before = static + (turn - 1) * f.growth
    return extra_at(p, f, kind, static, before if turn > 1 else 0, static + turn * f.growth)


def extra_at(p: Prices, f: InvalidationParams, kind: str, static: int, before: int, length: int,
             changed: int | None = None) -> Decimal:
    """The same rule at given sizes: request m (prompt `length`) normally reads request m − 1's write
    (`before`); after a tools or system change it reads nothing, after a messages-layer change only the
    static prefix (`static`, breakpoint on the system prompt). `changed`: the changed request's own
    prompt size, when the change does not keep it exactly."""
    m = p.min_tokens()
    usual = request_cost(p, f.ttl, m, length, before if before >= m else 0)
    # a messages-layer change still reads the static prefix, if an earlier request cached it (at turn 1
    # none did: the change then costs nothing extra, never less than nothing)
    read = 0 if kind in ("tools", "system", "model") or before == 0 else (static if static >= m else 0)
    return request_cost(p, f.ttl, m, length if changed is None else changed, read) - usual


def _session(p: Prices, f: InvalidationParams, kind: str | None, turn: int) -> list[Call]:
    b = Builder()
    tools, system = b.blk("tools", f.tools, Layer.TOOLS), b.blk("system", f.system, Layer.SYSTEM)
    calls, history = [], []
    for t in range(1, turn + 1):
        changed = kind is not None and t == turn
        tl = b.blk("tools-v2", f.tools, Layer.TOOLS) if changed and kind == "tools" else tools
        sy = b.blk("system-v2", f.system, Layer.SYSTEM) if changed and kind == "system" else system
        history = history + [b.blk(f"turn-{t}", f.growth)]
        req = request(p.model, [tl, sy, *history], [1, -1], f.ttl)
        if changed and kind == "messages":
            req = Request(req.model, req.blocks, (b"", b"", b'{"tool_choice":{"type":"any"}}'))
        if changed and kind == "model":
            # another cache: a salt keys it apart on every platform (a workspace would not on Bedrock or
            # Vertex AI, whose caches are shared across the organisation, so the switch would read)
            req = Request(req.model, req.blocks, req.layer_params, cache_salt="switched")
        calls.append(Call(t * 10.0, req))
    return calls


def simulate(p: Prices, book, f: InvalidationParams, kind: str, turn: int) -> Decimal:
    """Cost of the session with the change at `turn` minus the same session without it."""
    return (simulate_cost(_session(p, f, kind, turn), book, provider=p.provider)
            - simulate_cost(_session(p, f, None, turn), book, provider=p.provider))


def curve(p: Prices, f: InvalidationParams, turns: list[int]) -> list[dict]:
    return [{"turn": m, **{f"{k}_usd": float(closed_form(p, f, k, m)) for k in KINDS}} for m in turns]
