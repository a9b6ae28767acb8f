"""A scenario's `sweep:`: the values it runs each variant at, and the checks of its `param`.

A sweep that gives no values (`values: []`, a range whose start is past its stop) is refused; so is
a swept parameter no `${param}` uses (every value would run the same scenario: duplicate rows).
"""
from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import ValidationError

from prefixsim.errors import UserError
from prefixsim.scenario.mistakes import Mistakes, locate, validation_error
from prefixsim.scenario.schema import MAX_SWEEP, SweepSpec


def sweep_values(doc: dict, node: Any, path: str) -> tuple[str | None, list[Any]]:
    """The swept parameter and its values ((None, [None]) without `sweep:`); a UserError when the
    sweep gives none to run."""
    sweep = doc.get("sweep")
    if sweep is None:
        return None, [None]

    try:
        spec = SweepSpec.model_validate(sweep)
    except ValidationError as e:
        raise validation_error(e, node.get("sweep") if isinstance(node, dict) else node, path) from None

    key = "values" if spec.values is not None else "range" if spec.range is not None else None
    if key is None:
        line, col = locate(node, ("sweep",))
        raise UserError("sweep needs `values:` or `range:`", path, line, col)
    if spec.values is not None:
        vals = list(spec.values)
    else:
        start, stop, step = spec.range
        vals, x = [], start
        while x <= stop + 1e-9 and len(vals) <= MAX_SWEEP:   # never more than one past the limit
            vals.append(int(x) if float(x).is_integer() else x)
            x += step
    line, col = locate(node, ("sweep", key))
    if not vals:
        why = "an empty list" if key == "values" else "start is past stop"
        raise UserError(f"sweep.{key} gives no values ({why}); a sweep runs each variant once per value",
                        path, line, col)
    if len(vals) > MAX_SWEEP:
        raise UserError(f"sweep.{key} gives more than {MAX_SWEEP:,} values (the limit: each is a full run of "
                        "every variant); widen the step or split the sweep", path, line, col)
    return spec.param, vals


def broken_sweep(doc: dict, node: Any, found: Mistakes) -> str | None:
    """A sweep that gives no values: its `param` (if it names one), whose `${...}` places are claimed,
    since the schema's complaint about the text left there would follow from the sweep's mistake."""
    sweep = doc.get("sweep")
    param = sweep.get("param") if isinstance(sweep, dict) else None
    if not isinstance(param, str):
        return None
    token = "${" + param + "}"
    stack: list[tuple[tuple, Any]] = [((k,), v) for k, v in doc.items() if k != "sweep"]
    while stack:
        loc, x = stack.pop()
        if isinstance(x, dict):
            stack.extend(((*loc, k), v) for k, v in x.items())
        elif isinstance(x, list):
            stack.extend(((*loc, i), v) for i, v in enumerate(x))
        elif isinstance(x, str) and token in x:
            found.claim(locate(node, loc))
    return param


_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")


def _names_and_keys(node: Any, names: set[str], keys: set[str]) -> None:
    """The `${...}` names the file writes and the mapping keys it uses (for a did-you-mean)."""
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            keys.update(str(k) for k in x)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str) and "${" in x:
            names.update(_PLACEHOLDER.findall(x))


def check_swept(param: str, doc: dict, node: Any, path: str) -> None:
    """A swept parameter no `${param}` uses would run every variant once per value with nothing
    changed (duplicate rows): refused at `sweep.param`, naming the nearest placeholder or key."""
    names: set[str] = set()
    keys: set[str] = set()
    _names_and_keys({k: v for k, v in doc.items() if k != "sweep"}, names, keys)
    if param in names:
        return
    near = difflib.get_close_matches(param, sorted(names - set(doc.get("vars") or {})), n=1, cutoff=0.6)
    if near:
        hint = f"did you mean sweep: {{param: {near[0]}}}, the placeholder the file writes?"
    else:
        key = difflib.get_close_matches(param, sorted(keys), n=1, cutoff=0.6)
        hint = (f"did you mean to write `{key[0]}: ${{{param}}}`?" if key else
                f"write ${{{param}}} where the swept value goes")
    raise UserError(f"sweep.param {param!r} is used nowhere: no ${{{param}}} in the file, so every value would "
                    f"run the same scenario ({hint})", path, *locate(node, ("sweep", "param")))
