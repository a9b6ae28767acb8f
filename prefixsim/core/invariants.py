"""Cheap checks that the numbers add up, run on every result before anyone sees it. They restate
what the report claims in a second, independent way; a failure is a bug (exit 70), never a
user error. (Per-request conservation, uncached + write + read == prompt, is asserted where the
split is made, in runner.Simulator.step.)"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable

from prefixsim.model import Outcome, Usage

TOKEN_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
              "cache_read_input_tokens", "output_tokens")


def usage_is_sound(u: Usage) -> None:
    """No negative class; the prompt is the sum of its classes (Usage derives it, so check the parts)."""
    parts = (u.input_tokens, u.cache_write_5m, u.cache_write_1h, u.cache_read, u.output_tokens)
    assert min(parts) >= 0, u
    assert u.prompt_tokens == u.input_tokens + u.cache_write_5m + u.cache_write_1h + u.cache_read, u


def summary_matches_rows(summary: dict[str, Any], cost: Decimal, rows: list[dict[str, Any]],
                         outcomes: Iterable[Outcome]) -> None:
    """A variant's summary is the sum of its request rows, and its exact cost the sum of theirs."""
    outcomes = list(outcomes)
    assert summary["requests"] == len(rows) == len(outcomes)
    for k in TOKEN_KEYS:
        assert summary[k] == sum(r[k] for r in rows), k
    for o in outcomes:
        usage_is_sound(o.usage)
    # the total includes an explicit cache's storage, which the creating request carries
    assert cost == sum((o.cost_usd + o.storage_usd for o in outcomes), Decimal(0))
    assert summary.get("storage_usd", 0) == sum(r.get("storage_usd", 0) for r in rows) or \
        abs(summary["storage_usd"] - sum(r.get("storage_usd", 0) for r in rows)) < 1e-6 * len(rows)


def replay_adds_up(rows: Iterable[Any], cost_predicted: Decimal, streams: Iterable[tuple], causes: Iterable[tuple]) -> None:
    """A replay's total cost, per-stream counts and cause counts are those of its rows."""
    rows = list(rows)
    for r in rows:
        usage_is_sound(r.predicted)
    assert cost_predicted == sum((r.cost_predicted for r in rows), Decimal(0))
    assert sum(n for _, n, _, _ in streams) == len(rows)
    assert sum(n for _, n in causes) == sum(1 for r in rows if r.cause.kind)
