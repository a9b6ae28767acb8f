"""Scenarios handed to the library rather than named as a file: a YAML string or a mapping, and
overrides of any of its values, so a notebook can sweep a design without writing files.

The scenario then goes through exactly the loader a file does (`load_runs` with the parsed node):
the same checks, defaults and errors. Errors name `name` (default `<scenario>`) and, for YAML text,
its line and column; `file:` references resolve beside `name`, so a mapping that names a body file
sets `name` to a path in the folder that holds it.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from prefixsim.errors import UserError
from prefixsim.io.userfiles import MAX_YAML_BYTES
from prefixsim.io.yamlfile import check_tree, parse_yaml
from prefixsim.scenario.loader import Run, load_runs, read_yaml

#: What a scenario given without a file is called in its errors and results.
INLINE_NAME = "<scenario>"

Source = str | os.PathLike | Mapping


def scenario_node(source: Source, overrides: Mapping[str, Any] | None = None,
                  name: str | None = None) -> tuple[str, Any]:
    """(the name the scenario goes by, its parsed document with `overrides` applied). A path to an
    existing file reads that file; a string that is not one is YAML text; a mapping is the document
    itself (copied: the caller's is never changed)."""
    if isinstance(source, Mapping):
        where = name or INLINE_NAME
        node: Any = _plain_copy(source, where)
        check_tree(node, where)
    elif isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if isinstance(text, bytes):
            raise UserError("a scenario is a path, YAML text or a mapping, not bytes")
        if "\n" not in text and os.path.isfile(text):
            where, node = text, read_yaml(text)   # a file goes by its own path (`name` is for text and mappings)
        elif "\n" not in text and ":" not in text:
            raise UserError("no such scenario file (and not YAML text: a scenario maps `name:` and other keys)", text)
        else:
            where = name or INLINE_NAME
            if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
                raise UserError(f"the scenario text is larger than {MAX_YAML_BYTES:,} bytes (the limit of a "
                                "scenario file)", where)
            node = parse_yaml(text, where)
    else:
        raise UserError(f"a scenario is a path, YAML text or a mapping, not {type(source).__name__}")
    for key, value in (overrides or {}).items():
        node = _override(node, str(key), value, where)
    return where, node


def load_scenario(source: Source, overrides: Mapping[str, Any] | None = None, name: str | None = None) -> list[Run]:
    """Every run the scenario asks for (variants x sweep values), validated as a file is."""
    where, node = scenario_node(source, overrides, name)
    return load_runs(where, node)


def _plain_copy(value: Any, where: str, depth: int = 0) -> Any:
    """The caller's mapping rebuilt as plain dicts and lists (tuples are lists), so nothing done to it
    reaches theirs; other values as they are, for the scenario's own checks to judge."""
    if depth > 200:
        raise UserError("the mapping is nested too deeply (or refers to itself)", where)
    if isinstance(value, Mapping):
        return {k: _plain_copy(v, where, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_copy(v, where, depth + 1) for v in value]
    return value   # a scalar: nothing of the caller's to share


def _override(node: Any, key: str, value: Any, where: str) -> Any:
    """`node` with the value at the dotted `key` set to `value`: `ttl`, `vars.history`,
    `variants.0.stagger` or `variants.fork children.stagger` (a variant by its name). A mapping
    value merges into the mapping already there; anything else replaces what was there."""
    parts = key.split(".")
    if not key or any(not p for p in parts):
        raise UserError(f"override {key!r}: a dotted key such as `ttl`, `vars.history` or `variants.0.stagger`", where)
    if not isinstance(node, dict):
        raise UserError(f"override {key!r}: the scenario is not a mapping", where)
    here: Any = node
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        shown = ".".join(parts[:i + 1])
        if isinstance(here, dict):
            if last:
                here[part] = _merged(here.get(part), value, where)
                return node
            if part not in here or here[part] is None:
                here[part] = {}
            here = here[part]
        elif isinstance(here, list):
            idx = _index(here, part, key, shown, where)
            if last:
                here[idx] = _merged(here[idx], value, where)
                return node
            here = here[idx]
        else:
            raise UserError(f"override {key!r}: {'.'.join(parts[:i])} is a single value, not a mapping or a list",
                            where)
    return node


def _index(items: list, part: str, key: str, shown: str, where: str) -> int:
    """A list position by number, or the item whose `name:` is `part` (a variant by its name)."""
    if part.lstrip("-").isdigit():
        idx = int(part)
        if -len(items) <= idx < len(items):
            return idx % len(items)
        raise UserError(f"override {key!r}: {shown} is past the end ({len(items)} item{'s' if len(items) != 1 else ''})",
                        where)
    names = [x.get("name") for x in items if isinstance(x, dict)]
    for j, x in enumerate(items):
        if isinstance(x, dict) and x.get("name") == part:
            return j
    listed = ", ".join(repr(n) for n in names if n is not None) or "none has a name"
    raise UserError(f"override {key!r}: no item named {part!r} at {shown.rpartition('.')[0]} ({listed})", where)


def _merged(old: Any, value: Any, where: str) -> Any:
    new = _plain_copy(value, where)
    if isinstance(old, dict) and isinstance(new, dict):
        for k, v in new.items():
            old[k] = _merged(old.get(k), v, where)
        return old
    return new
