"""How a replay names what priced it: every price source once, each origin with its models under it
(traffic over many days is priced at each request's own date)."""
from __future__ import annotations

from prefixsim.core.pricing import AS_OF


def joined_sources(sources: set[str]) -> str:
    """The price sources of a replay, each origin named once and each model once under it: traffic over
    many days is priced at each request's own date, and naming every source and date in full made the
    line as long as the calendar."""
    dates: dict[str, dict[str, list[str]]] = {}
    for s in sources:
        head, sep, when = s.rpartition(AS_OF)
        origin, colon, item = (head if sep else s).partition(": ")
        if not colon:
            origin, item = "", origin
        dates.setdefault(origin, {}).setdefault(item, []).extend([when] if sep else [])
    out = []
    for origin, items in sorted(dates.items()):
        parts = []
        for item, when in sorted(items.items()):
            when = sorted(set(when))
            if len(when) > 1:   # dates, or times where a price changes during the day (DeepSeek)
                unit = "time" if any(" UTC" in w for w in when) else "date"
                parts.append(f"{item}, prices at each request's {unit} ({when[0]} to {when[-1]}, {len(when)} {unit}s)")
            else:
                parts.append(f"{item}{AS_OF}{when[0]}" if when else item)
        out.append(f"{origin}: " + "; ".join(parts) if origin else "; ".join(parts))
    return "; ".join(out)
