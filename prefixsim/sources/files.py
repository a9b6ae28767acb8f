"""Only regular files are read. A FIFO given as a log blocks the reader forever, a socket or a device
fails in ways no reader expects, and a folder named `x.jsonl` or a symbolic link to nothing turns up
in any folder listing: each is named, never opened."""
from __future__ import annotations

import stat
from pathlib import Path
from typing import IO

from prefixsim.errors import UserError

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def not_regular(path: Path) -> str | None:
    """Why `path` is not a regular file that can be read (None: it is one)."""
    try:
        mode = path.stat().st_mode   # follows symbolic links: a link to a file is that file
    except OSError as e:
        if path.is_symlink():
            return "a symbolic link to nothing"
        return f"cannot read: {e.strerror}"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    return f"{kind}, not a regular file"


def check_regular(path: Path) -> None:
    """UserError (located at `path`) unless `path` is a regular file."""
    why = not_regular(path)
    if why is not None:
        raise UserError(why, str(path))


def open_regular(path: Path, buffering: int = -1) -> IO[bytes]:
    """`path` opened for binary reading, once it is known to be a regular file (UserError otherwise)."""
    check_regular(path)
    try:
        return path.open("rb", buffering)
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", str(path)) from None
