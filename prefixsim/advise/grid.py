"""Design space search for scenarios: every design a scenario's `optimize:` spans (scenario/optimize.py),
simulated as `prefixsim run` simulates a variant, then compared on two axes: what it costs, and its
p95 time to first token (TTFT_STAT: the 95th percentile of its requests' times to first token under
the scenario's latency model, scenario/critical.py, the figure `--max-ttft` bounds). The cheapest
design and the Pareto front of the two are marked. Each design also carries the user-visible wait
per turn (p50/p95) and the uncached critical-path tokens below, the latency proxy the search used
before it had a latency model.

Uncached critical-path tokens. A request's uncached tokens are the prompt tokens it does not read
from the cache: `input_tokens + cache_creation_input_tokens` (a cache write is computed too). The
requests form a graph of waits on the simulated clock:
  - a request waits for the one before it on its own stream;
  - a request on another stream (a fork child, a sub-agent, a /btw, a compaction) waits for the last
    main-conversation request sent before it (the one whose reply spawned it);
  - a main-conversation request waits for every other stream's latest request that finished by the
    time it starts (started at least one `pace` earlier): a joined spawn's children, a compaction.
The critical path is the chain through this graph whose requests compute the most uncached tokens;
its total is the figure. Children launched together are parallel, so only the heaviest child's
chain counts. It is a proxy: prefill time grows with tokens computed, but waits (a `stagger`, a
`hold`) add time without tokens; the last request's start on the simulated clock is shown beside it.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

from prefixsim.errors import UserError
from prefixsim.io.yamlfile import load_yaml
from prefixsim.model import Outcome
from prefixsim.scenario.optimize import label, points
from prefixsim.scenario.parallel import run_files, scenario_designs
from prefixsim.scenario.results import ScenarioResult, VariantResult


@dataclass(frozen=True, slots=True)
class Design:
    name: str                     # `ttl=1h stagger=hold spawn=fork`, after the variant when there are several
    values: tuple[tuple[str, str], ...]   # (dimension, value) as the name shows them
    cost_usd: Decimal             # exact, as the run's summary sums it
    critical_tokens: int          # uncached critical-path tokens (module docstring)
    critical_requests: int        # requests on that path
    last_start_s: float           # when the last request starts on the simulated clock
    requests: int
    hit_rate: float
    #: seconds, as scenario/critical.py's Latency.figures() gives them (None: no latency model, an
    #: engine without a prefill rate)
    ttft_p50_s: float | None = None
    ttft_p95_s: float | None = None
    wait_p50_s: float | None = None
    wait_p95_s: float | None = None
    pareto: bool = False

    @property
    def ttft(self) -> float:
        """The figure the front and `--max-ttft` compare (TTFT_STAT); a design without one compares as
        slower than any design with one."""
        return math.inf if self.ttft_p95_s is None else self.ttft_p95_s


@dataclass(frozen=True, slots=True)
class GridResult:
    scenario: str
    path: str
    designs: tuple[Design, ...]   # in grid order (scenario/optimize.py: points)
    #: `--max-ttft` (seconds): `designs` are those whose p95 TTFT meets it, `excluded` the others
    max_ttft_s: float | None = None
    excluded: tuple[Design, ...] = ()

    def within(self, max_ttft_s: float | None) -> GridResult:
        """The designs whose p95 TTFT is at most `max_ttft_s` (a design without a latency model never
        is). The front is unchanged for those kept: a design that dominates one within the bound has
        no higher p95 TTFT, so it is within too."""
        if max_ttft_s is None:
            return self
        keep = tuple(d for d in self.designs if d.ttft <= max_ttft_s)
        return replace(self, designs=keep, max_ttft_s=max_ttft_s,
                       excluded=tuple(d for d in self.designs if d.ttft > max_ttft_s))

    @property
    def cheapest(self) -> Design:
        """Least cost; a tie goes to the lower p95 TTFT, then to fewer critical-path tokens, then to
        the earlier last request (a shorter wait), then to the earlier design in the grid."""
        return min(self.designs, key=_order)

    def tied(self) -> tuple[Design, ...]:
        """Other designs that cost exactly what the cheapest does."""
        c = self.cheapest
        return tuple(d for d in self.ranked() if d.cost_usd == c.cost_usd and d is not c)

    @property
    def front(self) -> tuple[Design, ...]:
        """The Pareto designs, by cost."""
        return tuple(sorted((d for d in self.designs if d.pareto), key=_order))

    def ranked(self) -> tuple[Design, ...]:
        """Every design, cheapest first (ties as `cheapest`; sorted() keeps grid order last)."""
        return tuple(sorted(self.designs, key=_order))


#: The statistic of a design's times to first token that the front and `--max-ttft` compare.
TTFT_STAT = "p95 TTFT"


def _order(d: Design) -> tuple:
    return (d.cost_usd, d.ttft, d.critical_tokens, d.last_start_s)


def uncached(o: Outcome) -> int:
    return o.usage.input_tokens + o.usage.cache_creation


def critical_path(outcomes: list[Outcome], pace: float) -> tuple[int, int]:
    """(uncached tokens, requests) of the heaviest chain of waits (module docstring). The calls are in
    the order the timeline made them, which puts every request after those it waits for."""
    best: list[tuple[int, int]] = []          # per request: (tokens, requests) of the heaviest chain ending there
    last_of: dict[str, int] = {}             # stream -> its latest request so far
    pending: dict[str, int] = {}             # other streams whose latest request main has not yet waited for
    done = (0, 0)                            # heaviest chain among the finished ones
    last_main: int | None = None
    eps = 1e-9
    for i, o in enumerate(outcomes):
        c = o.call
        preds = []
        if c.stream in last_of:
            preds.append(best[last_of[c.stream]])
        if c.stream == "main":
            for s, j in list(pending.items()):
                if outcomes[j].call.t + pace <= c.t + eps:
                    done = max(done, best[j])
                    del pending[s]
            preds.append(done)
        elif last_main is not None:
            preds.append(best[last_main])
        tokens, n = max(preds, default=(0, 0))
        best.append((tokens + uncached(o), n + 1))
        last_of[c.stream] = i
        if c.stream == "main":
            last_main = i
        else:
            pending[c.stream] = i
    return max(best, default=(0, 0))


def mark_pareto(designs: list[Design]) -> list[Design]:
    """Each design with `pareto` set: no other design costs no more and has no higher p95 TTFT while
    being strictly lower in one of them. Equal designs are both on the front."""
    out = []
    for d in designs:
        dominated = any(e.cost_usd <= d.cost_usd and e.ttft <= d.ttft
                        and (e.cost_usd < d.cost_usd or e.ttft < d.ttft) for e in designs)
        out.append(replace(d, pareto=not dominated))
    return out


def design(v: VariantResult, pace: float, values: tuple[tuple[str, str], ...]) -> Design:
    s = v.summary()
    tokens, n = critical_path(v.outcomes, pace)
    times = v.latency.figures() if v.latency is not None else {}
    return Design(v.variant, values, v.cost_exact, tokens, n,
                  max((o.call.t for o in v.outcomes), default=0.0), s["requests"], s["hit_rate"], **times)


def from_result(res: ScenarioResult, runs: list) -> GridResult:
    """The grid's designs from a scenario file's result (its runs are the designs, in order)."""
    grid = points(runs[0].scenario.optimize)
    out = []
    for i, (r, v) in enumerate(zip(runs, res.variants)):
        values = tuple((d, label(d, x)) for d, x in grid[i % len(grid)])   # runs are (run x point), point fastest
        pace = 10.0 if r.settings.pace is None else r.settings.pace
        out.append(design(v, pace, values))
    return GridResult(res.name, res.path, tuple(mark_pareto(out)))


def search(paths: list[str], price_date: dt.date | None = None, workers: int = 1, executor: str = "local",
           scheduler: str | None = None, start: dt.datetime | None = None) -> list[GridResult]:
    """Every design of each scenario file, simulated through parallel.run_files (serially, in local
    processes or on dask: the same results in the same order); the first error of a file is raised."""
    out = []
    for f, res in zip(paths, run_files(paths, price_date, workers, executor, scheduler, start, designs=True)):
        if isinstance(res, UserError):
            raise res.located(f)
        out.append(from_result(res, scenario_designs(f)))
    return out


#: What a YAML file is to a design search: a scenario with `optimize:`, one without, or neither.
OPTIMIZE, PLAIN = "optimize", "plain"
YAML = (".yaml", ".yml")


@dataclass(frozen=True)
class Targets:
    """The scenario files a design search runs (`searched`), and the scenarios found in folders that
    declare no `optimize:` (`skipped`: `prefixsim run` simulates them as written)."""

    searched: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def yaml_kind(path: str) -> str | None:
    """OPTIMIZE, PLAIN (a scenario: it has a timeline) or None (not a scenario this reads: a
    cassette, say, which the traffic readers report on)."""
    try:
        node = load_yaml(path, "scenario")
    except UserError:
        return None
    if not isinstance(node, dict):
        return None
    return OPTIMIZE if "optimize" in node else PLAIN if "timeline" in node else None


def _scenario_path(p: str) -> tuple[list[str], list[str]] | None:
    """(searched, skipped) of one path, or None when it holds no scenario (traffic). A file named is
    searched as given (one without `optimize:` is refused by name when its designs are made); a
    folder's scenarios without `optimize:` are skipped."""
    path = Path(p)
    if path.is_file():
        return ([p], []) if path.suffix in YAML and yaml_kind(p) is not None else None
    if not path.is_dir():
        return None
    kinds = [(str(f), yaml_kind(str(f))) for f in sorted(path.rglob("*")) if f.suffix in YAML and f.is_file()]
    if not any(k for _, k in kinds):
        return None
    return [f for f, k in kinds if k == OPTIMIZE], [f for f, k in kinds if k != OPTIMIZE]


def design_targets(paths, traffic: bool = True) -> Targets | None:
    """The design search `paths` ask for: scenario files, and folders holding scenarios (only those
    declaring `optimize:` are searched). None when they are all traffic (with `traffic`; else an
    error). Scenarios and traffic cannot be mixed in one call; a folder whose scenarios declare no
    `optimize:` at all is an error too."""
    found = [_scenario_path(str(p)) for p in paths]
    if all(f is None for f in found) and traffic:
        return None
    bad = next((p for p, f in zip(paths, found) if f is None), None)
    if bad is not None:
        raise UserError("a design search takes scenario files only (with `optimize:`); give traffic to another "
                        "`prefixsim advise` call" if traffic else
                        "a design search takes scenario files or folders (with `optimize:`); `prefixsim advise` "
                        "reads traffic", str(bad))
    for p, f in zip(paths, found):
        if f is not None and not f[0]:
            raise UserError("no scenario here declares `optimize:` dimensions to search (e.g. `optimize: {ttl: "
                            "[5m, 1h]}`); `prefixsim run` simulates a scenario as written", str(p))
    return Targets(tuple(x for f in found if f for x in f[0]), tuple(x for f in found if f for x in f[1]))
