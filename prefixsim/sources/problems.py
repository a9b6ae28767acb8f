"""Lines a reader could not use. Real logs are cut mid-write, hand-edited and concatenated, so a bad
line is skipped, counted and named (`path:line: what`), not fatal; in strict mode it is fatal.

Readers report through `skip(...)`; whoever runs them decides what happens by opening
`collecting(strict)` around the reads (the CLI prints the collected lines on stderr). Outside a
`collecting` block, library callers get each skipped line as a Python warning.

Two kinds: a skip loses a line (fatal under --strict); a note loses nothing (unknown record types,
requests without usage, timestamps out of order) and is never fatal.

`guarded(path, line, work, ...)` is the one boundary between a line and a crash: every reader runs
the whole of one line's work (request id, body, usage, time, model) through it, and whatever a value
of an unexpected type or size raises there (`LINE_ERRORS`) skips that line, named with `unusable(e)`,
never the run (exit 70); no reader needs a try/except per field.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from prefixsim.errors import UserError

#: What the work on one parsed line can raise when a value has an unexpected type, size or text:
#: a list where an id is expected (TypeError), a number where text is (AttributeError), an epoch out
#: of range (ValueError / OverflowError / OSError from the C library), a count the decimal context
#: cannot hold (decimal.InvalidOperation, an ArithmeticError), a lone surrogate that cannot be
#: encoded (UnicodeError, a ValueError), JSON nested past the interpreter's stack (RecursionError).
LINE_ERRORS: tuple[type[BaseException], ...] = (UserError, TypeError, AttributeError, KeyError, IndexError,
                                                ValueError, ArithmeticError, OSError, RecursionError)


def guarded(path: str, line: int | None, work: Callable[..., T], *args: object, where: str = "") -> T | None:
    """`work(*args)`, the whole of one line's reading; when the line's values make it fail, the line
    is skipped and named (None), after `where` (e.g. "interaction 3") for a line without a number.
    The one place a reader turns a bad value into a skip."""
    try:
        return work(*args)
    except StrictStop:
        raise
    except LINE_ERRORS as e:
        skip(path, line, f"{where}: {unusable(e)}" if where else unusable(e))
        return None


def located_error(e: BaseException, path: str, line: int | None) -> UserError:
    """The same boundary for a reader whose bad lines are fatal (engine traces): a located UserError."""
    return UserError(unusable(e), path, line) if not isinstance(e, UserError) else e.located(path, line)


def printable(text: str) -> str:
    """`text` with what cannot be written as UTF-8 (lone surrogates) escaped, so naming a bad line
    never fails in turn."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def unusable(e: BaseException) -> str:
    """What is wrong with a line, from the exception its reading raised (one line of text)."""
    if isinstance(e, UserError):
        return printable(e.message)
    if isinstance(e, RecursionError):
        return "nested too deeply to read"
    if isinstance(e, UnicodeError):
        return "text that is not valid Unicode (a lone surrogate?)"
    detail = printable(str(e).splitlines()[0] if str(e) else "")[:120]
    return f"a value of the wrong type or out of range ({type(e).__name__}{': ' + detail if detail else ''})"


T = TypeVar("T")


class StrictStop(UserError):
    """A skip made fatal by --strict: passes through every line boundary (`guarded`)."""


class SkippedLineWarning(UserWarning):
    """A line of a log or transcript that was skipped (see prefixsim.sources.problems)."""


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return printable(f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}")


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
    message = printable(message)
    if p is not None and p.strict:
        raise StrictStop(f"{message} ({p.why})", path, line)
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
        p.notes.append(Problem(path, line, printable(message)))
