"""The cells and tables of `prefixsim replay`'s text: a grid fitted to the width (report/layout.py's
`fit_dropping`: no word split, columns left out named under it) or in Markdown, and causes too long
for their column moved to numbered footnotes, as `run -v` does."""
from __future__ import annotations

from prefixsim.core.dollars import usd
from prefixsim.report.layout import DEFAULT_WIDTH, GAP, dropped_note, fit_dropping, footnote_causes, min_width, wrap_block


def grid(header: list[str], rows: list[list[str]], markdown: bool, width: int = DEFAULT_WIDTH,
         drops: tuple[int, ...] = (), headless: bool = False, left: tuple[int, ...] = ()) -> str:
    """A table of cells: Markdown, or fitted to `width` with numbers right-aligned (but in the
    columns `left`: names, sentences), leaving out the columns `drops` (in that order) if it must,
    named under it. `headless`: no header line (a list of labelled figures)."""
    if markdown:
        if headless:
            header = ["" for _ in header]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    # Numbers right-aligned, text left-aligned, as a reader scans them; text columns wrap to fit.
    def number(c: str) -> bool:
        return c[:1].isdigit() or c[:1] in "+-$"

    text = [not all(number(r[i]) for r in rows if r[i]) for i in range(len(header))]
    table, dropped = fit_dropping(header, rows, [not t for t in text], width, text, drops, rule=False,
                                  right=lambda c, i: i not in left and number(c))
    if headless:
        table = table.split("\n", 1)[1] if "\n" in table else ""
    note = dropped_note(dropped, width, min_width(header, rows, text))
    return table + "\n" + (note + "\n" if note else "")


def footnoted(rows: list[list[str]], col: int, width: int) -> tuple[list[list[str]], list[str]]:
    """The cells of column `col` (causes) that do not fit beside the others' natural widths become
    "kind [n]", their whole text a footnote `[n] ...` (layout.footnote_causes, as `run -v` does)."""
    if not rows:
        return rows, []
    others = [max(len(r[j]) for r in rows) for j in range(len(rows[0])) if j != col]
    room = max(width - sum(others) - GAP * len(others), 24)
    cells, notes = footnote_causes([r[col] for r in rows], room)
    return [[*r[:col], c, *r[col + 1:]] for r, c in zip(rows, cells)], notes


def _footnotes(notes: list[str], width: int) -> list[str]:
    return [wrap_block(n, width, " " * (n.index("]") + 2)) + "\n" for n in notes]


def _n(v) -> str:
    return "" if v is None else f"{v:,}"


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.2f}%"


def _usd(v) -> str:
    return "n/a" if v is None else usd(v, cell=True)
