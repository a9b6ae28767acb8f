"""Reads scenario files: safe YAML with line numbers, `${var}` substitution, sweeps, variants.

Every mistake becomes a UserError at `file:line:col` with what would be right.
"""
from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..errors import UserError
from .schema import STEP_KINDS, Scenario, Settings, Variant

_SETTINGS_FIELDS = tuple(f for f in Settings.model_fields)


@dataclass(frozen=True)
class Run:
    """One variant of one scenario (at one sweep value): everything needed to simulate it."""

    scenario: Scenario
    variant: str
    settings: Settings
    sweep_value: Any
    path: str

    @property
    def base_dir(self) -> str:
        return str(Path(self.path).parent)


def scenario_files(paths: list[str]) -> list[str]:
    """Files given, and every *.yaml / *.yml under folders given, in a stable order."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*") if f.suffix in (".yaml", ".yml") and f.is_file())
            if not found:
                raise UserError(f"{p}: no scenario files (*.yaml, *.yml) in this folder")
            out += found
        elif os.path.exists(p):
            out.append(p)
        else:
            raise UserError(f"{p}: no such file or folder")
    return out


def _yaml():
    from ruamel.yaml import YAML

    y = YAML(typ="rt", pure=True)
    y.allow_duplicate_keys = False
    return y


def read_yaml(path: str) -> Any:
    """Parse one YAML file safely (no object construction), keeping node positions."""
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UserError(f"not UTF-8 text (byte {e.start}); save the file as UTF-8", path, line) from None
    if not text.strip():
        raise UserError("empty file (a scenario needs at least `name:`)", path, 1)
    try:
        doc = _yaml().load(text)
    except DuplicateKeyError as e:
        mark = e.problem_mark
        raise UserError(f"duplicate key: {e.problem.split(chr(10))[0]}", path,
                        mark.line + 1 if mark else None, mark.column + 1 if mark else None) from None
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = (e.problem or e.context or "invalid YAML").strip()
        raise UserError(f"YAML syntax error: {what}", path, mark.line + 1 if mark else None,
                        mark.column + 1 if mark else None) from None
    except YAMLError as e:
        raise UserError(f"YAML error: {str(e).splitlines()[0]}", path) from None
    _refuse_tags(doc, path)
    return doc


def _refuse_tags(node: Any, path: str) -> None:
    """A tag like !!python/object is never constructed; say so instead of passing a tagged value on."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    tag = getattr(node, "tag", None)
    value = getattr(tag, "value", None) if tag is not None else None
    if value and not value.startswith("tag:yaml.org,2002:"):
        raise UserError(f"YAML tag {value} is not allowed in a scenario (plain values only)", path)
    if isinstance(node, CommentedMap):
        for v in node.values():
            _refuse_tags(v, path)
    elif isinstance(node, CommentedSeq):
        for v in node:
            _refuse_tags(v, path)


def _plain(node: Any) -> Any:
    """ruamel's commented containers -> plain dicts and lists (pydantic sees plain data)."""
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if hasattr(node, "tag") and type(node).__name__.startswith("Tagged"):
        return node.value
    if type(node).__name__ in ("ScalarFloat",):
        return float(node)
    if type(node).__name__ in ("ScalarInt", "HexInt", "OctalInt", "BinaryInt"):
        return int(node)
    if type(node).__name__ == "ScalarBoolean":
        return bool(node)
    if isinstance(node, str):
        return str(node)
    return node


def locate(node: Any, loc: tuple) -> tuple[int | None, int | None]:
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


def _field_names() -> set[str]:
    from . import schema

    names: set[str] = set(STEP_KINDS)
    for obj in vars(schema).values():
        if isinstance(obj, type) and hasattr(obj, "model_fields"):
            names |= set(obj.model_fields)
    return names


def _message(err: dict) -> str:
    kind, msg, loc = err["type"], err["msg"], err["loc"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        near = difflib.get_close_matches(key, sorted(_field_names()), n=1, cutoff=0.6)
        return f"unknown key {key!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
    if kind == "missing":
        return f"missing required key {loc[-1]!r}"
    if kind == "step":
        bad = err.get("input")
        keys = list(bad) if isinstance(bad, dict) else []
        near = difflib.get_close_matches(str(keys[0]), STEP_KINDS, n=1) if keys else []
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return f"unknown step {keys[0]!r}{hint}; {msg}" if keys else msg
    parts = [p for i, p in enumerate(loc) if i == 0 or p != loc[i - 1]]   # a union tag repeats its key
    where = ".".join(str(p) for p in parts if not (isinstance(p, str) and (p[:1].isupper() or "[" in p)))
    return f"{where}: {msg}" if where else msg


def validation_error(e: ValidationError, node: Any, path: str) -> UserError:
    # Report the error nearest the top of the file first; unions report one error per branch.
    errs = e.errors()
    located = [(locate(node, err["loc"]), err) for err in errs]
    (line, col), err = min(located, key=lambda x: (x[0][0] or 10**9, x[0][1] or 0))
    return UserError(_message(err), path, line, col)


def _substitute(node: Any, values: dict[str, Any], path: str) -> Any:
    """`${name}` placeholders take their value; a whole-string placeholder keeps the value's type."""
    if isinstance(node, dict):
        return {k: _substitute(v, values, path) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, values, path) for v in node]
    if isinstance(node, str) and "${" in node:
        for name, value in values.items():
            token = "${" + name + "}"
            if node == token:
                return value
            node = node.replace(token, str(value))
        if "${" in node:
            start = node.index("${")
            raise UserError(f"undefined placeholder {node[start:node.find('}', start) + 1]} "
                            f"(defined: {', '.join(sorted(values)) or 'none'})", path)
    return node


def _sweep_values(doc: dict, node: Any, path: str) -> tuple[str | None, list[Any]]:
    sweep = doc.get("sweep")
    if sweep is None:
        return None, [None]
    from .schema import SweepSpec
    try:
        spec = SweepSpec.model_validate(sweep)
    except ValidationError as e:
        raise validation_error(e, node.get("sweep") if isinstance(node, dict) else node, path) from None
    if spec.values is not None:
        return spec.param, list(spec.values)
    if spec.range is not None:
        start, stop, step = spec.range
        vals, x = [], start
        while x <= stop + 1e-9 and len(vals) <= 10_000:
            vals.append(int(x) if float(x).is_integer() else x)
            x += step
        return spec.param, vals
    line, col = locate(node, ("sweep",))
    raise UserError("sweep needs `values:` or `range:`", path, line, col)


def load_runs(path: str) -> list[Run]:
    """Every run a scenario file asks for: variants x sweep values, validated."""
    node = read_yaml(path)
    if not isinstance(node, dict):
        raise UserError("a scenario file is a mapping with at least `name:`", path, 1)
    doc = _plain(node)
    param, values = _sweep_values(doc, node, path)
    runs: list[Run] = []
    for value in values:
        subst = dict(doc.get("vars") or {})
        if param is not None:
            subst[param] = value
        body = {k: v for k, v in doc.items() if k != "sweep"}
        body = _substitute(body, subst, path) if subst or _has_placeholder(body) else body
        try:
            sc = Scenario.model_validate({**body, "sweep": doc.get("sweep")})
        except ValidationError as e:
            raise validation_error(e, node, path) from None
        variants = sc.variants or [Variant(name="default")]
        for vi, v in enumerate(variants):
            merged = {f: getattr(v, f) if getattr(v, f) is not None else getattr(sc, f) for f in _SETTINGS_FIELDS}
            settings = Settings.model_construct(**merged)  # both halves are validated already
            _check_settings(settings, node, path, vi if sc.variants else None)
            name = v.name if param is None else f"{v.name} [{param}={value}]"
            runs.append(Run(sc, name, settings, value, path))
    return runs


def _has_placeholder(node: Any) -> bool:
    if isinstance(node, dict):
        return any(_has_placeholder(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_placeholder(v) for v in node)
    return isinstance(node, str) and "${" in node


def _check_settings(s: Settings, node: Any, path: str, variant_index: int | None) -> None:
    """Names the schema cannot check (provider, tokenizer, model) are checked against the tables."""
    from ..providers import PROVIDERS
    from ..tokenize import TOKENIZERS

    def where(key: str) -> tuple[int | None, int | None]:
        if variant_index is not None:
            line, col = locate(node, ("variants", variant_index, key))
            if line is not None and key in (node["variants"][variant_index] or {}):
                return line, col
        return locate(node, (key,))

    if s.provider is not None and s.provider not in PROVIDERS:
        raise UserError(f"unknown provider {s.provider!r} (valid: {', '.join(PROVIDERS)})", path, *where("provider"))
    if s.tokenizer is not None and s.tokenizer not in TOKENIZERS:
        raise UserError(f"unknown tokenizer {s.tokenizer!r} (valid: {', '.join(TOKENIZERS)})", path,
                        *where("tokenizer"))


def load_json_file(run: Run, rel: str) -> dict:
    """A `file:` reference: relative to the scenario, and never outside the scenario's folder tree."""
    base = Path(run.base_dir).resolve()
    target = (base / rel).resolve()
    if base != target and base not in target.parents:
        raise UserError(f"file {rel!r} points outside the scenario's folder ({base})", run.path)
    if not target.is_file():
        raise UserError(f"file {rel!r} does not exist (looked for {target})", run.path)
    try:
        return json.loads(target.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        line = getattr(e, "lineno", None)
        raise UserError(f"not a JSON request body: {e}", str(target), line) from None


def iter_runs(paths: list[str]) -> Iterator[Run]:
    for f in scenario_files(paths):
        yield from load_runs(f)
