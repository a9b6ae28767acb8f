"""Reading JSON Lines: one parsed object per non-blank line, a bad line reported at file:line:col."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ..errors import UserError


def iter_jsonl(path: Path, what: str = "not valid JSON") -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line of `path`."""
    try:
        fh = path.open(encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", str(path)) from None
    with fh:
        for n, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                yield n, json.loads(text)
            except json.JSONDecodeError as e:
                raise UserError(f"{what}: {e.msg}", str(path), n, e.colno) from None
