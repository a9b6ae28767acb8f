"""genai-prices' rates remembered across runs (prefixsim._perf.diskcache): a replay pricing the models an
earlier run priced neither imports genai-prices (pydantic models, its whole bundled data: ~0.3 s)
nor looks them up again. The memo is stamped with the installed genai-prices' files, so an upgrade
empties it; what it returns is what genai-prices returned, its source line included."""
from __future__ import annotations

import datetime as dt
import sys

from prefixsim._perf.diskcache import DiskMemo, package_stamp

_MEMO: DiskMemo | None = None


def _memo() -> DiskMemo:
    global _MEMO
    if _MEMO is None:
        _MEMO = DiskMemo("genai-prices-raw",
                         package_stamp("genai_prices", ("__init__.py", "data.py", "data_snapshot.py", "types.py")))
    return _MEMO


def _custom_snapshot() -> bool:
    """A program that gave genai-prices its own data (set_custom_snapshot) is not priced from the memo."""
    snap = sys.modules.get("genai_prices.data_snapshot")
    return snap is not None and getattr(snap, "_custom_snapshot", None) is not None


def _key(model: str, provider_id: str | None, at: dt.datetime, shown: str | None) -> str:
    return f"{model}\x1f{provider_id}\x1f{at.date().isoformat()}\x1f{shown}"


def lookup(model: str, provider_id: str | None, at: dt.datetime, shown: str | None) -> list | None:
    """The row kept for the same model, provider and UTC date (pricing.py builds its Rates), or None.
    Only rates without time-of-day prices are kept (`keep`): theirs depend on the date alone
    (genai-prices' StartDateConstraint is a date); the others' source names the time."""
    if _custom_snapshot():
        return None
    row = _memo().get(_key(model, provider_id, at, shown))
    return row if isinstance(row, list) and len(row) == 7 else None


def keep(model: str, provider_id: str | None, at: dt.datetime, shown: str | None, row: list) -> None:
    if not _custom_snapshot():
        _memo().put(_key(model, provider_id, at, shown), row)
