"""What sits at an output path, and how to write there without replacing what is not ours.

A file is normally written beside its path and renamed over it (`io/swap.py`). That is right for a
regular file and for nothing else: renamed over a character device, a FIFO or a symlink, the
temporary file replaces the node itself (as root, `--export-mooncake /dev/null` replaced the
system's null device with a regular file; a FIFO's reader got nothing; a symlink became a file and
its target was never written). So each output path is looked at first:

- absent, or a regular file: replaced whole (temporary file, then rename);
- a symlink: its target is written the same way, in the target's folder (the link stays a link);
  a link only the kernel can follow (`/dev/stdout` -> `/proc/self/fd/1` -> a pipe) is written through;
- a character device or a FIFO: written through (opened and written, never replaced), and a write
  error such as ENOSPC from /dev/full is the user's error naming the path;
- anything else (a folder, a socket, a block device): refused before anything is written.
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

from prefixsim.errors import UserError


@dataclass(frozen=True)
class Target:
    """Where an output goes: `path` is the file to replace (the given path, or a symlink's target),
    or with `through` the node to open and write in place."""

    path: Path
    through: bool = False
    linked: bool = False    # reached through a symlink: its folder is the target's, never created


def output_target(path: str | os.PathLike) -> Target:
    """How `path` may be written (see the module docstring); a UserError for a node never written."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return Target(p)
    except NotADirectoryError:
        raise UserError(f"{file_above(p)} is a file, not a folder; cannot write under it", str(p)) from None
    except OSError as e:
        raise write_error(e, p) from None
    if stat.S_ISLNK(st.st_mode):
        return _linked(p)
    return _by_kind(p, st.st_mode)


def _by_kind(p: Path, mode: int, linked: bool = False) -> Target:
    if stat.S_ISREG(mode):
        return Target(p, linked=linked)
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Target(p, through=True)
    what = ("a folder" if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a block device" if stat.S_ISBLK(mode) else "not a regular file")
    via = "is a symlink to" if linked else "is"
    raise UserError(f"{via} {what}; an output is written to a file, a character device or a FIFO, never over "
                    f"{what} (nothing was written; choose another output path)", str(p))


def _linked(p: Path) -> Target:
    try:
        st = os.stat(p)   # follows the link
    except FileNotFoundError:   # dangling: its target is created, in the target's folder
        return Target(Path(os.path.realpath(p)), linked=True)
    except OSError as e:        # a loop, or a link through something that is not a folder
        raise UserError(f"is a symlink that cannot be followed ({e.strerror or e}); nothing was written", str(p)) from None
    if not stat.S_ISREG(st.st_mode):
        return _by_kind(p, st.st_mode, linked=True)
    real = Path(os.path.realpath(p))
    try:
        same = os.stat(real)
        if (same.st_dev, same.st_ino) == (st.st_dev, st.st_ino):
            return Target(real, linked=True)
    except OSError:
        pass
    return Target(p, through=True)   # /proc/self/fd/N and the like: the path names no folder to write in


@contextmanager
def opened_through(path: Path, text: bool = False) -> Iterator[IO]:
    """The node itself, opened for writing (a device, a FIFO: never fsync'd, never replaced); any
    error while writing or closing it is the user's, naming the path."""
    try:
        fh = open(path, "w", encoding="utf-8", newline="\n") if text else open(path, "wb")
    except OSError as e:
        raise write_error(e, path, kept=False) from None
    try:
        with fh:
            yield fh
    except OSError as e:
        raise write_error(e, path, kept=False) from None


def write_through(path: Path, data: str | bytes) -> None:
    with opened_through(path) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def make_folder(folder: Path) -> None:
    """`folder` and the folders above it, created as needed; a file on the way is the user's error."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"{file_above(folder / '_')} is a file, not a folder; cannot write under it",
                        str(folder)) from None


def file_above(p: Path) -> Path:
    """The nearest existing path above `p` that is not a folder (what a NotADirectoryError meant)."""
    for q in p.parents:
        if os.path.lexists(q) and not q.is_dir():
            return q
    return p.parent


def write_error(e: OSError, path: Path, kept: bool = True) -> UserError:
    """A full disk or a read-only folder is the user's to fix, not a bug: exit 2, the old file kept."""
    if isinstance(e, NotADirectoryError):
        return UserError(f"{file_above(path)} is a file, not a folder; cannot write under it", str(path))
    why = e.strerror or str(e)
    return UserError(f"cannot write: {why}" + (" (any previous version is left as it was)" if kept else ""), str(path))
