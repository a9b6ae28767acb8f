"""Parse a request log's line against the line before it: a member whose raw JSON text is the
previous line's, character for character, is the previous line's value (the same object).

A log that sends the whole conversation on every line repeats its history as text; parsing it again
costs the whole history per line, and rendering it again more. Here the top-level object and the
objects in its members (two levels down: `{"request": {"body": {...}}}`) are walked member by
member, and an array member element by element; an element, or any other object or string member,
whose text starts where the previous line's same member (same key path, same index) started with
the same text is not parsed again. That is exact: an object, array or string ends at its own closing
character, so the same text parses to the same value; a number (`1` vs `12`) is never reused.
Readers recognise reused values by identity (`render.History`), so they never re-render them.

Anything the walk does not expect (a line that is not an object, a syntax error, a BOM) is parsed by
`json.loads` instead, which gives the value or raises exactly its own error.
"""
from __future__ import annotations

import json
from collections import deque
from typing import Any

_scan = json.JSONDecoder().scan_once   # the C scanner json.loads runs
_WS = " \t\n\r"                        # JSON whitespace, as json.loads skips it
_REUSABLE = "{[\""                     # values that end at their own closing character
_DEPTH = 3                             # object levels walked member by member
#: Earlier lines whose arrays a line's array may repeat, besides the previous line's: a gateway's log
#: interleaves conversations, so a conversation's last request is often lines back (issue 35). At most
#: this many lines and this many characters of them are kept (the line's text and its values).
RECENT_LINES = 64
RECENT_CHARS = 16 << 20
_TAIL = 64                             # characters compared first: a line of another conversation
                                       # parts from an array long before its end
_REF = 8                               # bytes of a reference to a shared value (`LineParser.fresh`)


class _Unexpected(Exception):
    """The walk met something it leaves to json.loads."""


def _ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


class LineParser:
    """`loads(line)` as json.loads would give it, sharing values with the previous line's (and an
    array's leading elements with those of a recent line's array at the same path).
    One per reader (one log, in order): it holds the previous line's members and their text."""

    def __init__(self) -> None:
        self._prev: dict[tuple, tuple[str, Any]] = {}
        self._items: dict[tuple, tuple] = {}   # an array: (line, where it starts, its elements: starts, ends, values)
        # The arrays of recent lines (the previous line's last), with the characters of each line.
        self._recent: deque[tuple[dict[tuple, tuple], int]] = deque()
        self._chars = 0
        # (a recent line's arrays, the path, whether all of it, its length) this line's arrays repeat
        self._used: list[tuple[dict, tuple, bool, int]] = []
        self.reused = 0   # values taken from the previous line (tests look at it)
        # Characters of the last line whose values are new objects (not shared with earlier lines'),
        # plus _REF for each shared value (its reference in this line's list or dict): what holding the
        # line's value costs beyond the lines before it (`timeorder.HOLD`).
        self.fresh = 0
        self._shared = 0

    def copy(self) -> LineParser:
        """A parser that goes on from the same previous lines (a line's state is never changed once
        made: each `loads` makes new tables)."""
        other = LineParser()
        other._prev, other._items = self._prev, self._items
        other._recent, other._chars = deque((dict(probes), n) for probes, n in self._recent), self._chars
        return other

    def _keep(self, items: dict, chars: int) -> None:
        """Keep the line's arrays that a later line may repeat, each with what `_leading` looks at first,
        in place of the recent arrays it repeats whole or grows (a conversation's last line stands
        for it: memory follows the conversations in flight, not the lines kept)."""
        if self._used:
            for older, path, whole, n in self._used:
                if whole or len(items[path][4]) > n:
                    older.pop(path, None)
            self._used = []
            self._recent = deque(e for e in self._recent if e[0])
            self._chars = sum(n for _, n in self._recent)
        probes = {}
        for path, old in items.items():
            o_s, o_base, o_starts, o_ends, o_values = old
            m = len(o_values) - 1
            if m > 0 and o_s[o_base + o_starts[m - 1]] in _REUSABLE:
                end = o_ends[m - 1]
                probes[path] = (o_ends[m], end, o_s[o_base + max(0, end - _TAIL):o_base + end], old)
        if probes:
            self._recent.append((probes, chars))
            self._chars += chars
            while len(self._recent) > 1 and (len(self._recent) > RECENT_LINES or self._chars > RECENT_CHARS):
                self._chars -= self._recent.popleft()[1]

    def loads(self, s: str) -> Any:
        prev, items = {}, {}
        self._shared = 0
        try:
            i = _ws(s, 0)
            if i >= len(s) or s[i] != "{":
                raise _Unexpected
            obj, end = self._object(s, i, (), prev, items)
            if _ws(s, end) != len(s):
                raise _Unexpected
        except Exception:   # whatever went wrong, json.loads says it its own way (or parses the line)
            self._prev, self._items = {}, {}
            self._recent, self._chars, self._used = deque(), 0, []
            self.fresh = len(s)
            return json.loads(s)
        self.fresh = len(s) - self._shared
        self._prev, self._items = prev, items
        self._keep(items, len(s))
        return obj

    def _value(self, s: str, i: int, path: tuple, prev: dict, items: dict) -> tuple[Any, int]:
        c = s[i] if i < len(s) else ""
        if c == "{" and len(path) < _DEPTH:
            return self._object(s, i, path, prev, items)
        if c == "[":
            return self._array(s, i, path, items)
        if c in _REUSABLE and c:
            old = self._prev.get(path)
            if old is not None and s.startswith(old[0], i):
                self.reused += 1
                self._shared += len(old[0]) - _REF
                prev[path] = old
                return old[1], i + len(old[0])
            value, end = _scan(s, i)
            prev[path] = (s[i:end], value)
            return value, end
        return _scan(s, i)

    def _object(self, s: str, i: int, path: tuple, prev: dict, items: dict) -> tuple[dict, int]:
        out: dict[str, Any] = {}
        i = _ws(s, i + 1)
        if s[i:i + 1] == "}":
            return out, i + 1
        while True:
            if s[i:i + 1] != '"':
                raise _Unexpected
            key, i = _scan(s, i)
            i = _ws(s, i)
            if s[i:i + 1] != ":":
                raise _Unexpected
            # A repeated key keeps its first place and its last value, as in json.loads.
            out[key], i = self._value(s, _ws(s, i + 1), (*path, key), prev, items)
            i = _ws(s, i)
            c = s[i:i + 1]
            if c == "}":
                return out, i + 1
            if c != ",":
                raise _Unexpected
            i = _ws(s, i + 1)

    def _leading(self, s: str, i: int, path: tuple) -> tuple | None:
        """Of the arrays at `path` of the recent lines whose elements but the last the text at s[i]
        repeats, the one whose text it repeats furthest (its last element counted when repeated too;
        the latest of equals), None if none: a conversation's own last request, not another's that
        shares its system prompt."""
        best, most, at, all_of = None, 0, None, False
        for probes, _ in reversed(self._recent):
            probe = probes.get(path)
            if probe is None or probe[0] <= most:
                continue
            whole, end, tail, old = probe
            if not s.startswith(tail, i + end - len(tail)):
                continue
            o_s, o_base, o_starts, o_ends, o_values = old
            if not s.startswith(o_s[o_base:o_base + end], i):
                continue
            m = len(o_values) - 1
            if o_s[o_base + o_starts[m]] in _REUSABLE and s.startswith(o_s[o_base + o_starts[m]:o_base + whole],
                                                                         i + o_starts[m]):
                end = whole
            if end > most:
                best, most, at, all_of = old, end, probes, end == whole
        if best is not None:
            self._used.append((at, path, all_of, len(best[4])))
        return best

    def _array(self, s: str, i: int, path: tuple, items: dict) -> tuple[list, int]:
        """The array at s[i]. A recent line's elements but its last are taken in one comparison
        when the text repeats them (a conversation's cache marker moves off its last message, so
        that one is often new), the others one by one against that line's (else the previous line's)."""
        out: list[Any] = []
        starts: list[int] = []   # where each element's text starts and ends, from the array's first
        ends: list[int] = []
        i = _ws(s, i + 1)
        base = i
        if s[i:i + 1] == "]":
            items[path] = (s, base, starts, ends, out)
            return out, i + 1
        lead = self._leading(s, i, path)
        old = lead or self._items.get(path)
        if old is not None:
            o_s, o_base, o_starts, o_ends, o_values = old
            m = len(o_values) - 1
            if lead is not None:
                self.reused += m
                out, starts, ends = o_values[:m], o_starts[:m], o_ends[:m]
                self._shared += ends[-1] - _REF * m
                i = _ws(s, base + ends[-1])
                c = s[i:i + 1]
                if c == "]":
                    items[path] = (s, base, starts, ends, out)
                    return out, i + 1
                if c != ",":
                    raise _Unexpected
                i = _ws(s, i + 1)
        while True:
            k = len(out)
            value = None
            if old is not None and k < len(o_values) and o_s[o_base + o_starts[k]] in _REUSABLE:
                text = o_s[o_base + o_starts[k]:o_base + o_ends[k]]
                if s.startswith(text, i):
                    self.reused += 1
                    self._shared += len(text) - _REF
                    value, end = o_values[k], i + len(text)
            if value is None:
                value, end = _scan(s, i)
            out.append(value)
            starts.append(i - base)
            ends.append(end - base)
            i = _ws(s, end)
            c = s[i:i + 1]
            if c == "]":
                items[path] = (s, base, starts, ends, out)
                return out, i + 1
            if c != ",":
                raise _Unexpected
            i = _ws(s, i + 1)
