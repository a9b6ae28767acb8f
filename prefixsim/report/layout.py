"""Plain-text tables that fit a width: headers wrap at spaces (never inside a word), text columns
wrap onto continuation lines at spaces (never inside a word either), a cause too long for its column
moves to a numbered footnote, and a table that cannot fit leaves out columns in a stated order and
names them under itself (`fit_dropping`). Pure string work, so the output is the same bytes at the
same width on every machine."""
from __future__ import annotations

import textwrap
from typing import Any, Callable, Collection, Sequence

GAP = 2
#: Width of terminal output when it is not a terminal (a pipe, a file, a test): fixed, so the bytes
#: do not depend on who runs it.
DEFAULT_WIDTH = 120
#: `replay`'s width when stdout is not a terminal and $COLUMNS is unset: a terminal's classic 80 (its
#: money summary is read as a terminal shows it).
REPLAY_WIDTH = 80
#: Text columns narrow to WRAP_TEXT before any header wraps, and never below MIN_TEXT.
WRAP_TEXT = 30
MIN_TEXT = 12
#: ANSI bold and reset: the winning row of a comparison, on a terminal that takes them (commands/common.py
#: emphasis: a TTY with NO_COLOR unset, https://no-color.org).
BOLD, RESET = "\x1b[1m", "\x1b[0m"
#: A comparison of designs leaves out a column before it narrows a name below KEEP_TEXT (`fit_dropping`'s
#: `keep_text`), and wraps its headers before its names: a design's name over three lines reads worse
#: than a column named under the table.
KEEP_TEXT = 36


def _wrap(text: str, width: int, break_words: bool = False) -> list[str]:
    """A cell over lines of at most `width`, broken at spaces: a word longer than `width` is broken
    only with `break_words` (the last resort of a table that cannot fit otherwise)."""
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=break_words, break_on_hyphens=False) or [""]


def _longest_word(cells) -> int:
    return max((len(w) for c in cells for w in c.split()), default=0)


def _header_lines(text: str, width: int) -> list[str]:
    """A header over as many lines as it needs at `width`, broken only at spaces."""
    return textwrap.wrap(text, max(width, 1), break_long_words=False, break_on_hyphens=False) or [""]


def fit(head: Sequence[str], body: Sequence[Sequence[str]], numeric: Sequence[bool], width: int,
        wrappable: Sequence[bool], rule: bool = True, right: Callable[[str, int], bool] | None = None,
        break_words: bool = False, wrap_text: int | None = WRAP_TEXT, bold: Collection[int] = ()) -> str:
    """An aligned table no wider than `width` when it can be: first headers wrap at their spaces, then
    the wrappable (text) columns narrow, widest first, their cells wrapping onto extra lines at
    spaces. A text column narrows to its longest word and no further (a model id, a path is never
    split), unless `break_words`. Text narrows to `wrap_text` before any header wraps; None: headers
    wrap first (one line each, where a narrowed name costs a line per row). The body rows `bold`
    (indices) are set in bold with ANSI codes around each of their lines, after the layout: the codes
    take no column, so the widths are the same as without."""
    n = len(head)
    cell_w = [max([len(r[i]) for r in body] or [0]) for i in range(n)]
    word_w = [max(len(w) for w in (h.split() or [""])) for h in head]
    if not break_words:   # a text column is never narrower than its longest word
        word_w = [max(w, _longest_word(r[i] for r in body)) if wrappable[i] else w for i, w in enumerate(word_w)]
    widths = [max(len(h), c) for h, c in zip(head, cell_w)]

    def total(ws):
        return sum(ws) + GAP * (n - 1)

    def narrow(floor: int) -> None:   # the widest text column first, down to `floor`
        # a column whose cells are all narrower than `floor` goes down to them (its header wraps), as
        # `min_width` counts it: a column of "n/a" or "$0.11" under a long header is not held at `floor`
        low = [max(min(floor, cell_w[i]), word_w[i]) for i in range(n)]
        while total(widths) > width:
            cands = [i for i in range(n) if wrappable[i] and widths[i] > low[i]]
            if not cands:
                return
            i = max(cands, key=lambda j: (widths[j], -j))
            # no lower than the next widest text column at first: the narrowing is shared, not one
            # column squeezed to a word a line beside a wide one
            nxt = max((widths[j] for j in cands if j != i), default=0)
            widths[i] = max(low[i], nxt, widths[i] - (total(widths) - width))
            if widths[i] == nxt and nxt > low[i]:
                widths[i] -= 1 if total(widths) > width else 0

    if wrap_text is not None:
        narrow(wrap_text)
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

    def emit(cells: list[str]) -> None:   # `right`, when given, aligns each cell by its text and column
        lines.append("  ".join(c.rjust(w) if (right(c, i) if right else num) else c.ljust(w)
                               for i, (c, w, num) in enumerate(zip(cells, widths, numeric))).rstrip())

    for k in range(depth):   # headers bottom-aligned, like a spreadsheet's, and aligned as their column
        lines.append("  ".join((c.rjust(w) if (right(c, i) if right else num) else c.ljust(w)) for i, (c, w, num) in
                               enumerate(zip([h[k - (depth - len(h))] if k >= depth - len(h) else "" for h in heads],
                                             widths, numeric))).rstrip())
    if rule:
        emit(["-" * w for w in widths])
    for j, row in enumerate(body):
        wrapped = [_wrap(c, w, break_words) if wrappable[i] else [c] for i, (c, w) in enumerate(zip(row, widths))]
        for k in range(max(len(x) for x in wrapped)):
            emit([x[k] if k < len(x) else "" for x in wrapped])
            if j in bold:
                lines[-1] = f"{BOLD}{lines[-1]}{RESET}"
    return "\n".join(lines)


def min_width(head: Sequence[str], body: Sequence[Sequence[str]], wrappable: Sequence[bool],
              floor: int = MIN_TEXT) -> int:
    """The narrowest `fit` can make this table with its text columns no narrower than `floor`
    (headers at their longest word, text at `floor` or its longest word, which is never split)."""
    total = 0
    for i, h in enumerate(head):
        word = max(len(w) for w in (h.split() or [""]))
        cells = max([len(r[i]) for r in body] or [0])
        total += max(word, min(cells, floor), _longest_word(r[i] for r in body)) if wrappable[i] else max(word, cells)
    return total + GAP * (len(head) - 1)


def two_line_width(body: Sequence[Sequence[str]], wrappable: Sequence[bool]) -> int:
    """The narrowest text width at which every text cell takes at most two lines, broken at spaces
    (never below MIN_TEXT or a cell's longest word); 0 for a table without text columns."""
    out = 0
    for i, is_text in enumerate(wrappable):
        cells = [r[i] for r in body]
        if not is_text or not cells:
            continue
        w, longest = max(MIN_TEXT, _longest_word(cells)), max(len(c) for c in cells)
        while w < longest and any(len(_wrap(c, w)) > 2 for c in cells):
            w += 1
        out = max(out, min(w, longest))
    return out


def fit_dropping(head: Sequence[str], body: Sequence[Sequence[str]], numeric: Sequence[bool], width: int,
                 wrappable: Sequence[bool], drops: Sequence[int] = (), rule: bool = True,
                 right: Callable[[str, int], bool] | None = None, keep_text: int = MIN_TEXT,
                 bold: Collection[int] = ()) -> tuple[str, list[str]]:
    """`fit`, leaving out the columns `drops` (indices, in the order they go) one by one until the
    table fits `width` with its text columns at least `keep_text` wide: (the table, the headers left
    out). The caller names them under the table (`dropped_note`): a column is never left out
    silently. A table that fits no other way breaks its longest words rather than overflow."""
    keep = list(range(len(head)))
    dropped: list[str] = []

    def cut(cells: Sequence[Any]) -> list[Any]:
        return [cells[i] for i in keep]

    def drop_until(floor: int) -> bool:   # True when the table fits with its text at `floor`
        for d in [*drops, None]:
            if min_width(cut(head), [cut(r) for r in body], cut(wrappable), floor) <= width:
                return True
            if d is not None and d in keep:
                keep.remove(d)
                dropped.append(head[d])
        return False

    # A column the answer does not rest on goes before a name is squeezed below `keep_text`; only
    # when leaving out every such column would not give the names that room are they narrowed to
    # MIN_TEXT, leaving out no more than that takes.
    roomy = drop_until(keep_text) and keep_text > MIN_TEXT   # then headers wrap before names narrow
    if not roomy and keep_text > MIN_TEXT:
        # Else a name over two lines at most, the same columns going first: at 80 columns a design's
        # name took one word a line ("fresh / sub-agents of / one type") beside a column of counts.
        two = two_line_width(body, wrappable)
        keep[:], dropped[:] = range(len(head)), []
        roomy = two > MIN_TEXT and drop_until(two)
        if not roomy:
            keep[:], dropped[:] = range(len(head)), []
            drop_until(MIN_TEXT)
    h, b, w = cut(head), [cut(r) for r in body], cut(wrappable)
    place = right and (lambda c, i: right(c, keep[i]))   # `right` sees the column's index in `head`
    text = fit(h, b, cut(numeric), width, w, rule, place, break_words=min_width(h, b, w) > width,
               wrap_text=None if roomy else WRAP_TEXT, bold=bold)
    return text, dropped


def dropped_note(dropped: Sequence[str], width: int, needed: int) -> str:
    """The line under a table that left out columns to fit: which, and the width that shows them."""
    if not dropped:
        return ""
    return wrap_block(f"(not shown at {width} columns: {', '.join(dropped)}; --width {needed} shows them)", width)


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


def wrap_block(text: str, width: int, indent: str = "", first: str = "") -> str:
    """A paragraph (or several) wrapped to `width` at spaces, continuation lines indented by `indent`
    (and the first by `first`). A word is never split: one longer than the width (a path, a URL)
    stands on a line of its own, and the terminal folds it, so it copies whole."""
    out = []
    for para in text.strip().splitlines():
        out += textwrap.wrap(para, width, initial_indent=first, subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False) or [""]
    return "\n".join(out)
