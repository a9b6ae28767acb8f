"""Every study parameter checked in one place, against the ranges and limits its class declares
(studyparams.py): from the command line (-p KEY=VALUE, KEY=V1,V2 to compare) or a scenario's
`studies:` mapping, alike. Every value given is used, or refused in one line naming the parameter and
its range; the limits across parameters are checked on every design a comparison makes, all before
a study computes or builds anything."""
from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

from prefixsim.core.sizes import whole_tokens
from prefixsim.errors import UserError
from prefixsim.io.suggest import nearest, unknown
from prefixsim.scenario.studyparams import (
    DEFAULT_CHILDREN,
    LIST_STUDIES,
    MAX_DESIGNS,
    MAX_VALUES,
    Range,
    params_class,
)
from prefixsim.scenario.studynames import SCENARIO_STUDIES


class ParamError(UserError):
    """A study parameter refused; `key` names it (None: a limit over several), for a scenario's line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, col: int | None = None,
                 key: str | None = None) -> None:
        super().__init__(message, path, line, col)
        self.key = key


def ranges(study: str) -> dict[str, Range]:
    """Each parameter of `study` and the range it can take."""
    return {f.name: f.metadata["range"] for f in dataclasses.fields(params_class(study))}


def parse_pairs(study: str, pairs: tuple[str, ...] | list[str], model: str | None = None,
                choices: dict[str, tuple[str, ...]] | None = None):
    """-p KEY=VALUE (or KEY=V1,V2,... to compare) -> (params, {key: values listed}). `choices`: more
    values a choice takes than its range lists (the GPUs of a --gpus file)."""
    fields = sorted(ranges(study))
    raw: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise ParamError(f"--param {pair!r}: {study} takes KEY=VALUE with KEY one of {', '.join(fields)}")
        if key not in fields:
            raise ParamError(f"--param {pair!r}: {unknown(f'{study} parameter', key, fields, show=20)}")
        if key in raw:
            raise ParamError(f"--param {key} is given twice; to compare values list them: -p {key}=A,B", key=key)
        raw[key] = [v.strip() for v in value.split(",")] if "," in value else [value.strip()]
    return study_params(study, raw, model=model, choices=choices)


def _value(raw: Any, key: str, r: Range, where: str) -> Any:
    """One value as the parameter's kind reads it (a size like 30K only where it is tokens)."""
    if r.kind == "choice":
        if str(raw) not in r.choices:
            if len(r.choices) <= 3:
                raise ParamError(f"{where} {key}: {r.text()}", key=key)
            near = nearest(str(raw), r.choices)
            hint = f" (did you mean {near!r}?)" if near else ""
            raise ParamError(f"{where} {key}: {str(raw)!r} is not {r.text()}{hint}", key=key)
        return str(raw)
    try:
        if isinstance(raw, bool):
            raise ValueError
        if r.kind == "tokens" and isinstance(raw, str) and whole_tokens(raw) is not None:
            return whole_tokens(raw)   # a token size as a scenario takes it (30K, 1.5M, 30_000)
        if r.kind in ("tokens", "count"):
            return int(raw) if not isinstance(raw, float) or raw.is_integer() else int("x")
        v = float(raw)
    except (ValueError, TypeError):
        what = ("a whole number of tokens (e.g. 30000 or 30K)" if r.kind == "tokens" else
                "a whole number" if r.kind == "count" else "a number (e.g. 0.5)" if r.kind == "number" else
                "a number of seconds (e.g. 2.5)")
        raise ParamError(f"{where} {key}: {raw!r} is not {what}", key=key) from None
    if not math.isfinite(v) or v < 0:
        raise ParamError(f"{where} {key}: {raw!r} must be a finite number, not negative", key=key)
    return v


def _in_range(v: Any, raw: Any, key: str, r: Range, where: str, model: str | None) -> None:
    if r.kind == "choice":
        return
    low = r.model_low(model) if r.model_low is not None and model is not None else r.low
    if not low <= v <= r.high:
        said = f" on {model}" if r.model_low is not None and model is not None else ""
        why = f" ({r.why})" if r.why else ""
        raise ParamError(f"{where} {key}: {raw} is out of its range{said}, {r.text(low)}{why}", key=key)


def study_params(study: str, values: dict[str, list], where: str = "--param", model: str | None = None,
                 choices: dict[str, tuple[str, ...]] | None = None):
    """Checked study parameters from strings (-p) or a scenario's `studies:` values: (params, lists),
    where `lists` holds every key given, with its values in order (one or more). `model`: the model
    the study prices, for a range that depends on it."""
    cls = params_class(study)
    rs = ranges(study)
    for key, extra in (choices or {}).items():
        rs[key] = dataclasses.replace(rs[key], choices=tuple(dict.fromkeys((*rs[key].choices, *extra))))
    lists: dict[str, list] = {}
    for key, raws in values.items():
        if key not in rs:
            raise ParamError(f"{where} {key}: {unknown(f'{study} parameter', key, sorted(rs), show=20)}", key=key)
        if len(raws) > 1 and study not in LIST_STUDIES:
            raise ParamError(f"{where} {key}: {study} takes one value (a list compares designs in "
                             f"{', '.join(LIST_STUDIES)} only)", key=key)
        if not raws or len(raws) > MAX_VALUES:
            raise ParamError(f"{where} {key}: give 1 to {MAX_VALUES} values", key=key)
        out = []
        for raw in raws:
            v = _value(raw, key, rs[key], where)
            _in_range(v, raw, key, rs[key], where, model)
            out.append(v)
        if len(set(out)) != len(out):
            raise ParamError(f"{where} {key}: a value is listed twice", key=key)
        lists[key] = out
    f = cls(**{k: vs[0] for k, vs in lists.items()})
    check_limits(study, f, lists, where)
    return f, lists


def designs(study: str, f: Any, lists: dict[str, list]) -> list:
    """Every design a study's check builds: each combination of the listed values, in the order given
    (fork-vs-subagent compares DEFAULT_CHILDREN when no children value is named)."""
    if study == "fork-vs-subagent" and "children" not in lists:
        lists = {"children": list(DEFAULT_CHILDREN), **lists}
    keys = list(lists)
    return [dataclasses.replace(f, **dict(zip(keys, combo)))
            for combo in itertools.product(*(lists[k] for k in keys))] or [f]


def check_limits(study: str, f: Any, lists: dict[str, list], where: str = "--param") -> None:
    """The limits of `study`'s class on every design its check builds, and on their number: refused
    by arithmetic on the parameters, before anything is built."""
    count = math.prod(len(v) for v in lists.values()) * (
        len(DEFAULT_CHILDREN) if study == "fork-vs-subagent" and "children" not in lists else 1)
    if count > MAX_DESIGNS:
        shown = " x ".join(f"{len(v)} {k}" for k, v in lists.items() if len(v) > 1)
        raise ParamError(f"{where}: {shown} values make {count:,} designs to compare (at most {MAX_DESIGNS}); "
                         "list fewer values")
    built = designs(study, f, lists)
    for limit in getattr(params_class(study), "LIMITS", ()):
        values = [limit.value(d) for d in built]
        value = sum(values) if limit.total else max(values)
        if value > limit.high:
            over = f" ({len(built)} designs)" if limit.total and len(built) > 1 else ""
            raise ParamError(f"{where} {limit.what} = {value:,} {limit.unit}{over} (at most {limit.high:,}); "
                             f"{limit.advice}")


def as_lists(values: dict) -> dict[str, list]:
    """A scenario's study values: a scalar is one value, a list several."""
    return {str(k): list(v) if isinstance(v, list) else [v] for k, v in values.items()}


def check_study(name: str, values: Any) -> None:
    """One study of a scenario's `studies:`: a known study, its parameters checked as -p's are
    (ParamError: `key` names the parameter at fault)."""
    if name not in SCENARIO_STUDIES:
        raise ParamError(unknown("study", name, SCENARIO_STUDIES))
    if values is not None and not isinstance(values, dict):
        raise ParamError(f"{name}: a study's parameters are a mapping, e.g. {{children: 4, turns: 2}}")
    study_params(name, as_lists(values or {}), where=name)
