"""Every JSON file a scenario or a command names (a `file:` request body, a JSON price sheet) goes
through here: a regular file under a size cap, UTF-8, strict JSON (no NaN or Infinity literals),
and every value checked (finite numbers of sane size, nesting depth, valid Unicode text), each error
at the line of the value that caused it.

Python's json module keeps no positions, so a problem found after parsing is located by finding its
text in the file: the first literal of that number, the first escape of that surrogate, the first
bracket past the depth limit.
"""
from __future__ import annotations

import json
import re
from typing import Any

from prefixsim.errors import UserError
from prefixsim.io.userfiles import MAX_BODY_BYTES, MAX_DEPTH, decode_utf8, read_capped, too_many_digits, value_problem


class _BadLiteral(ValueError):
    """Raised from inside the parser's hooks; carries the literal so its line can be found."""

    def __init__(self, literal: str, problem: str) -> None:
        super().__init__(problem)
        self.literal = literal
        self.problem = problem


def _constant(name: str) -> float:
    raise _BadLiteral(name, f"{name} is not JSON (and not a usable number); give a finite value")


def _number(literal: str, parse):
    """A JSON number literal parsed by `parse` (float or int), refused when it is too long or unusable."""
    if too_many_digits(literal):
        raise _BadLiteral(literal, f"number with {len(literal):,} characters is too large")
    v = parse(literal)
    problem = value_problem(v)
    if problem:
        raise _BadLiteral(literal, problem)
    return v


def _float(literal: str) -> float:
    return _number(literal, float)


def _int(literal: str) -> int:
    return _number(literal, int)


def load_json(path: str, what: str, cap: int = MAX_BODY_BYTES, shown: str | None = None) -> Any:
    """Parse one JSON file within the limits above; errors name it as `shown` (default `path`)."""
    name = shown or path
    text = decode_utf8(read_capped(path, cap, what, name), name)
    return parse_json(text, name)


def parse_json(text: str, name: str) -> Any:
    """Strict JSON text -> data, every value checked (see the module docstring)."""
    try:
        doc = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as e:
        raise UserError(f"not valid JSON: {e.msg}", name, e.lineno, e.colno) from None
    except _BadLiteral as e:
        raise UserError(e.problem, name, *_line_of_literal(text, e.literal)) from None
    except RecursionError:
        raise UserError(f"nested more than {MAX_DEPTH} levels deep; flatten it", name,
                        *_line_of_depth(text)) from None
    check_json_tree(doc, text, name)
    return doc


def check_json_tree(doc: Any, text: str, name: str) -> None:
    """Depth and text of a parsed document (numbers were checked while parsing), without recursion."""
    stack = [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            if depth >= MAX_DEPTH:
                raise UserError(f"nested more than {MAX_DEPTH} levels deep; flatten it", name, *_line_of_depth(text))
            for k, v in node.items():
                _check_text(k, text, name)
                stack.append((v, depth + 1))
        elif isinstance(node, list):
            if depth >= MAX_DEPTH:
                raise UserError(f"nested more than {MAX_DEPTH} levels deep; flatten it", name, *_line_of_depth(text))
            stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, str):
            _check_text(node, text, name)


def _check_text(s: str, text: str, name: str) -> None:
    problem = value_problem(s)
    if problem:
        m = _LONE_ESCAPE.search(text)
        line = (text.count("\n", 0, m.start()) + 1, None) if m else (None, None)
        raise UserError(problem, name, *line)


# A \uD800-\uDFFF escape that is not half of a pair (a high one followed by a low one).
_LONE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                          r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _line_of_literal(text: str, literal: str) -> tuple[int | None, int | None]:
    """Line and column of the first bare occurrence of a number (or NaN / Infinity) outside strings."""
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|' + re.escape(literal) + r"(?![0-9A-Za-z.])", text):
        if not m.group().startswith('"'):
            return _position(text, m.start())
    return None, None


def _line_of_depth(text: str) -> tuple[int | None, int | None]:
    """Line and column of the first bracket that opens level MAX_DEPTH + 1 (strings skipped)."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return _position(text, m.start())
        elif c in "]}":
            depth -= 1
    return None, None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
