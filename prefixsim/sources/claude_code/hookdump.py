"""Claude Code transcripts that a hook saved as one JSON array (`logs/chat.json`: a Stop or
SubagentStop hook reads the session's transcript and writes its lines as the elements of a list).
The elements are the transcript's lines in their order, so the array is read as the JSONL it was
made from: each element at the line of the file where it starts, a bad element skipped and named
like a bad line, the rest read."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefixsim.sources import problems
from prefixsim.sources.files import open_regular, suffix

#: Elements looked at to tell a transcript array from another hook's log (an array of hook payloads).
SNIFF_ELEMENTS = 20
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def is_array_file(path: Path) -> bool:
    """A `.json` file whose first character (after white space) opens a list."""
    if suffix(path) != ".json" or not path.is_file():
        return False
    with open_regular(path) as fh:
        head = fh.read(64).lstrip()
    return head.startswith(b"[")


def iter_elements(path: Path, limit: int | None = None) -> Iterator[tuple[int, Any]]:
    """(line the element starts on, parsed element) for each element of the top-level list. An element
    that does not parse is skipped and named, and reading goes on at the next element that starts a
    line of its own (a hook writes one per line, or indented by two); `limit` stops after that many."""
    where = str(path)
    with open_regular(path) as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.skip(where, None, f"not UTF-8 text (byte {e.start}); nothing read")
        return
    i = _skip(text, 0)
    if not text.startswith("[", i):
        problems.skip(where, None, "not a JSON array of transcript lines; nothing read")
        return
    i, line, counted, n = i + 1, 1, 0, 0
    while True:
        i = _skip(text, i, ",")
        if i >= len(text) or text[i] == "]":
            return
        line += text.count("\n", counted, i)
        counted = i
        try:
            obj, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError as e:
            nxt = _next_element(text, i + 1)
            problems.skip(where, line, f"not valid JSON ({e.msg})" + ("" if nxt >= 0 else "; the rest of the file is not read"))
            if nxt < 0:
                return
            i = nxt
            continue
        except problems.LINE_ERRORS as e:   # deep nesting, a 5,000-digit integer
            problems.skip(where, line, problems.unusable(e))
            i = _next_element(text, i + 1)
            if i < 0:
                return
            continue
        yield line, obj
        n += 1
        if limit is not None and n >= limit:
            return
        i = end


def _skip(text: str, i: int, also: str = "") -> int:
    while i < len(text) and (text[i] in _SPACE or text[i] in also):
        i += 1
    return i


def _next_element(text: str, i: int) -> int:
    """Where the next element that starts a line begins (-1: none)."""
    best = -1
    for mark in ("\n  {", "\n{"):
        k = text.find(mark, i)
        if k >= 0 and (best < 0 or k < best):
            best = k + len(mark) - 1
    return best
