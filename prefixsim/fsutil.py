"""Writing output files so that a crash, Ctrl-C or a full disk never leaves a half-written report:
everything goes to a temporary file in the same folder, is flushed to disk, then renamed over the
target (a rename within one folder is atomic), so the previous file stays whole until the new one is.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Mapping

from .errors import UserError


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename over `path`."""
    write_files({path: data})


def write_files(files: Mapping[str | os.PathLike, str | bytes]) -> None:
    """Several files that belong together (one report): every temporary file is written and flushed
    before the first rename, so an interruption while writing leaves the whole previous set."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path = Path(path)
            raw = data.encode("utf-8") if isinstance(data, str) else data
            tmp = _temp_for(path)
            staged.append((tmp, path))
            with open(tmp, "wb") as f:
                f.write(raw)
                f.flush()
                os.fsync(f.fileno())
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException as e:
        for tmp, _ in staged:
            _discard(tmp)
        if isinstance(e, OSError):
            raise _write_error(e, staged[-1][1] if staged else Path(next(iter(files)))) from None
        raise


@contextmanager
def open_atomic(path: str | os.PathLike) -> Iterator[IO[str]]:
    """A text file to stream into (large exports); it replaces `path` only when the block completes."""
    path = Path(path)
    tmp = None
    try:
        tmp = _temp_for(path)
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            _discard(tmp)
        if isinstance(e, OSError):
            raise _write_error(e, path) from None
        raise


def _temp_for(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())   # mkstemp makes 0600; a report is as readable as any new file
    os.close(fd)
    return tmp


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _write_error(e: OSError, path: Path) -> UserError:
    """A full disk or a read-only folder is the user's to fix, not a bug: exit 2, the old file kept."""
    return UserError(f"cannot write: {e.strerror or e} (any previous version is left as it was)", str(path))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def slug(name: str) -> str:
    """A scenario name as a folder name."""
    s = "".join(c if c.isalnum() or c in "-_." else "-" for c in name.strip()).strip("-.")
    return s or "scenario"
