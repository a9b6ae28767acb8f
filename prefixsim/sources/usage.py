"""Observed usage as it is read: the one place every reader turns a provider's usage fields into token
classes, and refuses what cannot be (docs/rules.md#observed-usage-as-read).

A usage is compared with the prediction and priced, and the next prediction of a transcript is
sized from it, so a class that comes out negative, or a total its parts contradict, is never
accepted: it is reconciled by the rule below when the fields allow only one reading, else the line
is skipped and named (`UserError`, which the reader's `problems.guarded` turns into `file:line:
skipped: ...`).

Cache writes by TTL (`cache_writes`): a total and its classes, any of them absent.
- no class given: the total at 5 minutes (logs from before the split);
- the total absent: the sum of the classes given (a class absent is 0);
- one class given: the other is the total minus it; more than the total is a contradiction;
- both given: they must sum to the total, except a split left at zero under a total, which is the
  total at 5 minutes (as with no split).
"""
from __future__ import annotations

from prefixsim.errors import UserError
from prefixsim.model import Usage
from prefixsim.sources.record import checked_usage, token_count


def cache_writes(total: object, w5m: object, w1h: object, names: tuple[str, str, str]) -> tuple[int, int]:
    """(5m, 1h) written tokens from a usage's total write and its TTL classes as the line gives them
    (None: absent); `names` are the three fields' names, for the message (UserError: they contradict
    each other, or one is not a count)."""
    t = None if total is None else token_count(total, names[0])
    a = None if w5m is None else token_count(w5m, names[1])
    b = None if w1h is None else token_count(w1h, names[2])
    if t is None:
        return a or 0, b or 0
    if a is None and b is None:
        return t, 0
    if a is not None and b is not None:
        if a + b == t:
            return a, b
        if a + b == 0:
            return t, 0
        raise UserError(f"usage fields contradict each other: {names[0]} is {t:,} but {names[1]} {a:,} "
                        f"+ {names[2]} {b:,} = {a + b:,}")
    given, name = (a, names[1]) if a is not None else (b, names[2])
    if given > t:   # type: ignore[operator]
        raise UserError(f"usage fields contradict each other: {name} is {given:,}, more than {names[0]} {t:,}")
    return (a, t - a) if a is not None else (t - b, b)   # type: ignore[operator]


_MESSAGES_NAMES = ("cache_creation_input_tokens", "cache_creation.ephemeral_5m_input_tokens",
                   "cache_creation.ephemeral_1h_input_tokens")


def messages_usage(u: dict) -> Usage:
    """A Messages API usage (an API log's response, a Claude Code transcript's message) as token
    classes (UserError: a field is not a count, or the fields contradict each other)."""
    detail = u.get("cache_creation")
    detail = detail if isinstance(detail, dict) else {}
    w5m, w1h = cache_writes(u.get("cache_creation_input_tokens"), detail.get("ephemeral_5m_input_tokens"),
                            detail.get("ephemeral_1h_input_tokens"), _MESSAGES_NAMES)
    return checked_usage(Usage(input_tokens=token_count(u.get("input_tokens"), "input_tokens"),
                               cache_write_5m=w5m, cache_write_1h=w1h,
                               cache_read=token_count(u.get("cache_read_input_tokens"), "cache_read_input_tokens"),
                               output_tokens=token_count(u.get("output_tokens"), "output_tokens")))


def summed(parts: list[Usage]) -> Usage:
    """The usage of several billed parts of one request (sampling iterations), class by class."""
    return checked_usage(Usage(*(sum(getattr(x, k) for x in parts) for k in (
        "input_tokens", "cache_write_5m", "cache_write_1h", "cache_read", "output_tokens"))))
