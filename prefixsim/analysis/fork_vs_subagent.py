"""Fork vs fresh sub-agent: the input cost of N children as a function of the history they would inherit.

The two designs, as the scenario builder makes them (check_designs.py) and Claude Code sends them:

- fork: each child re-sends the parent's prompt P (static prefix + history), the parent's reply that
  spawns the children (a text block and N tool_use blocks) and a user message of N placeholder
  results plus its own directive d. Breakpoints: end of the static prefix, the last placeholder
  (the boundary the siblings share, seed 000) and the last message.
- sub-agent: each child sends its own static prefix S (siblings of one type share it) and a task T.

Each child then runs a K-request tool loop, every turn adding its reply and a tool result (g tokens,
three blocks). Per request of prompt length L the rules (A-PC;
docs/rules.md#anthropic-prefix-breakpoints-and-lookback) decide the read part R; the request
then writes L − R (if L reaches the model's minimum M, else nothing is cached and L − R is uncached):

    fork child 0, request 1:  R = P        if the parent's write is within the 20-block lookback of
                                           the shared boundary: 2N + 1 ≤ 19 blocks, i.e. N ≤ 9
                              R = static   otherwise (lookback_exceeded: the history is written again)
    fork sibling i, request 1: R = P + spawn   if i·stagger ≥ ttft (child 0's write is readable), else as child 0
    sub child 0, request 1:   R = 0;   sibling i: R = S if i·stagger ≥ ttft, else 0
    request j > 1:            R = the previous request's prompt (written one pace earlier)

and each entry counts only where its prefix reaches M. The cost of fork grows with the history H at
N·K·r a token (plus the write of it past the lookback), the sub-agent's does not depend on H: a
sub-agent is cheaper past the crossing H*, found exactly on the piecewise-linear fork(H).

Counted: the children's input tokens (reads, writes, uncached). Left out, the same in both designs or
outside the choice: output tokens, the parent's own turn before the spawn (it warms P in both
designs), the results the children return to the parent.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from prefixsim.analysis.common import Prices, request_cost
from prefixsim.providers.tables import ANTHROPIC_LOOKBACK
from prefixsim.scenario.studyparams import DEFAULT_CHILDREN, PACE, ForkParams  # noqa: F401 (DEFAULT_CHILDREN: the studies read it here)

#: blocks one tool-loop turn adds: the tool result, the reply's text and its tool_use
TURN_BLOCKS = 3
#: History past this is beyond any model's context: a crossing further out is reported as `never`.
MAX_HISTORY = 1_000_000


@dataclass(frozen=True)
class ForkShape:
    """Prompt sizes (tokens) of the fork design's requests."""

    static: int                 # the parent's tools + system (first breakpoint)
    parent: int                 # the parent's last prompt, which it wrote: static + history
    shared: int                 # + spawning reply + N placeholder results (the siblings' boundary)
    lengths: tuple[tuple[int, ...], ...]   # child i, request j: whole prompt


@dataclass(frozen=True)
class SubShape:
    static: int
    lengths: tuple[tuple[int, ...], ...]


def fork_shape(f: ForkParams, history: int) -> ForkShape:
    parent = f.parent_static + history
    shared = parent + f.children * f.call
    row = tuple(shared + f.directive + j * f.growth for j in range(f.turns))
    return ForkShape(f.parent_static, parent, shared, (row,) * f.children)


def sub_shape(f: ForkParams) -> SubShape:
    row = tuple(f.sub_static + f.task + j * f.growth for j in range(f.turns))
    return SubShape(f.sub_static, (row,) * f.children)


def spawn_blocks(children: int) -> int:
    """Blocks from the parent's last write to the shared boundary: the spawning reply's text and N
    tool_use blocks, then N placeholder results (the boundary sits on the last)."""
    return 2 * children + 1


def sibling_reads(i: int, f: ForkParams) -> bool:
    """Child i starts i·stagger after child 0, whose write is readable ttft after it starts (the
    clock of the scenario: the spawn comes one pace after the parent's turn)."""
    return i > 0 and PACE + f.ttft <= PACE + i * f.stagger


def _loop(p: Prices, f: ForkParams, minimum: int, lengths: tuple[int, ...], first_read: int) -> Decimal:
    total, read = Decimal(0), first_read
    for length in lengths:
        total += request_cost(p, f.ttl, minimum, length, read)
        # the next request reads this one's write (TURN_BLOCKS < the lookback, pace ≥ ttft)
        read = length if length >= minimum else 0
    return total


def fork_cost(p: Prices, f: ForkParams, shape: ForkShape) -> Decimal:
    minimum = p.min_tokens()
    reach = spawn_blocks(len(shape.lengths)) < ANTHROPIC_LOOKBACK.value
    if reach and shape.parent >= minimum:
        inherited = shape.parent
    else:
        inherited = shape.static if shape.static >= minimum else 0
    total = Decimal(0)
    for i, lengths in enumerate(shape.lengths):
        first = shape.shared if sibling_reads(i, f) and shape.shared >= minimum else inherited
        total += _loop(p, f, minimum, lengths, first)
    return total


def sub_cost(p: Prices, f: ForkParams, shape: SubShape) -> Decimal:
    minimum = p.min_tokens()
    total = Decimal(0)
    for i, lengths in enumerate(shape.lengths):
        first = shape.static if sibling_reads(i, f) and shape.static >= minimum else 0
        total += _loop(p, f, minimum, lengths, first)
    return total


def closed_form(p: Prices, f: ForkParams, history: int) -> tuple[Decimal, Decimal]:
    """(fork, sub-agent) input cost in USD of the children, for `history` tokens of parent history."""
    return fork_cost(p, f, fork_shape(f, history)), sub_cost(p, f, sub_shape(f))


def _kinks(p: Prices, f: ForkParams) -> list[int]:
    """Histories where fork(H) may change slope or jump: a prompt reaching the minimum or a price
    tier. Between two of them fork(H) is linear in H."""
    minimum = p.min_tokens()
    r = p.rates
    tiers = {s for t in ((r.input, r.cache_read, r.cache_write_5m, r.cache_write_1h) if r else ())
             for s, _ in t.tiers}
    zero = fork_shape(f, 0)
    offsets = {zero.parent, zero.shared, *{x for row in zero.lengths for x in row}}
    out = {0, MAX_HISTORY}
    for o in offsets:
        out.add(minimum - o)           # first H where a size reaches the minimum
        out |= {s + 1 - o for s in tiers}   # first H past a tier's start
    return sorted(h for h in out if 0 <= h <= MAX_HISTORY)


def crossing(p: Prices, f: ForkParams) -> int | None:
    """The least history H (tokens) such that a sub-agent is cheaper for every history ≥ H:
    0 when it always is, None when the fork stays cheaper up to MAX_HISTORY."""
    sub = sub_cost(p, f, sub_shape(f))
    fork = lambda h: fork_cost(p, f, fork_shape(f, h))  # noqa: E731
    ks = _kinks(p, f)
    if fork(MAX_HISTORY) <= sub:
        return None
    segments = [(a, b - 1) for a, b in zip(ks, ks[1:])] + [(MAX_HISTORY, MAX_HISTORY)]
    for a, b in reversed(segments):
        fa = fork(a)
        if fa > sub:
            continue
        if fork(b) <= sub:
            return b + 1
        slope = fork(a + 1) - fa   # linear on [a, b]
        return a + int((sub - fa) // slope) + 1
    return 0


def crossings(p: Prices, base: ForkParams, children=DEFAULT_CHILDREN) -> list[dict]:
    """One row per number of children: the crossing (`always`: a sub-agent is cheaper at every
    history; `never`: the fork is, up to MAX_HISTORY) and the sub-agent design's cost."""
    out = []
    for n in children:
        f = replace(base, children=n)
        h = crossing(p, f)
        sub = sub_cost(p, f, sub_shape(f))
        out.append({"children": n, "turns": f.turns,
                    "sub_agent_cheaper_from": "never" if h is None else "always" if h == 0 else h,
                    "lookback_exceeded": spawn_blocks(n) >= ANTHROPIC_LOOKBACK.value,
                    "sub_agent_cost_usd": float(sub)})
    return out
