"""A replay's figures at the ends of a documented retention range, for the notes and the JSON summary.

A row whose provider's retention is a range has a second prediction at the optimistic end. Its
printed figure is the range's pessimistic end, except under a rule that prints what public traffic
shows (`AutoRule.measured`): there the pessimistic end is the row's own walk at that end where it still
reads (DeepSeek's "hours to days", ReplayRow.cost_predicted_pessimistic), else its cost without caching
(Gemini's best-effort implicit cache, whose pessimistic end reads nothing)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prefixsim.replay.run import ReplayRow


@lru_cache(maxsize=256)
def disagreement(provider: str, model: str) -> str:
    """"" unless `model`'s printed figure under `provider` is what traffic shows (not a documented end):
    then where that traffic and the documentation disagree."""
    from prefixsim.errors import UserError   # lazy: with get_policy below, only a replay with a range needs it
    from prefixsim.providers.registry import get_policy   # lazy: a replay without a range loads no rules here

    try:
        return get_policy(provider, listed_only=False).describe(model).get("documentation vs traffic", "")
    except UserError:
        return ""


def measured(provider: str, model: str) -> bool:
    return bool(disagreement(provider, model))


def unread(provider: str, model: str) -> tuple[int, int] | None:
    """(follow-ups that read nothing, follow-ups) within the retention public traffic shows, for a
    model whose printed figure is what that traffic shows; None for any other."""
    # lazy: as disagreement's, only a replay with a measured range loads the rules here
    from prefixsim.errors import UserError   # lazy: with the rules
    from prefixsim.providers.automatic import AutomaticPolicy   # lazy: with the rules
    from prefixsim.providers.registry import get_policy   # lazy: with the rules

    try:
        policy = get_policy(provider, listed_only=False)
        rule = policy.rule_of(model) if isinstance(policy, AutomaticPolicy) else None
    except UserError:
        return None
    return rule.measured.unread if rule is not None and rule.measured is not None else None


@dataclass(frozen=True, slots=True)
class Range:
    bound: str                           # what the printed figures are: pessimistic, measured, or both (mixed)
    read_share_optimistic: float | None
    cost_optimistic: Decimal
    cost_pessimistic: Decimal | None     # the pessimistic end where the printed figure is measured; else None
    measured: tuple[tuple[str, str], ...]   # (provider, model) printed as measured


def retention_range(rows: tuple[ReplayRow, ...] | list[ReplayRow]) -> Range | None:
    """The range's figures over the predicted rows (None: no row's retention is a range). A request
    whose provider's retention is no range counts with its one figure at both ends."""
    ranged = [r for r in rows if not r.audit]
    if not any(r.predicted_optimistic is not None for r in ranged):
        return None
    opt = [r.predicted if r.predicted_optimistic is None else r.predicted_optimistic for r in ranged]
    prompt = sum(u.prompt_tokens for u in opt)
    cost = sum((r.cost_predicted if r.cost_predicted_optimistic is None else r.cost_predicted_optimistic
                for r in ranged), Decimal(0))
    shown = sorted({(r.provider, r.model) for r in ranged if r.predicted_optimistic is not None
                    and measured(r.provider, r.model)})
    low = None
    if shown:
        keys = set(shown)
        low = sum((_pessimistic(r) if (r.provider, r.model) in keys else r.cost_predicted for r in ranged), Decimal(0))
    others = any(r.predicted_optimistic is not None and (r.provider, r.model) not in set(shown) for r in ranged)
    bound = "mixed" if shown and others else "measured" if shown else "pessimistic"
    return Range(bound, sum(u.cache_read for u in opt) / prompt if prompt else None, cost, low, tuple(shown))


def _pessimistic(r: ReplayRow) -> Decimal:
    """A measured row's cost at its range's pessimistic end: its own walk there where that end still
    reads, else nothing read (a best-effort cache)."""
    if r.cost_predicted_pessimistic is not None:
        return r.cost_predicted_pessimistic
    return r.cost_no_cache if r.cost_no_cache is not None else r.cost_predicted
