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
from prefixsim.model import Cause, CauseKind, Usage
from prefixsim.providers.others import RULE_CAUSES, cause_note
from prefixsim.providers.registry import get_policy
from prefixsim.replay.audit_causes import UsageCauses, lost_cost
from prefixsim.replay.naive import Naive
from prefixsim.replay.outside import Outside, outside_reads
from prefixsim.replay.price_sources import joined_sources
from prefixsim.replay.unpriced import Lenient, lenient, missing, unclassed_why
from prefixsim.replay.whatif import BREAKPOINT_POLICIES, TTL_CHOICES, WhatIf, apply_variant
from prefixsim.sources.record import Record
from prefixsim.sources.traffic import Traffic

#: Misses of something that was cached before: each one rebuilds a prefix the traffic had paid for.
REBUILD_CAUSES = frozenset({CauseKind.TTL_EXPIRED, CauseKind.PREFIX_CHANGED, CauseKind.COMPACTION,
                            CauseKind.MODEL_SWITCH, CauseKind.NOT_YET_AVAILABLE, CauseKind.LOOKBACK_EXCEEDED,
                            CauseKind.EVICTED})


@dataclass(frozen=True, slots=True)
class ReplayRow:
    """One request: observed usage (None when the log has none), prediction, cause, costs."""

    index: int
    request_id: str
    timestamp: str
    stream: str
    model: str
    observed: Usage | None
    predicted: Usage
    cause: Cause
    cost_observed: Decimal | None
    cost_predicted: Decimal
    naive_read: int | None
    path: str
    line: int
    provider: str = "anthropic"   # whose rules and prices predicted this row
    #: The prediction under the optimistic end of the provider's retention range (None: no range;
    #: `predicted` is then the only figure, else its pessimistic end).
    predicted_optimistic: Usage | None = None
    cost_predicted_optimistic: Decimal | None = None
    storage_usd: Decimal = Decimal(0)   # a Gemini explicit cache's, on its creation; in both costs
    #: False when nothing could price the request's model: its costs are $0 in the sums and missing
    #: in the output (replay/unpriced.py).
    priced: bool = True
    #: The source recorded usage but no prompt: `predicted` is empty and costs nothing, and every
    #: prediction column shows as not available (Record.audit).
    audit: bool = False
    #: An audited row's cost of the tokens its stream had cached that it did not read: what reading
    #: them would have saved, as its cause (inferred from usage) says (replay/audit_causes.py).
    lost_usd: Decimal | None = None
    lost_tokens: int = 0
    #: What the router billed for the request (Record.billed_usd), beside the computed prices.
    billed_usd: Decimal | None = None
    #: What the router says caching saved on it (Record.cache_discount_usd), beside billed_usd.
    cache_discount_usd: Decimal | None = None
    #: The priced model's tokens its rates cannot price (Record.unpriced, e.g. "audio tokens"): the
    #: row's cost is missing for that reason, not for want of a price.
    unpriced: str = ""
    #: The cost had nothing been read (a best-effort cache's pessimistic end: Gemini implicit caching).
    cost_no_cache: Decimal | None = None
    #: The cost at the pessimistic end of a range whose printed figure is neither end and whose pessimistic
    #: end still reads (a measured rule over a documented retention: DeepSeek's "hours to days").
    cost_predicted_pessimistic: Decimal | None = None

    @property
    def read_error(self) -> int | None:
        return None if self.observed is None else self.predicted.cache_read - self.observed.cache_read


@dataclass(frozen=True, slots=True)
class Figures:
    """Accuracy of one predictor of cache_read against the observed values (token- and request-weighted)."""

    exact: int
    compared: int
    wape: float | None          # sum |pred - obs| / sum obs, token-weighted
    read_share: float | None    # sum read / sum prompt tokens, token-weighted

    @property
    def exact_rate(self) -> float | None:
        return self.exact / self.compared if self.compared else None


@dataclass(frozen=True, slots=True)
class Summary:
    requests: int
    observed_requests: int
    read_share_observed: float | None
    prefixsim: Figures
    naive: Figures
    cost_observed_usd: Decimal | None
    cost_predicted_usd: Decimal
    causes: tuple[tuple[str, int], ...]
    streams: tuple[tuple[str, int, Decimal | None, Decimal], ...]   # stream, requests, observed, predicted $
    largest_mismatches: tuple[ReplayRow, ...]
    variant: WhatIf
    price_source: str
    output_in_cost: bool
    outside: Outside = Outside()   # reads of a cache no request in the data wrote (replay/outside.py)
    price_sources: frozenset[str] = frozenset()   # each source as priced; `price_source` joins them
    #: (model, provider, requests, why) of each model nothing could price: those requests' costs are missing.
    unpriced: tuple[tuple[str, str, int, str], ...] = ()
    audited: int = 0   # rows with usage but no prompt (ReplayRow.audit): in the observed figures only
    #: Recordings replayed after an earlier run of the same test (sources/earlier_run.py), and its calls.
    earlier_runs: int = 0
    earlier_calls: int = 0
    #: Requests before which an entry was taken as kept warm by traffic outside the data (Record.kept).
    kept_outside: int = 0
    #: Requests replayed after a call of a conversation whose transcript is not in the data (Record.absent).
    absent_conversations: int = 0
    #: New user turns replayed after the prompt-suggestion request of the turn before (Record.ended).
    prompt_suggestions: int = 0
    #: --since/--until as given ("" when none) and how many replayed requests fell outside it (replay/window.py).
    window: str = ""
    left_out: int = 0


#: Summary fields counting calls stepped into the cache with no row (summed across shards as they are).
STEPPED_UNSEEN = ("earlier_runs", "earlier_calls", "kept_outside", "absent_conversations",
                  "prompt_suggestions")


@dataclass(frozen=True, slots=True)
class ReplayResult:
    rows: tuple[ReplayRow, ...]
    summary: Summary

    def to_dataframe(self):
        """One row per request (run's column names under observed_ / predicted_; NaN: no usage logged)."""
        import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

        # lazy: a replay printed as text never loads the JSON document
        from prefixsim.replay.output import usage_dict as _usage_dict

        recs = []
        for r in self.rows:
            o, p = r.observed, r.predicted
            na = r.audit   # no prompt recorded: the predicted columns are empty, not zero
            recs.append({"index": r.index, "request_id": r.request_id, "timestamp": r.timestamp,
                         "stream": r.stream, "model": r.model,
                         **{f"observed_{k}": (None if o is None else v) for k, v in _usage_dict(o or p).items()},
                         **{f"predicted_{k}": None if na else v for k, v in _usage_dict(p).items()},
                         "predicted_cache_write_5m_tokens": None if na else p.cache_write_5m,
                         "predicted_cache_write_1h_tokens": None if na else p.cache_write_1h,
                         "naive_cache_read_input_tokens": r.naive_read, "cause": r.cause.kind or None,
                         "cause_detail": r.cause.detail or None,
                         "cost_observed_usd": None if r.cost_observed is None else float(r.cost_observed),
                         "cost_predicted_usd": None if na else float(r.cost_predicted)})
        return pd.DataFrame.from_records(recs)


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
    if variant.ttl not in TTL_CHOICES:
        raise UserError(f"--ttl must be one of {', '.join(TTL_CHOICES)}, got {variant.ttl!r}")
    if variant.breakpoints not in BREAKPOINT_POLICIES:
        raise UserError(f"--breakpoints must be one of {', '.join(BREAKPOINT_POLICIES)}, got {variant.breakpoints!r}")
    traffic = records if isinstance(records, Traffic) else Traffic.of(records)
    # What the walk needs to know first, from the requests' heads (a few fields each).
    hour_streams: set[str] = set()
    output_in_cost, date, start = True, None, None
    for h in traffic.heads():
        if h.wrote_1h:
            hour_streams.add(h.stream)
        output_in_cost = output_in_cost and h.output_final
        if start is None:
            start = _instant(h.timestamp)
            date = start.date() if start is not None else None
    # A model without a price is still replayed: its costs are missing, never the run (replay/unpriced.py).
    prices = lenient(PriceBook(when=date, start=start) if prices is None else prices)
    # One simulator per provider: providers share no cache, and each prices with its own table. A
    # retention that is a documented range (OpenAI, DeepSeek) walks a second one at its optimistic end.
    sims: dict[str, tuple[Simulator, Simulator | None, Simulator | None]] = {}
    naive = Naive(hour_streams)
    usage_causes = UsageCauses(hour_streams)
    rows: list[ReplayRow] = []
    price_sources: set[str] = set()
    # the calls stepped with no row of their own, counted by the Summary field that says so
    unseen = dict.fromkeys(STEPPED_UNSEEN, 0)
    for i, rec in enumerate(traffic):
        if rec.audit:
            rows.append(_audited(i, rec, prices, price_sources, output_in_cost, usage_causes))
            continue
        nv = naive.read(rec)
        call = apply_variant(rec.call, variant, rec.main)
        if not output_in_cost and call.output_tokens:
            call = replace(call, output_tokens=0)
        provider = rec.provider if variant.provider == "observed" else variant.provider
        try:
            pair = sims.get(provider)
            if pair is None:
                if variant.model:   # a what-if model is one the user typed: the tables must list it
                    get_policy(provider).describe(variant.model)
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
                       if alt is not None and _reads_at_both_ends(sim.policy, call.request.model) else None)
                pair = sims[provider] = (sim, alt, low)
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
            price_sources.add(out.price_source)
            obs = rec.observed
            # What was paid: the recorded model at the recorded provider's prices, whatever the variant.
            cost_obs = None if obs is None else prices.rates(rec.call.request.model, rec.provider, at,
                                                             rec.call.request.endpoint or None)
            if cost_obs is not None:
                price_sources.add(cost_obs.source)
            priced = not missing(out.price_source) and (cost_obs is None or not missing(cost_obs.source))
        except UserError as e:   # e.g. a what-if model the provider's tables do not know: name the line
            raise e.located(rec.path, rec.line) from None
        if obs is not None:
            if not output_in_cost:
                obs = replace(obs, output_tokens=0)
            cost_obs = cost_obs.cost(obs) + out.storage_usd
        rows.append(ReplayRow(i, rec.request_id, rec.timestamp, call.stream, call.request.model, rec.observed, out.usage,
                        out.cause, cost_obs, out.cost_usd + out.storage_usd, nv, rec.path, rec.line, provider,
                        opt and opt.usage, opt and opt.cost_usd + opt.storage_usd, out.storage_usd, priced,
                        billed_usd=rec.billed_usd, cache_discount_usd=rec.cache_discount_usd,
                        cost_no_cache=out.cost_no_cache_usd + out.storage_usd,
                        cost_predicted_pessimistic=pes and pes.cost_usd + pes.storage_usd))
    summary = replace(_summarize(rows, variant, price_sources, output_in_cost, top, prices.missing),
                      **unseen)
    replay_adds_up(rows, summary.cost_predicted_usd, summary.streams, summary.causes)
    return ReplayResult(tuple(rows), summary)


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
