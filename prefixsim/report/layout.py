"""Plain-text tables that fit a width: headers wrap at spaces (never inside a word), text columns
wrap onto continuation lines, and a cause too long for its column moves to a numbered footnote.
Pure string work, so the output is the same bytes at the same width on every machine."""
from __future__ import annotations

import textwrap
from typing import Callable, Sequence

GAP = 2
#: Width of terminal output when it is not a terminal (a pipe, a file, a test): fixed, so the bytes
#: do not depend on who runs it.
DEFAULT_WIDTH = 120
#: Text columns narrow to WRAP_TEXT before any header wraps, and never below MIN_TEXT.
WRAP_TEXT = 30
MIN_TEXT = 12


def _wrap(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def _header_lines(text: str, width: int) -> list[str]:
    """A header over as many lines as it needs at `width`, broken only at spaces."""
    return textwrap.wrap(text, max(width, 1), break_long_words=False, break_on_hyphens=False) or [""]


def fit(head: Sequence[str], body: Sequence[Sequence[str]], numeric: Sequence[bool], width: int,
        wrappable: Sequence[bool], rule: bool = True, right: Callable[[str], bool] | None = None) -> str:
    """An aligned table no wider than `width` when it can be: first headers wrap at their spaces, then
    the wrappable (text) columns narrow, widest first, their cells wrapping onto extra lines."""
    n = len(head)
    cell_w = [max([len(r[i]) for r in body] or [0]) for i in range(n)]
    word_w = [max(len(w) for w in (h.split() or [""])) for h in head]
    widths = [max(len(h), c) for h, c in zip(head, cell_w)]

    def total(ws):
        return sum(ws) + GAP * (n - 1)

    def narrow(floor: int) -> None:   # the widest text column first, down to `floor`
        while total(widths) > width:
            cands = [i for i in range(n) if wrappable[i] and widths[i] > max(floor, word_w[i])]
            if not cands:
                return
            i = max(cands, key=lambda j: (widths[j], -j))
            widths[i] = max(floor, word_w[i], widths[i] - (total(widths) - width))

    narrow(WRAP_TEXT)
    # Then headers over two or more lines, at spaces only: the one that gives back most first, and
    # only as many as it takes.
    for i in sorted((i for i in range(n) if not wrappable[i]), key=lambda i: (-(widths[i] - max(cell_w[i], word_w[i])), i)):
        if total(widths) <= width:
            break
        widths[i] = max(cell_w[i], word_w[i], widths[i] - (total(widths) - width))
    narrow(MIN_TEXT)
    heads = [_header_lines(h, w) for h, w in zip(head, widths)]
    depth = max(len(h) for h in heads)
    lines: list[str] = []

    def emit(cells: list[str]) -> None:   # `right`, when given, aligns each cell by its own text
        lines.append("  ".join(c.rjust(w) if (right(c) if right else num) else c.ljust(w)
                               for c, w, num in zip(cells, widths, numeric)).rstrip())

    for k in range(depth):   # headers bottom-aligned, like a spreadsheet's, and aligned as their column
        lines.append("  ".join((c.rjust(w) if (right(c) if right else num) else c.ljust(w)) for c, w, num in zip(
            [h[k - (depth - len(h))] if k >= depth - len(h) else "" for h in heads], widths, numeric)).rstrip())
    if rule:
        emit(["-" * w for w in widths])
    for row in body:
        wrapped = [_wrap(c, w) if wrappable[i] else [c] for i, (c, w) in enumerate(zip(row, widths))]
        for k in range(max(len(x) for x in wrapped)):
            emit([x[k] if k < len(x) else "" for x in wrapped])
    return "\n".join(lines)


def min_width(head: Sequence[str], body: Sequence[Sequence[str]], wrappable: Sequence[bool]) -> int:
    """The narrowest `fit` can make this table (headers at their longest word, text at MIN_TEXT)."""
    total = 0
    for i, h in enumerate(head):
        word = max(len(w) for w in (h.split() or [""]))
        cells = max([len(r[i]) for r in body] or [0])
        total += max(word, min(cells, MIN_TEXT)) if wrappable[i] else max(word, cells)
    return total + GAP * (len(head) - 1)


def footnote_causes(causes: list[str], room: int) -> tuple[list[str], list[str]]:
    """Causes that fit `room` characters stay as they are; a longer one shows its kind and a footnote
    number, the full text goes to the list under the table (one number per distinct text)."""
    if all(len(c) <= room for c in causes):
        return causes, []
    notes: dict[str, int] = {}
    cells = []
    for c in causes:
        kind, _, detail = c.partition(" (")
        if not detail:
            cells.append(c)
            continue
        k = notes.setdefault(c, len(notes) + 1)
        cells.append(f"{kind} [{k}]")
    return cells, [f"[{k}] {c}" for c, k in notes.items()]


def wrap_block(text: str, width: int, indent: str = "") -> str:
    """A paragraph (or several) wrapped to `width`, continuation lines indented by `indent`."""
    out = []
    for para in text.strip().splitlines():
        out += textwrap.wrap(para, width, subsequent_indent=indent, break_long_words=True,
                             break_on_hyphens=False) or [""]
    return "\n".join(out)
