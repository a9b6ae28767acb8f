"""The library entry points notebooks use; the CLI is a thin layer over these.

    >>> from prefixsim.api import run_scenario
    >>> res = run_scenario("scenarios/seed-fork-economics.yaml")
    >>> res.summary          # one row per variant (pandas DataFrame)
    >>> res.requests         # one row per request

Everything a command prints comes from here too: `write_run_report` (a scenario's report folder, as
`run` writes it), `replay_traffic` with `replay_table` (given `replay_losses`) / `replay_csv` / `replay_json_chunks`
(what `replay` prints), `advice_text` (what `advise` prints) and `search_designs` with `designs_text` /
`write_design_reports` (what `search` prints and writes). Each is its package's own function.

One call per command, for a notebook: `run_scenario` (a path, YAML text or a mapping, with
`overrides`), `replay` (what `prefixsim replay` reads, with its what-if options), `advise` and
`breakeven` (the study's figures without writing files unless `out` is given):

    >>> res = run_scenario("scenarios/parallel-children-stagger.yaml", overrides={"sweep.values": [0, 2]})
    >>> rep = replay(["tests/data/claude-code/"], ttl="1h")
    >>> rep.requests           # one row per request (DataFrame); rep.summary, rep.text()
    >>> breakeven("fork-vs-subagent", params={"children": 5}).curve
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prefixsim.advise import advise as run_advise
from prefixsim.advise.attribution import losses as replay_losses
from prefixsim.advise.grid import design_targets
from prefixsim.advise.grid import search as search_designs
from prefixsim.core.dollars import usd
from prefixsim.core.price_report import PriceSheet, price_sheet, sheet_json
from prefixsim.advise.output import render as advice_text
from prefixsim.errors import UserError
from prefixsim.replay.paired import replay_traffic
from prefixsim.replay.whatif import WhatIf
from prefixsim.report.breakeven import run_breakeven
from prefixsim.sources import open_many
from prefixsim.sources.problems import collecting
from prefixsim.replay.output import json_chunks as replay_json_chunks
from prefixsim.replay.output import summary_json as replay_summary_json
from prefixsim.replay.output import to_json as replay_to_json
from prefixsim.report.replay import csv_text as replay_csv
from prefixsim.report.replay import short_streams
from prefixsim.report.replay import table_text as replay_table
from prefixsim.providers.registry import PROVIDERS, priced_provider
from prefixsim.report.pareto import output as designs_text
from prefixsim.report.prices import render_prices
from prefixsim.report.pareto import write_all as write_design_reports
from prefixsim.report.run_report import runs_output, write_run_report
from prefixsim.scenario.inline import Source, load_scenario, scenario_node
from prefixsim.scenario.loader import load_runs, scenario_files
from prefixsim.scenario.parallel import run_files
from prefixsim.scenario.results import ScenarioResult
from prefixsim.scenario.simulate import collect, simulate


def run_file(path: Source, price_date: dt.date | None = None,
             progress: Callable[[int, int], None] | None = None, start: dt.datetime | None = None,
             overrides: Mapping[str, Any] | None = None, name: str | None = None) -> ScenarioResult:
    """Load and run every variant (and sweep value) of one scenario: a file, YAML text or a mapping
    (scenario/inline.py), with `overrides` of any value (`{"ttl": "1h", "vars.history": 8000}`)."""
    where, node = scenario_node(path, overrides, name)
    runs = load_runs(where, node)
    results = []
    for i, r in enumerate(runs):
        results.append(simulate(r, price_date, start))
        if progress:
            progress(i + 1, len(runs))
    return collect(where, runs, results)


def run_scenario(source: Source, price_date: dt.date | None = None, start: dt.datetime | None = None,
                 overrides: Mapping[str, Any] | None = None, name: str | None = None) -> ScenarioResult:
    """Run one scenario — a file's path, YAML text, or a mapping — with `overrides`, a mapping of
    dotted keys to values (`ttl`, `vars.history`, `variants.0.stagger`, `variants.<name>.ttl`,
    `sweep.values`; a mapping value merges). `.comparison`, `.summary` and `.requests` are pandas
    DataFrames. A scenario given as text or a mapping goes by `name` (default `<scenario>`) in
    errors and results, and its `file:` references resolve beside `name`."""
    return run_file(source, price_date, start=start, overrides=overrides, name=name)


def run_paths(paths: Iterable[str], price_date: dt.date | None = None, workers: int = 1, executor: str = "local",
              scheduler: str | None = None, start: dt.datetime | None = None) -> list[ScenarioResult]:
    """Every scenario file in `paths` (files or folders); the first failing file raises its error.

    Runs go to `workers` local processes (0: one per core), or with `executor="dask"` to the
    dask.distributed scheduler at `scheduler`; results are identical to a serial run."""
    out = []
    for res in run_files(scenario_files(list(paths)), price_date, workers, executor, scheduler, start):
        if isinstance(res, UserError):
            raise res
        out.append(res)
    return out


__all__ = ["Replayed", "advice_text", "advise", "breakeven", "collect", "designs_text", "load_scenario", "replay",
           "replay_csv", "replay_json_chunks", "replay_losses", "replay_table", "replay_traffic", "run_file", "run_paths",
           "run_scenario", "runs_output", "search_designs", "short_streams", "simulate", "write_design_reports",
           "write_run_report"]


def model_prices(model: str, provider: str | None = None, endpoint: str | None = None,
                 when: dt.date | None = None) -> PriceSheet:
    """Every rate prefixsim would use for `model` on `provider` (default: from the model id) at 07:00
    UTC on `when` (default today), with the source of each (`prefixsim prices`)."""
    if provider is not None and provider not in PROVIDERS:
        raise UserError(f"unknown provider {provider!r} (valid: {', '.join(PROVIDERS)})")
    return price_sheet(model, provider or priced_provider(model), endpoint, when)


def prices_text(model: str, provider: str | None = None, endpoint: str | None = None,
                when: dt.date | None = None) -> str:
    return render_prices(model_prices(model, provider, endpoint, when))


def price_rows(model: str, provider: str | None = None, endpoint: str | None = None,
               when: dt.date | None = None) -> dict:
    """`prefixsim prices --format json`: the sheet as plain data."""
    return sheet_json(model_prices(model, provider, endpoint, when))


@dataclass
class Replayed:
    """One `prefixsim replay` as data: the replay as recorded (`result`), the what-if's comparison
    when one was asked for, and the lines reading skipped. `requests` is the per-request DataFrame
    (`--format csv`), `summary` the JSON summary, `text()` what the command prints."""

    result: Any                         # replay.run.ReplayResult
    what_if: Any = None                 # replay.run.Comparison, or None
    skipped: tuple = ()
    traffic: Any = field(default=None, repr=False)   # sources.traffic.Traffic, for the money lost

    @property
    def requests(self):
        """One row per request: `observed_*` and `predicted_*` columns under the names `run` uses."""
        return self.result.to_dataframe()

    @property
    def summary(self) -> dict:
        """The `--format json` summary (plain numbers; costs in USD)."""
        return replay_summary_json(self.result, self.what_if, self.skipped)["summary"]

    def to_json(self) -> dict:
        """The whole `--format json` document."""
        return replay_to_json(self.result, self.what_if, self.skipped)

    def text(self, width: int = 80, by: str = "day", requests: bool = False, markdown: bool = False) -> str:
        """What `prefixsim replay` prints in a table (or `markdown`): the money first, split `by`."""
        lost = replay_losses(self.traffic, self.result) if self.traffic is not None else None
        return replay_table(self.result, self.what_if, markdown, width, requests, lost, by)

    @property
    def what_if_requests(self):
        """The what-if's rows, as `requests` (None without a what-if)."""
        return None if self.what_if is None else self.what_if.variant.to_dataframe()

    def __repr__(self) -> str:
        s = self.summary
        parts = [f"{s['requests']:,} requests"]
        for key, what in (("cost_observed_usd", "observed"), ("cost_predicted_usd", "predicted")):
            if s.get(key) is not None:
                parts.append(f"{usd(s[key])} {what}")
        if self.what_if is not None:
            v = self.what_if.variant.summary.variant
            asked = ", ".join(f"{k}={getattr(v, k)}" for k in ("ttl", "model", "provider", "breakpoints")
                              if getattr(v, k) not in (None, "observed"))
            parts.append(f"what-if {asked} {usd(float(round(self.what_if.total.cost_variant, 4)))}")
        return f"<Replayed: {', '.join(parts)}>"


def replay(paths: Sequence[str] | str, source: str | None = None, ttl: str = "observed", model: str | None = None,
           provider: str = "observed", breakpoints: str = "observed", strict: bool = False, top: int = 5,
           workers: int = 1) -> Replayed:
    """`prefixsim replay PATHS`: real traffic (transcripts, request logs, cassettes, exports) under the
    rules of the provider each request went to, with the what-if of `ttl`, `model`, `provider` and
    `breakpoints` when any differs from "observed". A line it cannot use is skipped (`.skipped`),
    or with `strict` raised; a path it cannot read raises its UserError."""

    traffic = _traffic(paths, source, strict)
    base, what_if = replay_traffic(traffic, WhatIf(ttl=ttl, model=model, provider=provider, breakpoints=breakpoints),
                                   top, workers)
    return Replayed(base, what_if, traffic.skipped, traffic)


def advise(paths: Sequence[str] | str, strict: bool = False, price_date: dt.date | None = None, workers: int = 1):
    """`prefixsim advise PATHS`: for real traffic, its Advice (money by token class and cause, the
    changes a what-if replay shows would save it; `advice_text(a)` prints it); for scenario files or
    folders, the design search of those with `optimize:` (a list of GridResult, as `search_designs`)."""

    targets = design_targets([paths] if isinstance(paths, str) else list(paths))
    if targets is not None:
        return search_designs(list(targets.searched), price_date, workers)
    return run_advise(_traffic(paths, None, strict))


def _traffic(paths: Sequence[str] | str, source: str | None, strict: bool):
    """The requests of `paths`, read once, with the lines skipped (`.skipped`; `strict` raises on the
    first): `commands.common.read_traffic` without its stderr, for a notebook."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    with collecting(strict) as found:
        traffic = open_many(paths, source)
    if not len(traffic):
        raise UserError("no requests found", str(paths[0]) if paths else None)
    traffic.skipped = tuple(found.skipped)
    return traffic


def breakeven(study: str, model: str | None = None, params: Mapping[str, Any] | Sequence[str] | None = None,
              prices: str | None = None, price_date: dt.date | None = None, gaps: Sequence[float] | None = None,
              gaps_from: Sequence[str] = (), out: str | None = None, gpus: str | None = None):
    """`prefixsim breakeven STUDY`: the crossing points and the curve behind them (`.curve`, a
    DataFrame; `.text()` what the command prints; `.check` the scenario runner's agreement). `params`
    as a mapping (`{"children": 5, "turns": [2, 5]}`, a list compares) or KEY=VALUE strings. Files
    (CSV, PNG, SVG) are written only to `out`. `gpus`: a file of GPU rows (api-vs-selfhosted)."""

    if isinstance(params, Mapping):
        pairs = [f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in params.items()]
    else:
        pairs = list(params or ())
    spaced = ",".join(f"{g:g}" for g in gaps) if gaps else None
    return run_breakeven(study, out, model, prices, price_date, pairs, spaced, tuple(gaps_from), gpus=gpus)

