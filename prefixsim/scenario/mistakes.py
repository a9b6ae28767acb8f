"""Every mistake of one scenario file, found in one pass (issue 34 item 9: a model typo showed only
after seven schema errors were fixed, one batch per run).

The loader's checks run in phases (the sweep, `${...}` placeholders, the schema, the names and
prices each variant uses); each phase adds what it finds to a `Mistakes` and the next phase still
runs. A schema error would stop the later phases, which need a validated scenario, so the values
pydantic refused are taken out (`salvage`) and what is left is validated again: the later phases
check everything that was not itself a mistake. The file's mistakes come out as one UserError, one
line each at `file:line:col`, nearest the top first.
"""
from __future__ import annotations

import copy
from contextlib import contextmanager
from typing import Any, Iterator

from pydantic import ValidationError

from prefixsim.errors import UserError
from prefixsim.scenario.messages import is_mismatch, message, union_message, where
from prefixsim.scenario.schema import Scenario

#: Errors reported from one file in one pass; past this, a count of the rest.
MAX_ERRORS = 20

Position = tuple[int | None, int | None]


def locate(node: Any, loc: tuple) -> Position:
    """Line and column (1-based) of the deepest YAML node on a pydantic error path."""
    line = col = None
    for part in loc:
        lc = getattr(node, "lc", None)
        if isinstance(node, dict):
            if part not in node:
                continue  # a union tag or a model name in the path, not a key
            if lc is not None:
                try:
                    line, col = lc.key(part)
                except (KeyError, TypeError):
                    pass
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            if lc is not None:
                try:
                    line, col = lc.item(part)
                except (KeyError, TypeError, IndexError):
                    pass
            node = node[part]
    return (line + 1 if line is not None else None, col + 1 if col is not None else None)


def validation_errors(e: ValidationError, node: Any, path: str) -> list[UserError]:
    """Every error pydantic found, nearest the top first, one each. A union reports one error per
    branch: a branch's "wrong type" is dropped when another branch at the same place says more."""
    errs = e.errors()
    # A union branch whose value has another shape (a literal's list, say) says less than a branch
    # that went deeper.
    kept = [m for m in errs if not ((is_mismatch(m) or m["type"] == "literal_error") and any(
        (not is_mismatch(s) or len(where(s["loc"])) > len(where(m["loc"])))
        and where(s["loc"]).startswith(where(m["loc"])) for s in errs if s is not m))]
    # At one place an unknown key says more than the missing one it was probably meant to be.
    kept = [m for m in kept if not (m["type"] == "missing" and any(
        s["type"] == "extra_forbidden" and s["loc"][:-1] == m["loc"][:-1] for s in kept))]
    ranked = sorted(((locate(node, x["loc"]), x) for x in kept),
                    key=lambda x: (x[0][0] or 10**9, x[0][1] or 0, x[1]["type"] == "missing"))
    found: list[UserError] = []
    seen: set[tuple[int | None, str]] = set()
    for (line, col), err in ranked:
        siblings = [x for x in kept if is_mismatch(x) and where(x["loc"]) == where(err["loc"])]
        text = union_message(siblings) if is_mismatch(err) and len(siblings) > 1 else message(err)
        if (line, text) in seen or (line, where(err["loc"])) in seen:
            continue
        seen |= {(line, text), (line, where(err["loc"]))}
        found.append(UserError(text, path, line, col))
    return found


def bundled(found: list[UserError], path: str | None = None) -> UserError:
    """Mistakes as one UserError: the first, and the others in `also` (up to MAX_ERRORS, then a count)."""
    first = found[0]
    first.also = found[1:MAX_ERRORS]
    if len(found) > MAX_ERRORS:
        first.also.append(UserError(f"... and {len(found) - MAX_ERRORS} more errors", path or first.path))
    return first


def validation_error(e: ValidationError, node: Any, path: str) -> UserError:
    """Every error of the file, nearest the top first, one line each (up to MAX_ERRORS)."""
    return bundled(validation_errors(e, node, path), path)


def _alone(e: UserError) -> UserError:
    """`e` without the further mistakes it carries (they are added one by one)."""
    one = type(e)(e.message, e.path, e.line, e.col)
    one.site = e.site
    return one


class Mistakes:
    """The mistakes one file's checks found so far; `error()` says them all at once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._found: list[UserError] = []
        self._keys: set[tuple] = set()
        #: Places a mistake is already named at (or that must not be named, `claim`).
        self._taken: set[Position] = set()

    def add(self, e: UserError, *, unless_taken: bool = False) -> None:
        """`e` and the mistakes it carries, each once. `unless_taken`: not where a mistake is named
        already (the schema's "not a duration" where an undefined `${...}` was named)."""
        for one in (e, *e.also):
            one = _alone(one).located(self.path)
            at = (one.line, one.col)
            if unless_taken and one.line is not None and at in self._taken:
                continue
            key = (one.path, one.line, one.col, one.message)
            if key not in self._keys:
                self._keys.add(key)
                self._found.append(one)
                self._taken.add(at)

    def claim(self, at: Position) -> None:
        """A place whose value is known unusable for a reason already told (a broken sweep's `${param}`):
        the schema's complaint about it would be a consequence, not a mistake of its own."""
        self._taken.add(at)

    @contextmanager
    def catch(self) -> Iterator[None]:
        """A check's refusal is added and the next check runs."""
        try:
            yield
        except UserError as e:
            self.add(e)

    def __bool__(self) -> bool:
        return bool(self._found)

    def error(self) -> UserError | None:
        """Every mistake in one UserError, by line (this file's first, then those of files it names,
        such as a `base.file` body), None when there is none."""
        if not self._found:
            return None
        ordered = sorted(self._found, key=lambda e: (e.path != self.path, e.line or 10**9, e.col or 0))
        return bundled(ordered, self.path)

    def check(self) -> None:
        """Raise every mistake found, if any."""
        e = self.error()
        if e is not None:
            raise e


#: What stands in for a list item the schema refused, so the items after it keep their index (a
#: later check locates its mistake by index): a wait of no time sends nothing and switches no model;
#: a variant of nothing but its name runs the scenario's own settings.
_STAND_INS = {"timeline": lambda i: {"wait": 0}, "variants": lambda i: {"name": f"variants[{i}]"}}
#: Keys whose entries a later check reads whole: a refused part takes out its entry (`prices: {model:
#: {input: 1e308, output: 15}}` loses the model's row, not its input price, which the price check would
#: then say is missing).
_WHOLE_ENTRIES = {"prices": 2}
#: Rounds of taking refused values out: each takes out at least one, and a value taken out can leave
#: its container refused in turn (a step with no kind left), which the next round takes out.
MAX_ROUNDS = 8


def salvage(body: dict, e: ValidationError) -> tuple[Scenario | None, set[str]]:
    """The scenario left once every value the schema refused is taken out (None if it cannot be
    made valid), and where each was taken out (`variants[1].provider`, `timeline[2]`), so a caller
    skips the checks that would miss it. Only the first round's errors are mistakes; later rounds
    refuse what the taking out left (a step with no kind), not the file."""
    doc = copy.deepcopy(body)
    touched: set[str] = set()
    for _ in range(MAX_ROUNDS):
        # every place is found before any is changed: a union's errors share a place, and the second
        # would otherwise take out the container of the value the first took out
        places = {(id(p[1]), p[2]): p for p in (_place(doc, err["loc"], err["type"] == "missing")
                                                for err in e.errors()) if p is not None}
        if not places:
            return None, touched
        for top, container, key, value in places.values():
            touched.add(top)
            if value is _DELETE:
                container.pop(key, None)
            else:
                container[key] = value
        try:
            return Scenario.model_validate(doc), touched
        except ValidationError as again:
            e = again
    return None, touched


_DELETE = object()


def taken_out(touched: set[str], *paths: str) -> bool:
    """Whether salvage took out any of `paths`, something inside one, or something holding one."""
    def within(inner: str, outer: str) -> bool:
        return inner == outer or (inner.startswith(outer) and inner[len(outer)] in ".[")
    return any(within(p, t) or within(t, p) for t in touched for p in paths)


def _place(doc: dict, loc: tuple, missing: bool) -> tuple[str, Any, Any, Any] | None:
    """Where the refused value at `loc` is taken out of `doc`, as (its path, container, key,
    new value or _DELETE): the deepest key `loc` reaches is deleted, a list item replaced by its
    list's stand-in (else the list's own key deleted); a missing key takes its container out, but a
    missing `name` is filled in. None when nothing can be taken out."""
    trail: list[tuple[Any, Any]] = []   # (container, key or index) down to the deepest value reached
    node: Any = doc
    for part in loc:
        if isinstance(node, (dict, list)) and _has(node, part):
            trail.append((node, part))
            node = node[part]
    if missing and loc and loc[-1] == "name" and isinstance(node, dict):
        return where(loc), node, "name", where(loc)
    if trail and trail[0][1] in _WHOLE_ENTRIES:
        del trail[_WHOLE_ENTRIES[trail[0][1]]:]
    while trail:
        container, key = trail.pop()
        at = where(tuple(k for _, k in trail) + (key,))
        if isinstance(container, dict):
            return at, container, key, _DELETE
        owner = trail[-1][1] if trail else None
        if owner in _STAND_INS:
            return at, container, key, _STAND_INS[owner](key)
    return None


def _has(node: dict | list, part: Any) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(part, int) and 0 <= part < len(node)
