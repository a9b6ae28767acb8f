"""The one exception family for user mistakes; the cli turns it into `path:line[:col]: message`, exit 2."""
from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user gave us (a file, an option, a request body), never a bug."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col
        #: Further mistakes found in the same pass (a file's other errors), one line each.
        self.also: list[UserError] = []
        #: Where in its input the mistake came from, when the raiser knows only that and a caller can
        #: find the line: ("call", i) the i-th call run, ("step", k) a timeline's k-th step, ("setting",
        #: "endpoint") a scenario key.
        self.site: tuple[str, int | str] | None = None

    def located(self, path: str | None = None, line: int | None = None,
                col: int | None = None) -> "UserError":
        """Fill in a location the raiser did not know; an existing one is kept."""
        e = type(self)(self.message, self.path or path, self.line or line, self.col or col)
        e.also = [x.located(path) for x in self.also]
        e.site = self.site
        return e

    def at(self, kind: str, where: int | str) -> "UserError":
        """This error, marked as coming from `where` (see `site`) unless a site is known already."""
        if self.site is None:
            self.site = (kind, where)
        return self

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path
            if self.line:
                where += f":{self.line}"
                if self.col:
                    where += f":{self.col}"
            where += ": "
        return "\n".join([where + self.message, *(str(x) for x in self.also)])


class RequestError(UserError):
    """A request the provider itself would reject (e.g. a fifth cache_control breakpoint)."""


def shown(value: object) -> str:
    """A short, printable rendering of a value from a log, for a message (never the repr of a deep structure)."""
    if isinstance(value, (bool, int, float)) or value is None:
        text = repr(value)
    elif isinstance(value, str):
        text = repr(value[:40] + ("..." if len(value) > 40 else ""))
    else:
        return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."
