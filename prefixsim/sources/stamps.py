"""ISO 8601 timestamps as the session formats write them (Claude Code, Codex, Gemini CLI), in epoch
seconds: one reading for every source that stamps its lines so."""
from __future__ import annotations

import datetime as dt

from prefixsim.errors import UserError, shown
from prefixsim.sources.record import LATEST_EPOCH


def parse_time(stamp: object) -> float:
    """An ISO timestamp in epoch seconds (UserError: not ISO text, or outside 1970-9999)."""
    if isinstance(stamp, str):
        try:
            when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            t = (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()
            if 0 <= t <= LATEST_EPOCH:
                return t
        except (ValueError, OverflowError):
            pass
    raise UserError(f"unreadable timestamp {shown(stamp)} (ISO 8601 text, from 1970 to 9999)")


def time_or_none(stamp: object) -> float | None:
    """`parse_time`'s reading, or None where it has none (a record kept whatever its stamp)."""
    try:
        return parse_time(stamp)
    except UserError:
        return None
