"""Why an audited request (usage recorded, prompt not: an OpenTelemetry span, a gateway row without
messages) did not read what was cached, told from its usage and timing alone, and what that cost.

Without a prompt nothing can be predicted, but the stream's usage still says a lot: a request that reads
less than its stream's previous request kept lost that difference (on Claude what it read and wrote; on
an automatic cache, which writes without saying so, also its whole prompt from the minimum on, in the
provider's units); if the gap was
longer than the provider's retention the entry had expired, if the prompt is below the provider's
minimum nothing could be cached, and otherwise the prefix changed or the entry was evicted (which of
the two, and where, only the prompt could tell; the cause says so). The money lost is the request's
observed cost less its cost had the lost tokens been read."""
from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any, Iterable

from prefixsim.errors import UserError
from prefixsim.model import Cause, CauseKind, Usage
from prefixsim.providers.registry import get_policy
from prefixsim.providers.tables import CLAUDE_PLATFORMS, anthropic_lifetime
from prefixsim.sources.record import Record

_UNKNOWN = "the prompt is not recorded, so whether the prefix changed or the entry was evicted is unknown"


class UsageCauses:
    """Fed audited records in time order; per stream and model, what the previous request kept."""

    def __init__(self, hour_streams: set[str]) -> None:
        self.hour_streams = hour_streams
        self.last: dict[tuple[str, str], tuple[float, int]] = {}
        self._limits: dict[tuple[str, str, bool], tuple[float, int, str, int]] = {}

    def cause(self, rec: Record) -> tuple[Cause, int]:
        """(the cause, the tokens the previous request kept that this one did not read)."""
        obs = rec.observed
        if obs is None:
            return Cause(), 0
        key = (rec.call.stream, rec.call.request.model)
        prev = self.last.get(key)
        ttl, minimum, retention, unit = self.limits(rec.provider, rec.call.request.model, rec.call.stream in self.hour_streams)
        prompt = obs.prompt_tokens
        kept_now = obs.cache_read + obs.cache_creation
        if unit and prompt >= minimum:   # an automatic cache kept the prompt, its reads rounded to the unit
            kept_now = max(kept_now, prompt - prompt % unit)
        t = rec.call.t
        self.last[key] = (t, kept_now)
        below = obs.cache_read == 0 and prompt < minimum
        if prev is None or prev[1] == 0:
            if below:
                return Cause(CauseKind.BELOW_MINIMUM, f"{prompt:,} tokens < {minimum:,}; from usage"), 0
            return (Cause(CauseKind.COLD, "first request of its stream; from usage") if prev is None and not obs.cache_read
                    else Cause()), 0
        missed = max(0, min(prev[1], prompt) - obs.cache_read)
        if not missed:
            return Cause(), 0
        gap = t - prev[0]
        if below:   # too short to be cached at all: nothing was lost to the cache
            return Cause(CauseKind.BELOW_MINIMUM, f"{prompt:,} tokens < {minimum:,}; from usage"), 0
        if gap >= ttl:
            return Cause(CauseKind.TTL_EXPIRED, f"idle {gap:,.0f} s > {retention}; from usage"), missed
        return Cause(CauseKind.PREFIX_CHANGED, f"read {obs.cache_read:,} of the {prev[1]:,} kept {gap:,.0f} s "
                                               f"earlier; {_UNKNOWN}"), missed

    def limits(self, provider: str, model: str, hour: bool) -> tuple[float, int, str, int]:
        """(the idle time past which an entry is certainly gone, the cacheable minimum, how to name the
        first, the unit an automatic cache keeps a prompt in: 0 on Claude, which reports its writes) of
        a provider and model: Claude's TTL (1h where the stream wrote 1h), else the optimistic end of
        the provider's retention (a gap past it expired at both ends)."""
        k = (provider, model, hour)
        if k not in self._limits:
            self._limits[k] = _limits(provider, model, hour)
        return self._limits[k]


def _limits(provider: str, model: str, hour: bool) -> tuple[float, int, str, int]:
    try:
        policy = get_policy(provider, "optimistic", listed_only=False)
    except UserError:   # a provider with no rules at all: the stated default's figures
        from prefixsim.providers.others import STATED_DEFAULT   # lazy: only a provider without rules needs it

        return (STATED_DEFAULT.ttl_optimistic, STATED_DEFAULT.min_tokens, f"{STATED_DEFAULT.ttl_optimistic:.0f} s",
                STATED_DEFAULT.increment)
    if policy.name in CLAUDE_PLATFORMS:
        ttl = "1h" if hour else "5m"
        return anthropic_lifetime(ttl), int(policy.minimum(model).value), f"ttl {ttl}", 0  # type: ignore[attr-defined]
    rule = policy.rule_of(model)  # type: ignore[attr-defined]
    return rule.ttl_optimistic, rule.min_tokens, f"{rule.ttl_optimistic:.0f} s retained at most", max(1, rule.increment)


def lost_cost(obs: Usage, missed: int, rates) -> Decimal:
    """What reading the `missed` tokens would have saved: the observed cost less the cost with them
    moved from the writes (a rebuild writes them again) and then the uncached input to the reads."""
    if not missed:
        return Decimal(0)
    w5 = min(missed, obs.cache_write_5m)
    w1 = min(missed - w5, obs.cache_write_1h)
    inp = min(missed - w5 - w1, obs.input_tokens)
    read = replace(obs, cache_write_5m=obs.cache_write_5m - w5, cache_write_1h=obs.cache_write_1h - w1,
                   input_tokens=obs.input_tokens - inp, cache_read=obs.cache_read + w5 + w1 + inp)
    return max(Decimal(0), rates.cost(obs) - rates.cost(read))


def audit_losses(rows: Iterable[Any]) -> list[tuple[str, int, int, Decimal | None, Decimal | None]]:
    """(cause, requests, tokens not read, their requests' cost, the saving missed) over the audited
    rows that have a cause, by cause; a cost is None where no row of the cause could be priced."""
    acc: dict[str, list] = {}
    for r in rows:
        if r.audit and r.cause.kind:
            a = acc.setdefault(r.cause.kind, [0, 0, None, None])
            a[0] += 1
            a[1] += r.lost_tokens
            if r.cost_observed is not None:
                a[2] = (a[2] or Decimal(0)) + r.cost_observed
                a[3] = (a[3] or Decimal(0)) + (r.lost_usd or Decimal(0))
    return [(k, *v) for k, v in sorted(acc.items())]
