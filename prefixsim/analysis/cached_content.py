"""A Gemini explicit cache's life (`CachedContent`), the accounting a scenario step will drive:
created at t with a TTL (default 1 h, G-CC), its TTL updated (the new expiry counts from the update,
G-CC "Update a cache"), deleted or left to expire. Storage is billed for the time it is kept, from
creation to the earlier of delete and expiry (G-PR: per MTok per hour), at the rate
gemini_explicit.storage() gives (table or price sheet's storage_mtok_hour)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..errors import UserError
from ..providers.tables import GEMINI_EXPLICIT_DEFAULT_TTL


@dataclass
class CachedContent:
    name: str
    tokens: int
    created: float
    expires: float
    deleted: float | None = None

    @classmethod
    def create(cls, name: str, tokens: int, t: float, ttl_s: float | None = None) -> "CachedContent":
        ttl = float(GEMINI_EXPLICIT_DEFAULT_TTL.value) if ttl_s is None else ttl_s
        if ttl <= 0:
            raise UserError(f"cached content {name!r}: ttl must be positive, got {ttl_s}")
        return cls(name, tokens, t, t + ttl)

    def alive(self, t: float) -> bool:
        return self.created <= t < self.end

    @property
    def end(self) -> float:
        return self.expires if self.deleted is None else min(self.deleted, self.expires)

    def update_ttl(self, t: float, ttl_s: float) -> None:
        if not self.alive(t):
            raise UserError(f"cached content {self.name!r} is gone at t={t:g} s (ended {self.end:g} s)")
        self.expires = t + ttl_s

    def delete(self, t: float) -> None:
        if not self.alive(t):
            raise UserError(f"cached content {self.name!r} is gone at t={t:g} s (ended {self.end:g} s)")
        self.deleted = t

    def storage_usd(self, per_token_hour: Decimal) -> Decimal:
        """Tokens × hours kept × rate (rate as gemini_explicit.storage() returns it, per token-hour)."""
        hours = Decimal(str(self.end - self.created)) / 3600
        return Decimal(self.tokens) * hours * per_token_hour
