"""Lines a reader could not use. Real logs are cut mid-write, hand-edited and concatenated, so a bad
line is skipped, counted and named (`path:line: what`), not fatal; in strict mode it is fatal.

Readers report through `skip(...)`; whoever runs them decides what happens by opening
`collecting(strict)` around the reads (the CLI prints the collected lines on stderr). Outside a
`collecting` block, library callers get each skipped line as a Python warning.

Two kinds: a skip loses a line (fatal under --strict); a note loses nothing (unknown record types,
requests without usage, timestamps out of order) and is never fatal.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator

from ..errors import UserError


class SkippedLineWarning(UserWarning):
    """A line of a log or transcript that was skipped (see prefixsim.sources.problems)."""


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass
class Problems:
    """Skipped lines, in the order met; `notes` are things worth saying that lose nothing."""

    strict: bool = False
    why: str = "--strict: corrupt lines are fatal"
    skipped: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)


_current: ContextVar[Problems | None] = ContextVar("prefixsim_source_problems", default=None)


@contextmanager
def collecting(strict: bool = False, why: str | None = None) -> Iterator[Problems]:
    """Collect the problems of every read inside the block; with `strict`, the first skip raises,
    its message ending with `why` (what made skipping fatal)."""
    p = Problems(strict, why or Problems.why)
    token = _current.set(p)
    try:
        yield p
    finally:
        _current.reset(token)


def skip(path: str, line: int | None, message: str) -> None:
    """A line that cannot be used: fatal in strict mode, else recorded and the reader moves on."""
    p = _current.get()
    if p is not None and p.strict:
        raise UserError(f"{message} ({p.why})", path, line)
    problem = Problem(path, line, f"skipped: {message}")
    if p is None:
        warnings.warn(str(problem), SkippedLineWarning, stacklevel=3)
    else:
        p.skipped.append(problem)


def note(path: str, line: int | None, message: str) -> None:
    """Something about the input the user should know that loses no request (never fatal; outside a
    `collecting` block nobody asked, so it is dropped)."""
    p = _current.get()
    if p is not None:
        p.notes.append(Problem(path, line, message))
