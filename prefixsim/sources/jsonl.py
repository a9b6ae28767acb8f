"""Reading JSON Lines as a stream: one parsed object per non-blank line, never the whole file in
memory. A line that is not JSON (or not UTF-8) is skipped and reported (`problems.skip`); a last
line without its newline that does not parse is named as truncated (a log cut mid-write). A line
nested past the interpreter's stack, or holding an integer too long to convert, is skipped the same
way; only a regular file is opened (`files.open_regular`)."""
from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from prefixsim.sources import problems
from prefixsim.sources.files import open_regular


def read_buffer(size: int) -> int:
    """The read buffer for a file of `size` bytes. A request log's lines are often far longer than
    the default 8 KB (a whole request each), and reading one then takes a read call per 8 KB, which
    costs as much as parsing it; up to 1 MB, and at most 1/64 of the file (memory stays the reader's
    state, not the file's bytes)."""
    return max(io.DEFAULT_BUFFER_SIZE, min(1 << 20, size // 64))


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line of `path` that parses."""
    return ((n, obj) for n, _, obj in iter_jsonl_at(path))


def iter_jsonl_at(path: Path, loads: Callable[[str], Any] = json.loads) -> Iterator[tuple[int, int, Any]]:
    """(line number, byte offset of the line, parsed value): the offset lets a reader drop what it
    parsed and read the line again when it needs it (`read_at`). `loads` parses a line's text (a
    `linejson.LineParser` shares with the previous line what it repeats)."""
    for n, at, raw in lines_at(path):
        obj = parsed(path, n, raw, loads)
        if obj is not UNREAD:
            yield n, at, obj


def lines_at(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, bytes) of each line that is not blank."""
    try:
        size = path.stat().st_size
    except OSError:   # open_regular names what is wrong with the path
        size = 0
    with open_regular(path, read_buffer(size)) as fh:
        offset = 0
        for n, raw in enumerate(fh, start=1):
            at, offset = offset, offset + len(raw)
            if raw and not raw.isspace():   # raw.strip() would copy every line
                yield n, at, raw


#: What `parsed` gives for a line it named as unreadable.
UNREAD = object()


def parsed(path: Path, n: int, raw: bytes, loads: Callable[[str], Any] = json.loads) -> Any:
    """The value of line `n` (its bytes `raw`), or UNREAD once the line is named as skipped. Only the
    last line of a file can lack its newline: one that does not parse was cut mid-write."""
    try:
        return loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        problems.skip(str(path), n, f"not UTF-8 text (byte {e.start} of the line)")
    except json.JSONDecodeError as e:
        if not raw.endswith(b"\n"):
            problems.skip(str(path), n, f"truncated last line (cut mid-write? {e.msg}: column {e.colno})")
        else:
            problems.skip(str(path), n, f"not valid JSON ({e.msg}: column {e.colno})")
    except problems.LINE_ERRORS as e:   # deep nesting (RecursionError), a 5,000-digit integer
        problems.skip(str(path), n, problems.unusable(e))
    return UNREAD
