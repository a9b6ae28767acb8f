"""One replay: real traffic through the provider rules: predicted vs observed usage per request, the cause
of every miss, the naive mechanism as a baseline, and what-if variants of the same traffic.

Library API (notebooks): `replay(records, ...)` -> ReplayResult with `.rows`, `.summary` and
`.to_dataframe()`; `compare(base, variant)` -> cost and rebuild differences per stream.

A replay walks the traffic once and keeps one small row per request: each request is dropped once
the simulator has stepped it (the simulator and the naive baseline keep per-stream state only).
"""
from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Iterable, Sequence

from prefixsim.core.invariants import replay_adds_up
from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.errors import UserError
from prefixsim.model import Cause, Usage
from prefixsim.providers.others import RULE_CAUSES, cause_note
from prefixsim.providers.registry import get_policy
from prefixsim.replay.audit_causes import UsageCauses, lost_cost
from prefixsim.replay.naive import Naive
from prefixsim.replay.outside import outside_reads
from prefixsim.replay.price_sources import joined_sources
from prefixsim.replay.unpriced import Lenient, lenient, missing, unclassed_why
from prefixsim.replay.result import (  # noqa: F401  (re-exported: the replay's result types live in result.py)
    REBUILD_CAUSES, STEPPED_UNSEEN, Figures, ReplayResult, ReplayRow, Summary)
from prefixsim.replay.whatif import BREAKPOINT_POLICIES, TTL_CHOICES, WhatIf, apply_variant
from prefixsim.sources.record import Record
from prefixsim.sources.traffic import Traffic

def _figures(pairs: Iterable[tuple[int, Usage, Usage]]) -> Figures:
    exact = compared = err = obs_read = read = prompt = 0
    for pred_read, obs, pred in pairs:
        compared += 1
        exact += pred_read == obs.cache_read
        err += abs(pred_read - obs.cache_read)
        obs_read += obs.cache_read
        read += pred_read
        prompt += obs.prompt_tokens
    return Figures(exact, compared, err / obs_read if obs_read else None, read / prompt if prompt else None)


def replay(records: Sequence[Record] | Traffic, variant: WhatIf = WhatIf(), prices: PriceBook | Lenient | None = None,
           top: int = 5, ranges: bool = True) -> ReplayResult:
    """Replays `records` (any order; Traffic is walked, not held) under `variant`; compares every
    prediction with the observation, each request priced at the rates of the provider it was sent to.
    Without `ranges`, a retention range's optimistic end is not walked (rows without it)."""
    traffic = records if isinstance(records, Traffic) else Traffic.of(records)
    walk = Walk(traffic, variant, prices, ranges)
    for i, rec in enumerate(traffic):
        walk.step(i, rec)
    return walk.result(top)


@dataclass(frozen=True, slots=True)
class Facts:
    """What a replay must know of the whole traffic before walking it, from the requests' heads (a few
    fields each): the streams that wrote 1h, whether every output count is final (else none is
    priced), the price clock's start (the first request's instant). A shard is given its traffic's."""

    hour_streams: frozenset[str]
    output_in_cost: bool
    start: dt.datetime | None

    @property
    def date(self) -> dt.date | None:
        return self.start.date() if self.start is not None else None

    @classmethod
    def of(cls, traffic: Traffic) -> Facts:
        hour_streams: set[str] = set()
        output_in_cost, start = True, None
        for h in traffic.heads():
            if h.wrote_1h:
                hour_streams.add(h.stream)
            output_in_cost = output_in_cost and h.output_final
            if start is None:
                start = _instant(h.timestamp)
        return cls(frozenset(hour_streams), output_in_cost, start)


class Walk:
    """One replay stepped a request at a time (`replay` walks one). Several can share one pass over
    the traffic (advise.one_pass.replay_with_losses: the recorded design, a what-if and the oracle): each pass
    re-reads a transcript's calls and calibrates them again, which the walks need not repeat."""

    def __init__(self, traffic: Traffic, variant: WhatIf = WhatIf(), prices: PriceBook | Lenient | None = None,
                 ranges: bool = True, keep: bool = True, facts: Facts | None = None) -> None:
        if variant.ttl not in TTL_CHOICES:
            raise UserError(f"--ttl must be one of {', '.join(TTL_CHOICES)}, got {variant.ttl!r}")
        if variant.breakpoints not in BREAKPOINT_POLICIES:
            raise UserError(f"--breakpoints must be one of {', '.join(BREAKPOINT_POLICIES)}, "
                            f"got {variant.breakpoints!r}")
        f = facts if facts is not None else Facts.of(traffic)   # walks of one traffic share them
        hour_streams, output_in_cost = set(f.hour_streams), f.output_in_cost
        self.variant, self.ranges, self.output_in_cost = variant, ranges, output_in_cost
        # A model without a price is still replayed: its costs are missing, never the run (replay/unpriced.py).
        self.prices = lenient(PriceBook(when=f.date, start=f.start) if prices is None else prices)
        # One simulator per provider: providers share no cache, and each prices with its own table. A
        # retention that is a documented range (OpenAI, DeepSeek) walks a second one at its optimistic end.
        self.sims: dict[str, tuple[Simulator, Simulator | None, Simulator | None]] = {}
        self.naive = Naive(hour_streams)
        self.usage_causes = UsageCauses(hour_streams)
        self.rows: list[ReplayRow] = []
        self.keep = keep   # False: each row is returned and dropped (a walk whose rows are read once, the oracle's)
        self.price_sources: set[str] = set()
        # the calls stepped with no row of their own, counted by the Summary field that says so
        self.unseen = dict.fromkeys(STEPPED_UNSEEN, 0)
        self.workspaces: set[str] = set()   # the accounts whose caches the requests went to

    def _simulators(self, provider: str, model: str) -> tuple[Simulator, Simulator | None, Simulator | None]:
        pair = self.sims.get(provider)
        if pair is None:
            prices, ranges = self.prices, self.ranges
            if self.variant.model:   # a what-if model is one the user typed: the tables must list it
                get_policy(provider).describe(self.variant.model)
            # a recorded model the tables lack was really served: it replays under the provider's
            # rule for unlisted models, said so (providers/unlisted.py)
            sim = Simulator(provider=provider, tokenizer="approx", prices=prices,
                            policy=get_policy(provider, listed_only=False))
            alt = (Simulator(provider=provider, tokenizer="approx", prices=prices,
                             policy=get_policy(provider, "optimistic", listed_only=False))
                   if ranges and sim.policy.has_range() else None)
            # a printed figure that is neither end of a range whose pessimistic end still reads: a
            # third walk there (with the provider's first model's rule, as its rules are its models')
            low = (Simulator(provider=provider, tokenizer="approx", prices=prices,
                             policy=get_policy(provider, "pessimistic", listed_only=False))
                   if alt is not None and _reads_at_both_ends(sim.policy, model) else None)
            pair = self.sims[provider] = (sim, alt, low)
        return pair

    def step(self, i: int, rec: Record) -> ReplayRow:
        """Request `i` of the walk: stepped, its row kept and returned."""
        variant, prices, output_in_cost, unseen = self.variant, self.prices, self.output_in_cost, self.unseen
        if rec.audit:
            row = _audited(i, rec, prices, self.price_sources, output_in_cost, self.usage_causes)
            if self.keep:
                self.rows.append(row)
            return row
        nv = self.naive.read(rec)
        self.workspaces.add(rec.call.request.workspace)
        call = apply_variant(rec.call, variant, rec.main)
        if not output_in_cost and call.output_tokens:
            call = replace(call, output_tokens=0)
        provider = rec.provider if variant.provider == "observed" else variant.provider
        try:
            pair = self._simulators(provider, call.request.model)
            sim, alt, low = pair
            walkers = tuple(s for s in pair if s is not None)
            at = _instant(rec.timestamp) or prices.start   # each request priced at its own time
            unseen["earlier_runs"] += bool(rec.earlier)
            unseen["earlier_calls"] += len(rec.earlier)
            unseen["kept_outside"] += bool(rec.kept)
            unseen["absent_conversations"] += bool(rec.absent)
            unseen["prompt_suggestions"] += bool(rec.ended)
            for c in (*rec.earlier, *rec.kept, *rec.absent, *rec.ended):   # an earlier run of a recording (sources/earlier_run.py),
                # traffic outside the data keeping a shared entry warm (Record.kept), a conversation whose
                # transcript is not in the data (Record.absent): cache only
                for s in walkers:
                    s.step(apply_variant(c, variant, rec.main), at)
            out = sim.step(call, at)
            if out.cause.kind in RULE_CAUSES and (note := cause_note(sim.policy, call.request.model, out.cause.kind)):
                out = replace(out, cause=Cause(out.cause.kind, "; ".join(x for x in (out.cause.detail, note) if x)))
            opt = alt.step(call, at) if alt is not None else None
            pes = low.step(call, at) if low is not None else None
            for it in rec.iterations:   # server tools: more model iterations under the same usage
                it = apply_variant(it, variant, rec.main)
                out = _joined(out, sim.step(it, at))
                opt = _joined(opt, alt.step(it, at)) if alt is not None and opt is not None else opt
                pes = _joined(pes, low.step(it, at)) if low is not None and pes is not None else pes
            for c in rec.unlogged:   # proven by this request's observation: they shape later requests only
                for s in walkers:
                    s.step(apply_variant(c, variant, rec.main), at)
            self.price_sources.add(out.price_source)
            obs = rec.observed
            # What was paid: the recorded model at the recorded provider's prices, whatever the variant.
            cost_obs = None if obs is None else prices.rates(rec.call.request.model, rec.provider, at,
                                                             rec.call.request.endpoint or None)
            if cost_obs is not None:
                self.price_sources.add(cost_obs.source)
            priced = not missing(out.price_source) and (cost_obs is None or not missing(cost_obs.source))
        except UserError as e:   # e.g. a what-if model the provider's tables do not know: name the line
            raise e.located(rec.path, rec.line) from None
        if obs is not None:
            if not output_in_cost:
                obs = replace(obs, output_tokens=0)
            cost_obs = cost_obs.cost(obs) + out.storage_usd
        row = ReplayRow(i, rec.request_id, rec.timestamp, call.stream, call.request.model, rec.observed, out.usage,
                        out.cause, cost_obs, out.cost_usd + out.storage_usd, nv, rec.path, rec.line, provider,
                        opt and opt.usage, opt and opt.cost_usd + opt.storage_usd, out.storage_usd, priced,
                        billed_usd=rec.billed_usd, cache_discount_usd=rec.cache_discount_usd,
                        cost_no_cache=out.cost_no_cache_usd + out.storage_usd,
                        cost_predicted_pessimistic=pes and pes.cost_usd + pes.storage_usd)
        if self.keep:
            self.rows.append(row)
        return row

    def result(self, top: int = 5) -> ReplayResult:
        """The rows stepped so far and their summary (`top` largest mismatches); a walk that kept none
        has none to give."""
        if not self.keep:
            raise ValueError("a walk made with keep=False keeps no rows")
        rows = self.rows
        summary = replace(_summarize(rows, self.variant, self.price_sources, self.output_in_cost, top,
                                     self.prices.missing), **self.unseen,
                          accounts=named_accounts(self.workspaces))
        replay_adds_up(rows, summary.cost_predicted_usd, summary.streams, summary.causes)
        return ReplayResult(tuple(rows), summary)


def named_accounts(workspaces) -> tuple[str, ...]:
    """The named accounts among the workspaces requests went to ("" is the one every replay has unless
    its reader split the traffic: a shard holds one of them, the merged result all)."""
    return tuple(sorted({w for w in workspaces if w}))


def _reads_at_both_ends(policy, model: str) -> bool:
    """Whether `model`'s printed figure is what traffic shows (a measured rule) over a documented range
    whose pessimistic end still reads (a TTL above 0): its pessimistic end is then a walk of its own,
    not the cost with nothing read (Gemini's best effort)."""
    from prefixsim.providers.automatic import AutomaticPolicy   # lazy: only a ranged provider asks

    if not isinstance(policy, AutomaticPolicy):
        return False
    rule = policy.rule_of(model)
    return rule.measured is not None and rule.ttl > 0


def _audited(i: int, rec: Record, prices: PriceBook, price_sources: set[str], output_in_cost: bool,
             causes: UsageCauses) -> ReplayRow:
    """A request recorded by its usage only: the observation priced, nothing simulated (no prompt
    to simulate; a made-up one would give made-up reads), its cause and its loss told from its
    stream's usage and timing (replay/audit_causes.py)."""
    obs, cost, lost, unclassed, no_cache = rec.observed, None, None, "", None
    cause, missed = causes.cause(rec)
    if obs is not None:
        try:
            rates = prices.rates(rec.call.request.model, rec.provider, _instant(rec.timestamp) or prices.start,
                                 rec.call.request.endpoint or None)
        except UserError:   # an audit of tokens needs no price: the cost is left out and said so
            price_sources.add(f"no price for {rec.provider} {rec.call.request.model}: its cost is left out")
        else:
            price_sources.add(rates.source)
            # a model nothing prices (replay/unpriced.py), or tokens its text rates would misprice: no cost
            if not missing(rates.source) and not rec.unpriced:
                paid = obs if output_in_cost else replace(obs, output_tokens=0)
                cost, lost, no_cache = rates.cost(paid), lost_cost(paid, missed, rates), rates.cost_without_cache(paid)
            unclassed = "" if missing(rates.source) else rec.unpriced
    return ReplayRow(i, rec.request_id, rec.timestamp, rec.call.stream, rec.call.request.model, obs, Usage(),
                     cause, cost, Decimal(0), None, rec.path, rec.line, rec.provider, audit=True,
                     priced=obs is None or cost is not None, lost_usd=lost, lost_tokens=missed, unpriced=unclassed,
                     cost_no_cache=no_cache)   # with no cache: what caching saved is told from usage too


def _joined(first, later):
    """One request's outcome over its iterations: usage and costs summed, the first one's cause."""
    u, v = first.usage, later.usage
    usage = Usage(*(getattr(u, k) + getattr(v, k) for k in
                    ("input_tokens", "cache_write_5m", "cache_write_1h", "cache_read", "output_tokens")))
    return replace(first, usage=usage, cost_usd=first.cost_usd + later.cost_usd,
                   cost_no_cache_usd=first.cost_no_cache_usd + later.cost_no_cache_usd)


def _instant(stamp: str) -> dt.datetime | None:
    """A request's ISO timestamp as a UTC instant (None when the source gave none or it does not
    parse): a replay prices each request at its own time, so it gives the same figures whenever it
    runs (logs without timestamps: the price book's clock start)."""
    if not stamp:
        return None
    try:
        t = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00") if stamp.endswith("Z") else stamp)
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)


def _summarize(rows: list[ReplayRow], variant: WhatIf, price_sources: set[str], output_in_cost: bool,
               top: int, why: dict[tuple[str, str | None], str] | None = None) -> Summary:
    seen = [r for r in rows if r.observed is not None]
    judged = [r for r in seen if not r.audit]   # audited rows have no prediction to score
    mine = _figures((r.predicted.cache_read, r.observed, r.predicted) for r in judged)  # type: ignore[misc]
    base = _figures((r.naive_read or 0, r.observed, r.predicted) for r in judged)  # type: ignore[misc]
    # The observed figures stand beside the predicted ones: over the same rows, unless nothing was
    # predicted (an audit: then they are the whole answer).
    beside = judged or seen
    prompt = sum(r.observed.prompt_tokens for r in beside)  # type: ignore[union-attr]
    share_obs = sum(r.observed.cache_read for r in beside) / prompt if prompt else None  # type: ignore[union-attr]
    all_prompt = sum(r.predicted.prompt_tokens for r in rows if not r.audit)
    mine = replace(mine, read_share=sum(r.predicted.cache_read for r in rows) / all_prompt if all_prompt else None)
    causes: dict[str, int] = defaultdict(int)
    streams: dict[str, list] = {}
    for r in rows:
        if r.cause.kind:
            causes[r.cause.kind] += 1
        s = streams.setdefault(r.stream, [0, Decimal(0) if seen else None, Decimal(0)])
        s[0] += 1
        if r.cost_observed is not None:
            s[1] += r.cost_observed
        s[2] += r.cost_predicted
    worst = sorted((r for r in judged if r.read_error), key=lambda r: (-abs(r.read_error or 0), r.index))[:top]
    sources = joined_sources(price_sources)
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    for r in rows:
        if not r.priced:
            counts[(r.model, r.provider, r.unpriced)] += 1
    unpriced = tuple((m, p, n, unclassed_why(u) if u else (why or {}).get((m, p), ""))
                     for (m, p, u), n in sorted(counts.items()))
    return Summary(len(rows), len(seen), share_obs, mine, base,
                   sum((r.cost_observed or Decimal(0) for r in beside), Decimal(0)) if seen else None,
                   sum((r.cost_predicted for r in rows), Decimal(0)),
                   tuple(sorted(causes.items())), tuple((k, v[0], v[1], v[2]) for k, v in streams.items()),
                   tuple(worst), variant, sources, output_in_cost, outside_reads(judged), frozenset(price_sources),
                   unpriced, sum(r.audit for r in rows))
