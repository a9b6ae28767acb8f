"""What the design-review page leads with for a scenario that declares `optimize:`: the best design
the search finds (advise/grid.py, the search `prefixsim search` and `advise` run), its time to first
token, what it saves over the design as written, which choices it changes, and the search's chart of
cost against p95 TTFT. The search's figures are used as they are, never recomputed here."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from prefixsim.advise.grid import TTFT_STAT, Design, GridResult, search
from prefixsim.core.dollars import usd
from prefixsim.io.fsutil import slug
from prefixsim.report import pareto
from prefixsim.report.charts import render_both
from prefixsim.report.html import Figure
from prefixsim.scenario.grid import written
from prefixsim.scenario.loader import load_runs
from prefixsim.scenario.optimize import points
from prefixsim.scenario.results import ScenarioResult


@dataclass(frozen=True)
class BestDesign:
    grid: GridResult
    best: Design
    written: str                  # the run as written the best design is one design of (its variant)
    written_cost: Decimal         # that run's exact cost, as `prefixsim run` sums it
    changes: tuple[tuple[str, str, str], ...]   # (dimension, as written, in the best design)
    peers: tuple[Design, ...] = ()   # the designs of the same run as written (the best among them)

    @property
    def saving(self) -> Decimal:
        return self.written_cost - self.best.cost_usd

    @property
    def share(self) -> float:
        return float(self.saving / self.written_cost) if self.written_cost else 0.0

    def sentence(self) -> str:
        """The answer in one sentence: the design, its cost and TTFT, what it saves and what it changes."""
        b = self.best
        head = f"best design found: {b.name}, {usd(b.cost_usd)}{pareto.latency_text(b)}"
        if self.saving > 0:
            change = "; ".join(f"{d} {a} → {z}" for d, a, z in self.changes)
            return (f"{head}, saving {usd(self.saving)} ({self.share:.1%}) over the design as written "
                    f"({self.written}, {usd(self.written_cost)}): {change}")
        return f"{head}: the design as written ({self.written}, {usd(self.written_cost)}) is already the cheapest"

    def choice_savings(self) -> list[tuple[str, str, str, Decimal]]:
        """Why the best design is cheapest, choice by choice: (dimension, as written, in the best
        design, what it saves), each against the best design with that one choice as written (a
        design the search ran too)."""
        out = []
        for dim, was, now in self.changes:
            want = tuple((d, was if d == dim else v) for d, v in self.best.values)
            other = next((d for d in self.peers if d.values == want), None)
            if other is not None:
                out.append((dim, was, now, other.cost_usd - self.best.cost_usd))
        return out

    def answer_lines(self) -> list[str]:
        """`run`'s answer to a scenario with `optimize:`: the best design and its TTFT, its saving over the
        design as written, what each choice saves, and the design with the lowest p95 TTFT when it is
        another (its TTFT and cost against the best's)."""
        b = self.best
        if self.saving <= 0:
            lines = [f"the design as written ({self.written}, {usd(self.written_cost)}{pareto.latency_text(b)}) is the cheapest of "
                     f"{len(self.grid.designs)} designs"]
        else:
            why = "; ".join(f"{d} {a} → {z} saves {usd(x)}" for d, a, z, x in self.choice_savings())
            lines = [f"best of {len(self.grid.designs)} designs: {b.name}, {usd(b.cost_usd)}{pareto.latency_text(b)}, {self.share:.1%} "
                     f"below the design as written ({usd(self.written_cost)})" + (f", because {why}" if why else "")]
        fast = self.fastest()
        if fast is None and b.ttft_p95_s is not None and len(self.grid.designs) > 1:   # the question asks both
            lines[0] += f"; also the fastest by {TTFT_STAT}"
        if fast is not None:
            lines.append(f"fastest: {fast.name}, {TTFT_STAT} {pareto.seconds_text(fast.ttft)} against "
                         f"{pareto.seconds_text(b.ttft)}, at {usd(fast.cost_usd)} (+{usd(fast.cost_usd - b.cost_usd)})")
        return lines

    def fastest(self) -> Design | None:
        """The fastest design by p95 TTFT, when it is not the best one (pareto.fastest)."""
        return pareto.fastest(self.grid)

    def to_json(self) -> dict:
        """`run --format json`'s design-search answer: what the text's answer lines say, as figures
        (every design of the search is `prefixsim search --format json`'s)."""
        def design(d: Design) -> dict:
            return {"name": d.name, "values": dict(d.values), "cost_usd": float(d.cost_usd),
                    "uncached_critical_path_tokens": d.critical_tokens, "hit_rate": d.hit_rate,
                    "ttft_p50_s": d.ttft_p50_s, "ttft_p95_s": d.ttft_p95_s}

        fast = self.fastest()
        saves = {d: float(x) for d, _, _, x in self.choice_savings()}   # None: no design of the search isolates it
        return {"answer": self.answer_lines(), "designs": len(self.grid.designs), "best": design(self.best),
                "as_written": {"variant": self.written, "cost_usd": float(self.written_cost)},
                "saving_usd": float(max(self.saving, Decimal(0))), "saving_share": max(self.share, 0.0),
                "changes": [{"dimension": d, "as_written": a, "best": z, "saves_usd": saves.get(d)}
                            for d, a, z in self.changes],
                "fastest": None if fast is None else design(fast)}

    def rows(self) -> list[dict]:
        """The designs a reviewer weighs: the cheapest, the Pareto front, and the design as written
        when it is in the grid, with the search's own figures."""
        keep = {id(self.best)} | {id(d) for d in self.grid.front}
        out = []
        for r, d in zip(pareto.rows(self.grid), self.grid.ranked()):
            if id(d) in keep or d.cost_usd == self.written_cost and _same(d, self.changes):
                out.append({"design": r["design"], "cost_usd": r["cost_usd"], "vs_cheapest": r["vs_cheapest"],
                            "ttft": pareto.pair(r, "ttft"), "wait": pareto.pair(r, "wait"),
                            "uncached_critical_path_tokens": r["uncached_critical_path_tokens"],
                            "hit_rate": r["hit_rate"], "pareto": "yes" if r["pareto"] else ""})
        return out

    def figure(self) -> Figure:
        return Figure(f"{self.grid.scenario}: cost against p95 time to first token, {len(self.grid.designs)} "
                      f"designs", render_both(pareto.figure(self.grid))[0], f"{slug(self.grid.scenario)}-pareto",
                      f"{pareto.title(self.grid)}. Every design of `optimize:`, lower left better on both axes: the "
                      "Pareto front joined, the cheapest ringed. p95 TTFT: the 95th percentile of the design's "
                      "requests' times to first token under the scenario's latency model (docs/rules.md#latency); "
                      "the table gives each design's wait per turn too.")


def _same(d: Design, changes) -> bool:
    """Whether `d` is the design as written: each changed dimension at its written value."""
    at = dict(d.values)
    return all(at.get(dim) == was for dim, was, _ in changes)


def best_design(path: str, res: ScenarioResult, when: dt.date | None = None) -> BestDesign | None:
    """The search of `path`'s `optimize:` (None without one), against `res`, the scenario as written."""
    runs = load_runs(path)
    spec = runs[0].scenario.optimize if runs else None
    if spec is None:
        return None
    grid = search([path], when)[0]
    per_run = len(points(spec))
    best = grid.cheapest
    k = grid.designs.index(best) // per_run   # designs are runs x points, the point fastest
    base = runs[k]
    was = written(base.settings, [d for d, _ in best.values])
    changes = tuple((d, was[d], v) for d, v in best.values if was[d] != v)
    return BestDesign(grid, best, res.variants[k].variant, res.variants[k].cost_exact, changes,
                      tuple(grid.designs[k * per_run:(k + 1) * per_run]))


def summary_answer(b: BestDesign) -> str:
    """The page's summary row for the scenario: the best design and its saving, short."""
    if b.saving <= 0:
        return (f"as written ({b.written}): {usd(b.written_cost)}{pareto.latency_text(b.best)}, the cheapest of "
                f"{len(b.grid.designs)} designs")
    return (f"{b.best.name}: {usd(b.best.cost_usd)}{pareto.latency_text(b.best)}, {b.share:.0%} below the design as written "
            f"({usd(b.written_cost)}), best of {len(b.grid.designs)} designs")
