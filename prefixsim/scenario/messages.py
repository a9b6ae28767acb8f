"""pydantic validation errors -> one line `where: what is wrong (what would be right)`.

pydantic reports one error per branch of a union (`system: TextSpec | str | Tokens`); the branch
whose type matched says what is really wrong, so type mismatches of other branches are dropped.
"""
from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel

from prefixsim.scenario.schema import MAX_TOKENS, STEP_KINDS, Scenario

#: Error types that only say "this branch has another type"; any other error is more specific.
_MISMATCH = frozenset({"model_type", "model_attributes_type", "dict_type", "list_type", "string_type",
                       "int_type", "float_type", "bool_type", "none_required", "is_instance_of",
                       "int_parsing", "float_parsing", "bool_parsing", "int_from_float", "union_tag_invalid",
                       "tuple_type", "set_type"})


def is_mismatch(err: dict) -> bool:
    return err["type"] in _MISMATCH


def _kind(v: Any) -> str:
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return f"{str(v).lower()} (a boolean)"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return f"{_short(v)} (a string)"
    return repr(v)


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _flatten(tp: Any) -> list[Any]:
    """The concrete types inside Annotated / Union / Optional / list annotations."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _flatten(typing.get_args(tp)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None), list):
        return [t for a in typing.get_args(tp) for t in _flatten(a)]
    return [tp]


def _models(tp: Any) -> list[type[BaseModel]]:
    return [t for t in _flatten(tp) if isinstance(t, type) and issubclass(t, BaseModel)]


def fields_at(loc: tuple) -> list[str]:
    """The keys valid where `loc` points (loc ends with the offending key), walking the schema the way
    pydantic walked the data; union branch tags in `loc` (class names, step kinds) pick the branch."""
    cands: list[type[BaseModel]] = [Scenario]
    for part in loc[:-1]:
        if not isinstance(part, str):
            continue
        owners = [m for m in cands if part in m.model_fields]
        if owners:
            cands = [t for m in owners for t in _models(m.model_fields[part].annotation)]
        else:  # a union tag: keep the branch it names
            named = [m for m in cands if m.__name__ == part]
            cands = named or cands
    return sorted({f for m in cands for f in m.model_fields})


def _unknown_key(loc: tuple) -> str:
    key = str(loc[-1])
    valid = [f for f in fields_at(loc) if f != key]
    near = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if near:
        return f"unknown key {key!r} (did you mean {near[0]!r}?)"
    if key in STEP_KINDS:
        return f"unknown key {key!r} here ({key!r} is a timeline step: put it under `timeline:`)"
    if valid and len(valid) <= 12:
        return f"unknown key {key!r} (valid here: {', '.join(valid)})"
    return f"unknown key {key!r} (`prefixsim schema` lists the valid keys)"


def where(loc: tuple) -> str:
    """`base.system`, `timeline[2].fork.children`: the data path without union branch tags."""
    out = ""
    prev = None
    for p in loc:
        if isinstance(p, int):
            out += f"[{p}]"
        elif p == prev or p[:1].isupper() or "[" in p or p in ("str", "int", "float", "bool", "constrained-int",
                                                                   "constrained-float", "none"):
            pass  # a union branch tag (a step kind repeats its key)
        else:
            out += ("." if out else "") + p
        prev = p
    return out


def message(err: dict) -> str:
    """One error as `where: what is wrong (what would be right)`."""
    kind, loc, ctx = err["type"], err["loc"], err.get("ctx") or {}
    val = err.get("input")
    if kind == "extra_forbidden":
        return _unknown_key(loc)
    if kind == "missing":
        return f"missing required key {loc[-1]!r}" + (f" in {where(loc[:-1])}" if where(loc[:-1]) else "")
    if kind == "step":
        keys = list(val) if isinstance(val, dict) else []
        if not keys:
            return f"{where(loc)}: a step is a mapping with one key (one of: {', '.join(STEP_KINDS)})"
        near = difflib.get_close_matches(str(keys[0]), STEP_KINDS, n=1)
        hint = f"did you mean {near[0]!r}?" if near else f"one of: {', '.join(STEP_KINDS)}"
        if len(keys) > 1 and any(k in STEP_KINDS for k in keys):
            return f"{where(loc)}: a step has exactly one kind, got {', '.join(map(repr, keys))} (one step per list item)"
        return f"unknown step {keys[0]!r} ({hint})"
    at = where(loc)
    prefix = f"{at}: " if at else ""
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        return f"{prefix}{_short(val)} is too small (at least {bound:,})" if kind == "greater_than_equal" \
            else f"{prefix}{_short(val)} is too small (more than {bound:,})"
    if kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        unit = " tokens; more is a typo, not a design" if bound == MAX_TOKENS else ""
        return f"{prefix}{_short(val)} is too large (at most {bound:,}{unit})"
    if kind == "literal_error":
        return f"{prefix}{_kind(val)} is not allowed (one of: {ctx.get('expected', '?')})"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{prefix}{_kind(val)} is not a whole number (e.g. 300)"
    if kind in ("float_parsing", "float_type"):
        return f"{prefix}{_kind(val)} is not a number"
    if kind in ("bool_parsing", "bool_type"):
        return f"{prefix}{_kind(val)} is not true or false"
    if kind == "string_type":
        return f"{prefix}{_kind(val)} is not text (a string; quote it)"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{prefix}{_kind(val)} is not a mapping (`key: value` lines)"
    if kind == "list_type":
        return f"{prefix}{_kind(val)} is not a list (`- item` lines or [a, b])"
    if kind == "finite_number":
        return f"{prefix}{_kind(val)} is not a finite number"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{prefix}{msg}"


def union_message(errs: list[dict]) -> str:
    """Every branch of a union said "wrong type": name what each branch would take."""
    takes = []
    for e in errs:
        tag = next((p for p in reversed(e["loc"]) if isinstance(p, str)), "")
        text = {"model_type": "a mapping", "dict_type": "a mapping", "list_type": "a list",
                "string_type": "text", "int_type": "a whole number", "int_parsing": "a whole number",
                "literal_error": f"one of {(e.get('ctx') or {}).get('expected', '?')}"}.get(e["type"], tag)
        if text not in takes:
            takes.append(text)
    return f"{where(errs[0]['loc'])}: {_kind(errs[0].get('input'))} is not valid (expected {' or '.join(takes)})"
