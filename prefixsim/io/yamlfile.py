"""Every YAML file prefixsim reads goes through here: a regular file under a size cap, UTF-8, safe
loading (no object construction, no tag but plain ones), duplicate keys refused, and the loaded tree
checked once with line numbers — alias expansion (an alias bomb), nesting depth, non-finite or
absurdly large numbers, lone surrogates. Anything that still escapes the parser (a RecursionError
from nesting, a ValueError from a 5,000-digit integer) becomes an error at the line that caused it.

`load_yaml` reads a file; `check_tree` checks a document loaded some other way (a VCR cassette read
with a safe loader), so every YAML input shares the same limits.
"""
from __future__ import annotations

import re
from typing import Any

from prefixsim.errors import UserError
from prefixsim.io.userfiles import MAX_DEPTH, MAX_YAML_BYTES, decode_utf8, read_capped, too_many_digits, value_problem

#: Values once YAML aliases are expanded; past this a document is an alias bomb, not a hand-written
#: file (`&a [x, x]`, `&b [*a, *a]`, ... doubles with every line).
MAX_NODES = 1_000_000
#: Explicit tags a document may use: YAML's plain scalar and collection types, nothing that builds objects.
PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq"))

Pos = tuple[int | None, int | None]


def _yaml():
    from ruamel.yaml import YAML  # lazy: start-up: the YAML parser loads only to read YAML
    from ruamel.yaml.constructor import RoundTripConstructor  # lazy: start-up: the YAML parser loads only to read YAML

    class Constructor(RoundTripConstructor):
        """Dates stay text: `price_date: 2026-13-01` is then our located error, not ruamel's bare one."""

    Constructor.add_constructor("tag:yaml.org,2002:timestamp", RoundTripConstructor.construct_yaml_str)
    y = YAML(typ="rt", pure=True)
    y.Constructor = Constructor
    y.allow_duplicate_keys = False
    return y


def load_yaml(path: str, what: str = "scenario", cap: int = MAX_YAML_BYTES, needs: str = "`name:`") -> Any:
    """Parse one YAML file safely, keeping node positions (ruamel's round-trip containers, which are
    dict and list subclasses with `.lc`), and check the whole tree (`check_tree`). `what` names the
    file in messages; `needs` says what an empty one lacks."""
    return parse_yaml(decode_utf8(read_capped(path, cap, what), path), path, what, needs)


def parse_yaml(text: str, path: str, what: str = "scenario", needs: str = "`name:`") -> Any:
    """`load_yaml` on text already read (a scenario given as a string): the same parse and checks,
    errors naming `path`."""
    from ruamel.yaml.constructor import DuplicateKeyError  # lazy: start-up: the YAML parser loads only to read YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError  # lazy: start-up: the YAML parser loads only to read YAML

    if not text.strip():
        raise UserError(f"empty file (a {what} needs at least {needs})", path, 1)
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
        what_ = (e.problem or e.context or "invalid YAML").strip()
        raise UserError(f"YAML syntax error: {what_}", path, mark.line + 1 if mark else None,
                        mark.column + 1 if mark else None) from None
    except YAMLError as e:
        raise UserError(f"YAML error: {str(e).splitlines()[0]}", path) from None
    except (RecursionError, ValueError, OverflowError, MemoryError) as e:
        raise _culprit(text, path, e) from None
    if doc is None:
        raise UserError(f"empty file: only comments (a {what} needs at least {needs})", path, 1)
    check_tree(doc, path, what)
    return doc


def _culprit(text: str, path: str, e: BaseException) -> UserError:
    """The line of what made the parser itself fail: nesting past MAX_DEPTH or a numeric literal
    Python will not convert. Found by re-reading the tokens (the scanner does not recurse)."""
    # lazy: start-up: the YAML parser loads only to read YAML
    from ruamel.yaml.tokens import (
        BlockEndToken,
        BlockMappingStartToken,
        BlockSequenceStartToken,
        FlowMappingEndToken,
        FlowMappingStartToken,
        FlowSequenceEndToken,
        FlowSequenceStartToken,
        ScalarToken,
    )

    opens = (BlockMappingStartToken, BlockSequenceStartToken, FlowMappingStartToken, FlowSequenceStartToken)
    closes = (BlockEndToken, FlowMappingEndToken, FlowSequenceEndToken)
    depth = 0
    try:
        for tok in _yaml().scan(text):
            m = tok.start_mark
            if isinstance(tok, opens):
                depth += 1
                if depth > MAX_DEPTH:
                    return UserError(f"nested more than {MAX_DEPTH} levels deep; flatten it", path,
                                     m.line + 1, m.column + 1)
            elif isinstance(tok, closes):
                depth -= 1
            elif isinstance(tok, ScalarToken) and tok.plain and too_many_digits(tok.value) and \
                    re.fullmatch(r"[-+]?[0-9_.eE+-]+|[-+]?0[xXoObB][0-9a-fA-F_]+", tok.value):
                return UserError(f"number with {len(tok.value):,} characters is too large; "
                                 "quote it if it is text", path, m.line + 1, m.column + 1)
    except Exception:  # the scan is only a search for the line; the error below still names the file
        pass
    return UserError(f"cannot read this YAML: {type(e).__name__}: {str(e)[:120]}", path)


def check_tree(doc: Any, path: str, what: str = "scenario") -> None:
    """One pass over a loaded document: plain tags only, at most MAX_DEPTH levels, at most MAX_NODES
    values once aliases are expanded, every scalar usable (finite numbers of sane size, valid text).
    Each error names the line of the value (when the document kept positions). An aliased container
    is visited once: its expanded size is counted, never expanded."""
    sizes: dict[int, tuple[int, int]] = {}   # id(container) -> (expanded values, height)
    busy: set[int] = set()

    def visit(node: Any, where: Pos, depth: int, loc: str) -> tuple[int, int]:
        _check_tag(node, path, what, where)
        if not isinstance(node, (dict, list)):
            problem = value_problem(node)
            if problem:
                raise UserError(f"{loc}: {problem}" if loc else problem, path, *where)
            return 1, 0
        key = id(node)
        if key in sizes:
            size, height = sizes[key]
        else:
            if key in busy:
                raise UserError("a YAML alias refers to a value that contains it; write it out plainly",
                                path, *where)
            if depth > MAX_DEPTH:
                raise UserError(f"nested more than {MAX_DEPTH} levels deep; flatten it", path, *where)
            busy.add(key)
            size, height = 1, 0
            for child, pos, sub in _children(node, where, path, loc):
                s, h = visit(child, pos, depth + 1, sub)
                size += s
                height = max(height, h + 1)
                if size > MAX_NODES:
                    break
            busy.discard(key)
            sizes[key] = (size, height)
        if depth + height > MAX_DEPTH:
            raise UserError(f"nested more than {MAX_DEPTH} levels deep; flatten it", path, *where)
        if size > MAX_NODES:
            raise UserError(f"more than {MAX_NODES:,} values once YAML aliases are expanded (an alias bomb?); "
                            f"write the {what} out plainly", path)
        return size, height

    visit(doc, (None, None), 0, "")


def _children(node: Any, where: Pos, path: str, loc: str):
    """(child, its line and column, its dotted path like `timeline[2].wait`) of a container."""
    lc = getattr(node, "lc", None)
    if isinstance(node, dict):
        for k, v in node.items():
            pos = where
            if lc is not None:
                try:
                    line, col = lc.key(k)
                    pos = (line + 1, col + 1)
                except (KeyError, TypeError, AttributeError):
                    pass
            problem = value_problem(k)
            if problem:
                raise UserError(f"a key: {problem}", path, *pos)
            yield v, pos, f"{loc}.{k}" if loc else str(k)
    else:
        for i, v in enumerate(node):
            pos = where
            if lc is not None:
                try:
                    line, col = lc.item(i)
                    pos = (line + 1, col + 1)
                except (KeyError, TypeError, IndexError, AttributeError):
                    pass
            yield v, pos, f"{loc}[{i}]"


def _check_tag(node: Any, path: str, what: str, where: Pos) -> None:
    """A tag like !!python/object is never constructed (the loader is safe); say so at its line
    instead of passing a tagged value on."""
    tag = getattr(node, "tag", None)
    value = getattr(tag, "value", None) if tag is not None else None
    if value and value not in PLAIN_TAGS:
        shown = value.replace("tag:yaml.org,2002:", "!!")
        raise UserError(f"YAML tag {shown} is not allowed in a {what} (plain values only: text, numbers, "
                        "true/false, lists, mappings)", path, *where)
