"""Only regular files are read. A FIFO given as a log blocks the reader forever, a socket or a device
fails in ways no reader expects, and a folder named `x.jsonl` or a symbolic link to nothing turns up
in any folder listing: each is named, never opened.

A gzip-compressed file (told by its first two bytes, 1f 8b, whatever its name: an OTel collector's
file exporter, a gateway or logrotate writes them) is read as the text it holds: every reader opens
its input through `open_regular` or `read_regular`, so each format reads compressed as it reads plain.
A byte offset a reader keeps is one in the text; seeking back in a compressed file reads it again from
its start (slower, never wrong). A stream that is cut or corrupt is named, not half read."""
from __future__ import annotations

import gzip
import stat
import zlib
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


#: The first bytes of a gzip stream (RFC 1952).
GZIP_MAGIC = b"\x1f\x8b"
#: What a cut or corrupt gzip stream raises while it is read.
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


class _Gunzip(gzip.GzipFile):
    """A gzip file whose read errors name the file (UserError) instead of escaping as a crash, and
    whose closing closes the file it reads."""

    def close(self):
        raw = self.fileobj
        try:
            super().close()
        finally:
            if raw is not None:
                raw.close()

    def _named(self, work, *args):
        try:
            return work(*args)
        except _GZIP_ERRORS as e:
            raise UserError(f"not a whole gzip file ({e})", self.name) from None

    def read(self, size=-1):
        return self._named(super().read, size)

    def read1(self, size=-1):
        return self._named(super().read1, size)

    def readline(self, size=-1):
        return self._named(super().readline, size)

    def readinto(self, b):
        return self._named(super().readinto, b)

    def peek(self, n):
        return self._named(super().peek, n)

    def seek(self, offset, whence=0):
        return self._named(super().seek, offset, whence)


def suffix(path: Path) -> str:
    """The suffix that names a file's format, a compressed file's `.gz` left out (`x.yaml.gz`: `.yaml`)."""
    return Path(path.stem).suffix if path.suffix == ".gz" else path.suffix


def is_gzip(fh: IO[bytes]) -> bool:
    """Whether the file open at its start holds a gzip stream (the stream is left at its start)."""
    head = fh.read(2)
    fh.seek(0)
    return head == GZIP_MAGIC


def open_regular(path: Path, buffering: int = -1) -> IO[bytes]:
    """`path` opened for binary reading, once it is known to be a regular file (UserError otherwise);
    a gzip-compressed file gives the bytes it holds."""
    check_regular(path)
    try:
        fh = path.open("rb", buffering)
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror}", str(path)) from None
    try:
        if is_gzip(fh):
            return _Gunzip(filename=str(path), mode="rb", fileobj=fh)
    except BaseException:
        fh.close()
        raise
    return fh


def read_regular(path: Path) -> bytes:
    """The whole of a regular file's bytes (decompressed when it is gzip-compressed)."""
    with open_regular(path) as fh:
        return fh.read()
