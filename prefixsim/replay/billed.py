"""What a router says it charged and saved (OpenRouter's `usage.cost` and `cache_discount`), summed
once over a replay's rows for both the JSON summary and the text notes."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prefixsim.replay.run import ReplayRow


@dataclass(frozen=True, slots=True)
class Billed:
    requests: int          # requests with a billed cost
    billed: Decimal        # the router's charge for them
    observed: Decimal      # the same observed tokens at genai-prices' rates
    discounted: int        # requests with a cache_discount
    discount: Decimal      # its sum (negative where writes cost more than input)


def router_billing(rows: Iterable[ReplayRow]) -> Billed | None:
    """The sums, or None when no request carries either figure."""
    n = k = 0
    billed = observed = discount = Decimal(0)
    for r in rows:
        if r.billed_usd is not None:
            n += 1
            billed += r.billed_usd
            observed += r.cost_observed or Decimal(0)
        if r.cache_discount_usd is not None:
            k += 1
            discount += r.cache_discount_usd
    return Billed(n, billed, observed, k, discount) if n or k else None
