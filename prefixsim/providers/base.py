"""What a provider policy decides for one request, and the interface every policy implements."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from prefixsim.core.store import EntryState, Store
from prefixsim.core.tokens import TokenCounter
from prefixsim.model import Call, Request


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
    blocked: tuple[EntryState, int] | None
    below_minimum: bool
    breakpoints: tuple[int, ...]


class Policy(Protocol):
    name: str
    # One signature for every policy: the runner passes everything any rule needs and each policy
    # ignores what its provider does not use (`marks`: the scenario's breakpoint marks, Anthropic;
    # `d0`/`counter`: namespace digest and token counter, the automatic caches; `call`: the whole
    # call with its output tokens, the serving engines).
    def decide(self, request: Request, digests: list[bytes], cum: list[int], store: Store,
               now: float, available_at: float, *, marks: list[tuple[int, str]] | None = None,
               d0: bytes = b"", counter: TokenCounter | None = None, call: Call | None = None) -> Decision: ...

    def has_range(self, model: str | None = None) -> bool:
        """Whether `model`'s documented retention is a range (runs then report both ends); without a
        model, whether the policy's rules have ranges at all (it takes a `bound`: get_policy)."""
        ...

    def describe(self, model: str) -> dict[str, str]: ...
