"""Reads scenario files: safe YAML with line numbers, `${var}` substitution, sweeps, variants.

Every mistake becomes a UserError at `file:line:col` with what would be right.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
import re
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ..errors import UserError
from .checks import check_run, read_body, resolve_file, shown_path
from .messages import is_mismatch, message, union_message, where
from .schema import Scenario, Settings, Variant

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
    from ruamel.yaml.constructor import RoundTripConstructor

    class Constructor(RoundTripConstructor):
        """Dates stay text: `price_date: 2026-13-01` is then our located error, not ruamel's bare one."""

    Constructor.add_constructor("tag:yaml.org,2002:timestamp", RoundTripConstructor.construct_yaml_str)
    y = YAML(typ="rt", pure=True)
    y.Constructor = Constructor
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
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    try:
        doc = _yaml().load(text)
    except DuplicateKeyError as e:
        mark, first = e.problem_mark, e.context_mark
        key = re.search(r'duplicate key "(.*?)"', e.problem or "")
        name = repr(key.group(1)) if key else "key"
        since = f"first set on line {first.line + 1}; " if first else ""
        raise UserError(f"duplicate key {name} ({since}keep one)", path,
                        mark.line + 1 if mark else None, mark.column + 1 if mark else None) from None
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = (e.problem or e.context or "invalid YAML").strip()
        raise UserError(f"YAML syntax error: {what}", path, mark.line + 1 if mark else None,
                        mark.column + 1 if mark else None) from None
    except YAMLError as e:
        raise UserError(f"YAML error: {str(e).splitlines()[0]}", path) from None
    if doc is None:
        raise UserError("empty file: only comments (a scenario needs at least `name:`)", path, 1)
    _refuse_tags(doc, path)
    return doc


#: Explicit tags a scenario may use: YAML's plain scalar and collection types, nothing that builds objects.
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq"))
#: Nodes after expanding aliases; a document past this is an alias bomb, not a scenario.
MAX_NODES = 1_000_000


def _refuse_tags(node: Any, path: str, where: tuple[int | None, int | None] = (None, None),
                 seen: set[int] | None = None) -> None:
    """A tag like !!python/object is never constructed (the loader is safe); say so at its line
    instead of passing a tagged value on. An aliased container is visited once."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    seen = set() if seen is None else seen
    if isinstance(node, (CommentedMap, CommentedSeq)):
        if id(node) in seen:
            return
        seen.add(id(node))
    tag = getattr(node, "tag", None)
    value = getattr(tag, "value", None) if tag is not None else None
    if value and value not in _PLAIN_TAGS:
        shown = value.replace("tag:yaml.org,2002:", "!!")
        raise UserError(f"YAML tag {shown} is not allowed in a scenario (plain values only: text, numbers, "
                        "true/false, lists, mappings)", path, *where)
    if isinstance(node, CommentedMap):
        for k, v in node.items():
            try:
                line, col = node.lc.key(k)
                pos = (line + 1, col + 1)
            except (KeyError, TypeError, AttributeError):
                pos = where
            _refuse_tags(v, path, pos, seen)
    elif isinstance(node, CommentedSeq):
        for i, v in enumerate(node):
            try:
                line, col = node.lc.item(i)
                pos = (line + 1, col + 1)
            except (KeyError, TypeError, IndexError, AttributeError):
                pos = where
            _refuse_tags(v, path, pos, seen)


def _plain(node: Any, path: str = "", budget: list[int] | None = None) -> Any:
    """ruamel's commented containers -> plain dicts and lists (pydantic sees plain data). Aliases are
    expanded here, so the node count is bounded: `&a [*b, *b, ...]` chains grow exponentially."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise UserError(f"more than {MAX_NODES:,} values once YAML aliases are expanded (an alias bomb?); "
                        "write the scenario out plainly", path)
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v, path, budget) for k, v in node.items()}
    if isinstance(node, (list, set)):
        return [_plain(v, path, budget) for v in node]
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


def validation_error(e: ValidationError, node: Any, path: str) -> UserError:
    """The error nearest the top of the file, as one line. A union reports one error per branch:
    a branch's "wrong type" is dropped when another branch at the same place says more."""
    errs = e.errors()
    kept = [m for m in errs if not (is_mismatch(m) and any(
        not is_mismatch(s) and where(s["loc"]).startswith(where(m["loc"])) for s in errs))]
    # At one place an unknown key says more than the missing one it was probably meant to be.
    (line, col), err = min(((locate(node, x["loc"]), x) for x in kept),
                           key=lambda x: (x[0][0] or 10**9, x[0][1] or 0, x[1]["type"] == "missing"))
    siblings = [x for x in kept if is_mismatch(x) and where(x["loc"]) == where(err["loc"])]
    text = union_message(siblings) if is_mismatch(err) and len(siblings) > 1 else message(err)
    return UserError(text, path, line, col)


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
        kind = "a list" if isinstance(node, list) else f"a single value ({node!r:.40})"
        raise UserError(f"the file is {kind}; a scenario is a mapping (`name: ...` and other keys)", path, 1)
    doc = _plain(node, path)
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
            check_run(settings, sc, path, *_where(node, vi if sc.variants else None))
            name = v.name if param is None else f"{v.name} [{param}={value}]"
            runs.append(Run(sc, name, settings, value, path))
    return runs


def _has_placeholder(node: Any) -> bool:
    if isinstance(node, dict):
        return any(_has_placeholder(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_placeholder(v) for v in node)
    return isinstance(node, str) and "${" in node


def _where(node: Any, variant_index: int | None) -> tuple[Callable, Callable]:
    """Locators for a variant's merged settings: a key the variant sets is found in the variant,
    any other in the scenario itself."""
    def where(dotted: str) -> tuple[int | None, int | None]:
        parts = tuple(dotted.split("."))
        if variant_index is not None:
            v = node["variants"][variant_index]
            if isinstance(v, dict) and parts[0] in v:
                return locate(node, ("variants", variant_index, *parts))
        return locate(node, parts)

    def step_where(k: int) -> tuple[int | None, int | None]:
        line, col = where("timeline")
        inner = ("variants", variant_index, "timeline", k) if variant_index is not None and \
            "timeline" in (node["variants"][variant_index] or {}) else ("timeline", k)
        found = locate(node, inner)
        return found if found[0] is not None else (line, col)

    return where, step_where


def load_json_file(run: Run, rel: str) -> dict:
    """A `file:` reference: relative to the scenario, and never outside the scenario's folder tree."""
    try:
        return read_body(resolve_file(run.path, rel), shown_path(run.path, rel))
    except UserError as e:
        raise e if e.path else e.located(run.path) from None
