"""How money is printed: one precision everywhere a table or a sentence shows dollars (issue 34 item
11), so `$0.005175` never stands beside `$0.0673`. Four decimals: a cache read of one 1,000-token
prompt at $0.30/MTok is $0.0003, the smallest figure a design review compares. A figure that is not
zero never prints as zero: below $0.0001 it is "under $0.0001" (a cell: "<$0.0001"), so a reader
does not take a small cost for none. JSON and CSV keep the numbers as computed; only text rounds."""
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
