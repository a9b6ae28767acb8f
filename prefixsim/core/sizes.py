"""Sizes as people write them, read exactly: a token count (30K, 2k, 1.5M, 30_000) and a cache
capacity (the same, and 1e6, 10^6, '7 tokens', 4GiB). Every scenario field, study parameter and
command-line option that takes a size reads it here.

Decimal digits become a `Fraction` of the digits as written, never a binary float: `1.001M` is
1,001,000 tokens, not 1,000,999 (1.001 × 1e6 in floats), and `1.001k` is 1,001, not "not a whole
number". A number too long (more than MAX_DIGITS digits, or MAX_FRACTION after the point) or a
power too high to be a size reads as `HUGE`, past every bound, so the caller's own bound reports it:
never a float overflow, never int()'s 4,300-digit limit, never 10 ** 10**9 computed.
"""
from __future__ import annotations

import re
from fractions import Fraction

#: What a number of more than MAX_DIGITS digits or a power past MAX_POWER reads as: far past every
#: size bound (10^15 tokens, 10^6 GiB), so it is refused as too large, not computed.
HUGE = Fraction(10) ** 60
MAX_DIGITS = 30
MAX_FRACTION = 100
MAX_POWER = 40
SCALE = {"": 1, "k": 1_000, "m": 1_000_000}

#: A token count as text: digits with `_` separators, an optional decimal part, an optional k / M
#: suffix (thousand, million; either case).
TOKENS_TEXT = re.compile(r"^\s*(\d[\d_]*)(?:\.(\d+))?\s*([kKmM])?\s*$")
#: A capacity as text: digits (an optional decimal part and exponent) or 10^N, then k, M, tokens or GiB.
CAPACITY_TEXT = re.compile(r"^\s*(?:(\d+)(?:\.(\d*))?(?:e\+?(\d+))?|10\^(\d+))\s*(gib|tokens|k|m)?\s*$", re.I)


def exact(whole: str, fraction: str = "", power: int = 0) -> Fraction:
    """whole.fraction × 10^power, exactly (HUGE when too long or too high to be a size)."""
    whole, fraction = whole.replace("_", "").lstrip("0"), fraction.rstrip("0")
    if len(whole) > MAX_DIGITS or len(fraction) > MAX_FRACTION or power + len(whole) > MAX_POWER:
        return HUGE
    return Fraction(int(whole + fraction or "0"), 10 ** len(fraction)) * 10 ** power


def _power(digits: str | None) -> int:
    """An exponent's digits as a number, leading zeros ignored (MAX_POWER + 1 past it: too high)."""
    if not digits:
        return 0
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 3 else MAX_POWER + 1


def token_amount(text: str) -> Fraction | None:
    """The exact number of tokens `text` writes ('1.5k' -> 1500), or None when it is not a size. A plain
    decimal without a suffix or separator ('1.5') is not one: where a field takes text too, it is text."""
    m = TOKENS_TEXT.match(text)
    if m is None:
        return None
    whole, fraction, suffix = m.groups()
    if fraction is not None and suffix is None and "_" not in whole:
        return None
    return exact(whole, fraction or "") * SCALE[(suffix or "").lower()]


def whole_tokens(text: str) -> int | None:
    """`token_amount` as a whole number: '30K' -> 30000, '1.001k' -> 1001; None when not a size;
    ValueError for a fraction of a token ('1.2345k')."""
    amount = token_amount(text)
    if amount is None:
        return None
    if amount.denominator != 1:
        raise ValueError(f"{text!r} is not a whole number of tokens")
    return int(amount)


def capacity_amount(text: str) -> tuple[Fraction, str] | None:
    """(exact amount, unit 'tokens' or 'gib') of a capacity written as text, or None when it is not one."""
    m = CAPACITY_TEXT.match(text)
    if m is None:
        return None
    whole, fraction, exponent, power, unit = m.groups()
    unit = (unit or "").lower()
    if whole is not None:
        value = exact(whole, fraction or "", _power(exponent))
    else:
        p = _power(power)
        value = HUGE if p > MAX_POWER else Fraction(10) ** p
    if unit == "gib":
        return value, "gib"
    return value * SCALE.get(unit, 1), "tokens"
