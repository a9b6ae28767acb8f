"""The critical path of a design: what the user waits for, turn by turn, given each request's time
to first token (prefixsim/latency/model.py).

A turn is a request of the main conversation; its wait is its own time to first token plus what the
main conversation waited on since its previous request:
- a fork or sub-agent step that joins: the slowest child (the parent waits on all of them), each
  child's path its launch offset plus its requests' times in turn. Launched `stagger` seconds apart,
  child i starts i x stagger after the first; held (`stagger: hold`), the others start when the
  first one's response begins, i.e. after its first request's time to first token;
- a compaction (or an explicit cache's creation): its request, before the next turn.
A spawn that does not join and a /btw side question run beside the conversation: the next turn does
not wait on them, the user does, so each is a wait of its own (the slowest child; the answer). Work
the main conversation waits on after its last request is one more wait of its own.
Only times to first token are counted: generation, tool runs and the user's own time are not
(docs/rules.md#latency)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from prefixsim.latency.model import percentile

SPAWNS = ("fork", "subagent")
BESIDE = ("btw",)


@dataclass(frozen=True)
class Latency:
    """A variant's times: each request's time to first token (in call order) and each turn's wait."""

    ttft: tuple[float, ...]
    waits: tuple[float, ...]
    source: str

    def figures(self) -> dict[str, float | None]:
        def q(xs, p):
            return round(percentile(xs, p), 3) if xs else None
        return {"ttft_p50_s": q(self.ttft, 50), "ttft_p95_s": q(self.ttft, 95),
                "wait_p50_s": q(self.waits, 50), "wait_p95_s": q(self.waits, 95)}


def _spawn_wait(spec, streams: list[list[int]], ttft: Sequence[float]) -> float:
    """The slowest child's path: its launch offset plus its requests' times to first token."""
    if not streams:
        return 0.0
    first = ttft[streams[0][0]]
    paths = []
    for i, calls in enumerate(streams):
        launch = (first if i else 0.0) if spec.stagger == "hold" else i * float(spec.stagger)
        paths.append(launch + sum(ttft[c] for c in calls))
    return max(paths)


def critical_waits(steps: Sequence, streams: Sequence[str], step_of: Sequence[int],
                   ttft: Sequence[float]) -> tuple[float, ...]:
    """Each turn's wait, in order (see the module docstring). `streams[i]`, `step_of[i]`, `ttft[i]`:
    call i's stream, the timeline step that made it and its time to first token."""
    by_step: dict[int, list[int]] = {}
    for i, k in enumerate(step_of):
        by_step.setdefault(k, []).append(i)
    waits: list[float] = []
    pending = 0.0
    for k, step in enumerate(steps):
        kind = next(iter(type(step).model_fields))
        spec = getattr(step, kind)
        calls = by_step.get(k, [])
        if kind in SPAWNS:
            children: dict[str, list[int]] = {}
            for i in calls:
                children.setdefault(streams[i], []).append(i)
            slowest = _spawn_wait(spec, list(children.values()), ttft)
            if spec.join:
                pending += slowest
            elif calls:
                waits.append(slowest)
            continue
        if kind in BESIDE:
            waits += [ttft[i] for i in calls]
            continue
        for i in calls:
            if streams[i] == "main":
                waits.append(pending + ttft[i])
                pending = 0.0
            else:   # a compaction, an explicit cache's creation: done before the next turn
                pending += ttft[i]
    if pending:
        waits.append(pending)
    return tuple(round(w, 6) for w in waits)
