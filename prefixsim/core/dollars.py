"""How money is printed: one precision everywhere a table or a sentence shows dollars (issue 34 item
11), so `$0.005175` never stands beside `$0.0673`. Four decimals: a cache read of one 1,000-token
prompt at $0.30/MTok is $0.0003, the smallest figure a design review compares. A figure that is not
zero never prints as zero: below $0.0001 it is "under $0.0001" (a cell: "<$0.0001"), so a reader
does not take a small cost for none. JSON keeps the numbers as computed; CSV writes every dollar
column at CSV_PLACES (csv_cell), whichever command writes it."""
from __future__ import annotations

from decimal import Decimal

#: Decimal places of every dollar figure printed.
PLACES = 4
#: The smallest figure printed at PLACES: "0.0001".
_SMALLEST = f"{10 ** -PLACES:.{PLACES}f}"


def _tiny(v: float | Decimal) -> bool:
    """Not zero, yet zero at PLACES decimals."""
    return v != 0 and round(float(v), PLACES) == 0


def usd_cell(v: float | Decimal) -> str:
    """A money cell under a `$` header: `0.0052`, `1,234.5678`, `-0.0100`, `<0.0001`, `-<0.0001`."""
    if _tiny(v):
        return f"{'-' if v < 0 else ''}<{_SMALLEST}"
    return f"{round(float(v), PLACES) or 0.0:,.{PLACES}f}"


def usd(v: float | Decimal, cell: bool = False) -> str:
    """A dollar figure in a sentence: `$0.0052`, `-$0.0100` (the sign before the symbol), `under
    $0.0001`; with `cell` (a narrow table cell), `<$0.0001`."""
    if _tiny(v):
        small = f"<${_SMALLEST}" if cell else f"under ${_SMALLEST}"
        return (f"-{small}" if cell else f"-({small})") if v < 0 else small
    f = round(float(v), PLACES) or 0.0   # `or`: -0.0 prints as $0.0000, not $-0.0000
    return f"-${-f:,.{PLACES}f}" if f < 0 else f"${f:,.{PLACES}f}"


#: Decimal places of every dollar column in CSV (issue 34 item 11: a replay's `1.14901275` beside a
#: run's `0.647195` and a study's `0.006`): six, a millionth of a dollar, so one cached read of a
#: 1,000-token prompt at $0.30/MTok ($0.000300) keeps its figure and a column of request costs sums to
#: its total within a few millionths, where a table's four places would print many such rows as 0.
CSV_PLACES = 6


def money_column(name: str) -> bool:
    """A dollar column, by its name: `cost_usd`, `cost_usd_optimistic`, `usd_per_mtok`, `explicit_usd_per_read`."""
    return name.endswith("_usd") or "_usd_" in name or name.startswith("usd_")


def csv_cell(name: str, v: object) -> object:
    """A CSV cell: a number in a dollar column at CSV_PLACES fixed decimals (`0.647195`, `12.000000`,
    never `-0.000000`); anything else as it is."""
    if not money_column(name) or isinstance(v, bool) or not isinstance(v, (int, float, Decimal)) or v != v:
        return v
    text = f"{float(v):.{CSV_PLACES}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text
