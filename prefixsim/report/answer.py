"""The one-line answer of a scenario: which design is cheapest, and by how much (the margin to the
next, and the dearest). Shared by `prefixsim run` and the report's summary so both say the same.

Provider APIs are ranked by dollars; self-hosted engines cost GPU time, not dollars, so they are
ranked by the prefill GPU-seconds they spend (by computed tokens when no prefill rate is given).
A sweep is answered per swept value (designs compared at the same value) and then overall."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from prefixsim.core.dollars import usd


@dataclass(frozen=True)
class Metric:
    key: str
    best: str     # "cheapest", "least GPU prefill"
    unit: str     # how one value reads

    def value(self, row: dict[str, Any]) -> float:
        if self.key == "computed_tokens":
            return float(row["input_tokens"] + row["cache_creation_input_tokens"])
        return float(row[self.key] or 0.0)

    def show(self, row: dict[str, Any]) -> str:
        v = self.value(row)
        return {"cost_usd": f"{usd(v)}", "gpu_seconds_spent": f"{v:,.2f} GPU-s"}.get(self.key, f"{v:,.0f} tokens computed")


COST = Metric("cost_usd", "cheapest", "USD")


def metric_for(rows: Sequence[dict[str, Any]], self_hosted: bool) -> Metric:
    if not self_hosted:
        return COST
    if all(r.get("gpu_seconds_spent") is not None for r in rows):
        return Metric("gpu_seconds_spent", "least GPU prefill", "GPU-seconds")
    return Metric("computed_tokens", "least prefill", "tokens")


#: A question that asks for the design that costs the most ("Which mid-session change costs the most
#: cache?"): its answer leads with the dearest, not the cheapest (issue 34: the invalidation matrix
#: answered "cheapest: tool_choice changed" to it).
_ASKS_MOST = re.compile(r"\b(?:costs?|spends?|loses?|wastes?)\b[^?.]*?\bthe most\b|\bmost (?:expensive|costly)\b"
                        r"|\b(?:dearest|costliest)\b", re.I)


def asks_dearest(question: str | None) -> bool:
    """Whether a scenario's `question:` asks which design costs the most."""
    return bool(question and _ASKS_MOST.search(question))


def _dearest(rows: Sequence[dict[str, Any]], m: Metric, name) -> str:
    """`dearest: C, $0.4746, 3.51x the cheapest; next: B, $0.1642; cheapest: A, $0.1352` (ties named)."""
    order = sorted(rows, key=m.value, reverse=True)   # stable: equal values keep the file's order
    top, low = m.value(order[0]), m.value(order[-1])
    tied = [r for r in order[1:] if m.value(r) == top]
    rest = [r for r in order[1:] if m.value(r) != top]
    most = "dearest" if m is COST else m.best.replace("least", "most", 1)
    text = f"{most}: {name(order[0])}, {m.show(order[0])}"
    if tied:
        text += f" (tied: {', '.join(name(r) for r in tied)})"
    if not rest:
        return text + ("; all designs cost the same" if len(tied) == len(order) - 1 else "")
    text += f", {top / low:.2f}x the cheapest" if low else ""
    if len(rest) > 1:
        text += f"; next: {name(rest[0])}, {m.show(rest[0])}"
    least = [r for r in rest if m.value(r) == low]
    return text + f"; {m.best}: {name(least[0])}, {m.show(least[0])}" + (
        f" (tied: {', '.join(name(r) for r in least[1:])})" if len(least) > 1 else "")


def rank(rows: Sequence[dict[str, Any]], m: Metric, name=lambda r: r["variant"], dearest: bool = False) -> str:
    """`cheapest: A, $0.3060; next: B 1.11x (+$0.0341); dearest: C 2.14x` (ties named); `dearest`
    (a question asking what costs the most): led by the dearest (_dearest)."""
    if not rows:
        return "no designs to compare"
    if dearest and len(rows) > 1:
        return _dearest(rows, m, name)
    order = sorted(rows, key=m.value)   # sorted() is stable: equal values keep the file's order
    best = order[0]
    if len(order) == 1:
        r = best
        extra = f", {r['hit_rate']:.1%} of prompt tokens read from cache"
        if m is COST and r.get("cost_no_cache_usd"):
            extra += f", {r['savings_vs_no_cache']:.1%} saved vs no cache"
        return f"{name(r)}: {m.show(r)}{extra}"
    b = m.value(best)
    tied = [r for r in order[1:] if m.value(r) == b]
    rest = [r for r in order[1:] if m.value(r) != b]
    text = f"{m.best}: {name(best)}, {m.show(best)}"
    if tied:
        text += f" (tied: {', '.join(name(r) for r in tied)})"
    if not rest:
        return text + ("; all designs cost the same" if len(tied) == len(order) - 1 else "")

    def ratio(r: dict[str, Any]) -> str:
        return f"{m.value(r) / b:.2f}x" if b else "—"

    nxt = rest[0]
    diff = m.value(nxt) - b
    margin = f"+{usd(diff)}" if m is COST else f"+{diff:,.2f}" if m.key == "gpu_seconds_spent" else f"+{diff:,.0f}"
    text += f"; next: {name(nxt)} {ratio(nxt)} ({margin})"
    if len(rest) > 1:
        text += f"; dearest: {name(rest[-1])} {ratio(rest[-1])}"
    return text


def _against(designs: Sequence[dict[str, Any]], refs: Sequence[dict[str, Any]], m: Metric) -> str:
    """A lone design against its yardsticks (`; reference seed demo: $0.1468, the design 1.29x`): with
    one design there is no ranking, and the question is how it compares to the reference."""
    if len(designs) != 1 or not refs:
        return ""
    d = m.value(designs[0])
    return "".join(f"; reference {r['variant']}: {m.show(r)}"
                   + (f", the design {d / m.value(r):.2f}x" if m.value(r) else "") for r in refs)


def answers(rows: Sequence[dict[str, Any]], self_hosted: Sequence[bool],
            sweep: tuple[str, Sequence[Any]] | None = None, dearest: bool = False) -> list[str]:
    """The answer lines of one scenario: one per sweep value and one overall for a sweep; a mix of
    APIs and engines is answered once per kind (dollars and GPU time do not compare). Reference
    variants (`reference: true`, yardsticks such as a strawman accounting model) are compared in the
    table but never answer: the lines rank the designs only. `dearest`: the question asks which costs
    the most (asks_dearest), so each line leads with the dearest."""
    refs = [(r, s) for r, s in zip(rows, self_hosted) if r.get("_reference")]
    keep = [i for i, r in enumerate(rows) if not r.get("_reference")]
    rows, self_hosted = [rows[i] for i in keep], [self_hosted[i] for i in keep]
    kinds = sorted(set(self_hosted))
    out = []
    for kind in kinds:
        part = [(r, s) for r, s in zip(rows, self_hosted) if s == kind]
        group = [r for r, _ in part]
        m = metric_for(group, kind)
        prefix = ("self-hosted " if kind else "provider APIs ") if len(kinds) > 1 else ""
        if sweep is None:
            out.append(prefix + rank(group, m, dearest=dearest) + _against(group, [r for r, s in refs if s == kind], m))
            continue
        param, values = sweep
        seen: list[Any] = []
        for v in values:
            if v not in seen:
                seen.append(v)
        for v in seen:
            at = [r for r in group if r["_sweep_value"] == v]
            out.append(f"{prefix}{param}={v}: " + rank(at, m, lambda r: r["_base"], dearest))
        out.append(f"{prefix}overall: " + rank(group, m, lambda r: f"{r['_base']} at {param}={r['_sweep_value']}",
                                               dearest))
    return out
