"""The notes of a replay whose retention is a documented range: its two ends' figures, and where the
printed figure is what public traffic shows (a measured rule: Gemini's best effort, DeepSeek's hours),
where that traffic and the documentation disagree and how certain a predicted read is."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prefixsim.replay.ranges import Range, disagreement, retention_range, unread
from prefixsim.report.layout import DEFAULT_WIDTH, wrap_block
from prefixsim.report.replay_grid import _pct, _usd

if TYPE_CHECKING:
    from prefixsim.replay.run import ReplayResult


def range_notes(result: ReplayResult, width: int = DEFAULT_WIDTH) -> list[str]:
    """The range's note, [] when no row's retention is a range."""
    span = retention_range(result.rows)   # audited rows have no prediction at either end
    if span is None:
        return []
    opt = f"at its optimistic end read share {_pct(span.read_share_optimistic)}, cost {_usd(span.cost_optimistic)}."
    if span.cost_pessimistic is None:
        return ["\n" + wrap_block(f"Retention is a documented range: the predicted figures are its pessimistic end; "
                                   f"{opt}", width) + "\n"]
    which = ", ".join(m for _, m in span.measured)
    best_effort = any(r.cost_predicted_pessimistic is None for r in result.rows
                      if (r.provider, r.model) in set(span.measured) and not r.audit)
    low = (f"{which}'s implicit caching is best effort (no hit is promised), so the range runs from nothing "
           f"read" if best_effort else f"{which}'s retention is documented as hours to days, so the range runs "
           "from an entry kept an hour idle")
    pages = "docs/rules.md#google-gemini" if best_effort else "docs/rules.md#deepseek"
    return ["\n" + wrap_block(
        f"Retention is a documented range: {low} (cost {_usd(span.cost_pessimistic)}) to every prefix kept "
        f"24 hours; the predicted figures are neither end but what public traffic shows ({pages})"
        + ("" if span.bound == "measured" else ", the other providers' figures the pessimistic end")
        + f"; {opt} Where the documentation and that traffic disagree: "
        + _disagreements(span) + "." + _unread(result, span),
        width, "") + "\n"]


def _disagreements(span: Range) -> str:
    """Each way the documentation and the traffic disagree, once, with the models it holds for."""
    said: dict[str, list[str]] = {}
    for p, m in span.measured:
        said.setdefault(disagreement(p, m), []).append(m)
    return "; ".join(f"{', '.join(models)}: {text}" for text, models in said.items())


def _unread(result: ReplayResult, span: Range) -> str:
    """That a read the printed figure predicts is not certain: how often public traffic read nothing
    within its retention, and how many requests here read nothing where a read was predicted (what
    neither the data nor the documentation can tell: the provider's routing, its eviction)."""
    seen = [u for u in (unread(p, m) for p, m in span.measured) if u is not None]
    if not seen:
        return ""
    keys = set(span.measured)
    here = sum(1 for r in result.rows if (r.provider, r.model) in keys and r.observed is not None
               and r.observed.cache_read == 0 < r.predicted.cache_read)
    missed, of = seen[0]
    return (f" A read it predicts is not certain: in that traffic {missed:,} of {of:,} follow-ups within the "
            "retention it shows read nothing, and nothing recorded tells which"
            + (f"; here {here:,} request{'s' if here > 1 else ''} read nothing where a read is predicted."
               if here else "."))
