"""`replay --since/--until`: the requests of a time window. The whole traffic is replayed (a request
before the window still warms the cache a request in it reads), then only the window's requests are
kept and summed, so a window's figures are those of its requests as they really ran."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from prefixsim.errors import UserError
from prefixsim.replay.compare import Comparison, compare
from prefixsim.replay.run import ReplayResult, _instant, _summarize


@dataclass(frozen=True, slots=True)
class Window:
    since: dt.datetime | None = None   # inclusive
    until: dt.datetime | None = None   # exclusive (a date given is its whole day)
    text: str = field(default="", compare=False)   # the options as given, for the output to name

    def __bool__(self) -> bool:
        return self.since is not None or self.until is not None

    def holds(self, stamp: str) -> bool:
        t = _instant(stamp)
        if t is None:   # a request without a time is in no window
            return False
        return (self.since is None or t >= self.since) and (self.until is None or t < self.until)


def parse_bound(option: str, text: str | None, end: bool) -> dt.datetime | None:
    """An ISO date (2026-01-31 or 20260131: the whole day, UTC) or date and time (UTC unless it
    carries an offset) as a UTC instant: a date as --until ends at the next midnight."""
    if text is None:
        return None
    s = text.strip()
    try:
        if len(s) in (8, 10) and "T" not in s and ":" not in s:
            day = dt.date.fromisoformat(s)
            t = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
            return t + dt.timedelta(days=1) if end else t
        t = dt.datetime.fromisoformat(s.replace("Z", "+00:00") if s.endswith("Z") else s)
    except ValueError:
        raise UserError(f"{option}: {text!r} is not an ISO date or time (e.g. 2026-01-31 or 2026-01-31T09:00:00Z)") \
            from None
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)


def window(since: str | None, until: str | None) -> Window:
    text = " ".join(f"{k} {v}" for k, v in (("--since", since), ("--until", until)) if v is not None)
    w = Window(parse_bound("--since", since, False), parse_bound("--until", until, True), text)
    if w.since is not None and w.until is not None and w.since >= w.until:
        raise UserError(f"--since {since} is not before --until {until}: the window holds no time")
    return w


def within(result: ReplayResult, w: Window, top: int = 5) -> ReplayResult:
    """`result` with only the rows in `w`, its summary made from them as the replay makes it."""
    if not w:
        return result
    rows = [r for r in result.rows if w.holds(r.timestamp)]
    s = result.summary
    why: dict[tuple[str, str | None], str] = {(m, p): reason for m, p, _, reason in s.unpriced}
    summary = _summarize(rows, s.variant, set(s.price_sources), s.output_in_cost, top, why)
    # the output says how many requests the window left out (a request without a time is in none)
    return ReplayResult(tuple(rows), replace(summary, window=w.text, left_out=len(result.rows) - len(rows)))


def compared_within(c: Comparison | None, w: Window, top: int = 5) -> Comparison | None:
    if c is None or not w:
        return c
    return compare(within(c.base, w, top), within(c.variant, w, top))
