"""What a provider policy decides for one request, and the interface every policy implements."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..model import Request
from ..store import State, Store


@dataclass(frozen=True, slots=True)
class Decision:
    """Token split of one request plus what the explainer needs.

    `hit` is the index of the last block read (-1: none). `blocked` is the deepest entry the read
    walk saw but could not use, with its state. `min_tokens` is the cacheable minimum applied.
    """

    read: int
    write_5m: int
    write_1h: int
    uncached: int
    hit: int
    blocked: tuple[State, int] | None
    below_minimum: bool
    breakpoints: tuple[int, ...]


class Policy(Protocol):
    name: str
    #: Whether a request that writes nothing beyond a hit still counts every new token as uncached.
    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float) -> Decision: ...

    def describe(self, model: str) -> dict[str, str]: ...
