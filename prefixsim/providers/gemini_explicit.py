"""A Gemini explicit cache's life (`CachedContent`), as the scenario steps create_cache / update_cache /
delete_cache drive it: created at t with a TTL (default 1 h, G-CC), its TTL updated (the new expiry
counts from the update, G-CC "Update a cache"), deleted or left to expire. Storage is billed for the
time it is kept, from creation to the earlier of delete and expiry (G-PR: per MTok per hour), at the
rate `storage()` gives (providers/tables.py GEMINI_STORAGE_MTOK_HOUR, or the price sheet's
`storage_mtok_hour`). docs/rules.md#gemini-explicit-context-caching."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from prefixsim.core.pricing import MTOK, PriceBook, sheet_price
from prefixsim.errors import UserError
from prefixsim.providers.gemini_tables import (
    EXPLICIT_STUDY_MODELS,
    GEMINI_EXPLICIT_DEFAULT_TTL,
    GEMINI_STORAGE_MTOK_HOUR,
)


def storage(model: str, book: PriceBook) -> tuple[Decimal, str]:
    """USD per token-hour kept, and where it came from."""
    row = book.sheet.get(model, {})
    if "storage_mtok_hour" in row:
        return sheet_price(model, "storage_mtok_hour", row["storage_mtok_hour"]) / MTOK, book.sheet_source
    # a retired model is billed as what the provider routes it to, storage too (prefixsim/core/lifecycle.py)
    billed, why = book.priced_as(model, "gemini")
    m = billed.strip().lower().rsplit("/", 1)[-1]
    best = max((k for k in GEMINI_STORAGE_MTOK_HOUR if m.startswith(k)), key=len, default=None)
    if best is None:
        was = f" ({why}; on {book.when.isoformat()})" if why else ""
        raise UserError(f"no explicit-cache storage price for {billed!r}{was} (known: "
                        f"{', '.join(sorted(GEMINI_STORAGE_MTOK_HOUR))}); give storage_mtok_hour (USD per MTok per hour) "
                        "in a price sheet")
    r = GEMINI_STORAGE_MTOK_HOUR[best]
    return Decimal(str(r.value)) / MTOK, r.source


def default_study_model(book: PriceBook) -> str:
    """The gemini-explicit study's default model on the book's price date: the first of
    EXPLICIT_STUDY_MODELS that is live then (billed as itself, not routed to a successor) and has a
    storage price. Chosen from the data by date, so a default does not turn invalid on a later day."""
    tried = []
    for model in EXPLICIT_STUDY_MODELS:
        try:
            billed, why = book.priced_as(model, "gemini")
            if billed == model:
                storage(model, book)
                return model
        except UserError as e:   # not released yet on that date, or no storage price
            why = e.message
        tried.append(f"{model}: {why}")
    raise UserError(f"no default model for gemini-explicit on {book.when.isoformat()} ({'; '.join(tried)}); "
                    "name one with --model and its storage_mtok_hour in a --prices sheet")


def storage_cost(tokens: int, kept_s: float, per_token_hour: Decimal) -> Decimal:
    """Tokens × hours kept × the rate (per token-hour, as storage() gives it)."""
    return Decimal(tokens) * Decimal(str(kept_s)) / 3600 * per_token_hour


@dataclass
class CachedContent:
    name: str
    created: float
    expires: float
    deleted: float | None = None

    @classmethod
    def create(cls, name: str, t: float, ttl_s: float | None = None) -> "CachedContent":
        ttl = float(GEMINI_EXPLICIT_DEFAULT_TTL.value) if ttl_s is None else ttl_s
        if ttl <= 0:
            raise UserError(f"cached content {name!r}: ttl must be positive, got {ttl_s}")
        return cls(name, t, t + ttl)

    def alive(self, t: float) -> bool:
        return self.created <= t < self.end

    @property
    def end(self) -> float:
        return self.expires if self.deleted is None else min(self.deleted, self.expires)

    @property
    def kept_s(self) -> float:
        """Seconds its storage is billed: creation to delete or expiry."""
        return self.end - self.created

    def update_ttl(self, t: float, ttl_s: float) -> None:
        if ttl_s <= 0:
            raise UserError(f"cached content {self.name!r}: ttl must be positive, got {ttl_s}")
        if not self.alive(t):
            raise UserError(f"cached content {self.name!r} is gone at t={t:g} s (ended {self.end:g} s)")
        self.expires = t + ttl_s

    def delete(self, t: float) -> None:
        if not self.alive(t):
            raise UserError(f"cached content {self.name!r} is gone at t={t:g} s (ended {self.end:g} s)")
        self.deleted = t
