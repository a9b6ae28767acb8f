"""Reading a file the user names (a scenario, a price sheet, a `file:` request body): only a regular
file, only up to a size cap, decoded as UTF-8, so a FIFO, a socket, /dev/zero or a sparse file of
gigabytes is a one-line error naming the file instead of a hang, a crash or memory exhaustion.

The value checks every loaded document shares live here too: numbers must be finite and of a sane
magnitude, text must be valid Unicode (no lone surrogates), and nesting has a depth limit, because
each of these otherwise surfaces far away as an OverflowError, a UnicodeEncodeError while writing a
report, or a RecursionError.
"""
from __future__ import annotations

import math
import os
import re
import stat
from typing import Any

from prefixsim.errors import UserError

MIB = 1 << 20
#: Hand-written YAML (a scenario, a price sheet): far above any real one, far below what a pure-Python
#: YAML parser reads in reasonable time (about 1 MB/s).
MAX_YAML_BYTES = 8 * MIB
#: A `file:` request body: the Messages API's own request size limit is 32 MB
#: (docs.anthropic.com/en/api/overview, "Request size limits", checked 2026-11-30).
MAX_BODY_BYTES = 32 * MIB
#: Containers inside containers. Real request bodies nest a dozen levels (messages > content > tool
#: input > JSON schema); Python's parsers and our walkers recurse once per level.
MAX_DEPTH = 100
#: Integers a scenario or body may hold: every exact float integer. Larger is never a size, a time or
#: a seed anyone means, and past Python's 4,300-digit limit it cannot even be converted.
MAX_INT = 2 ** 53


def read_capped(path: str, cap: int, what: str, shown: str | None = None) -> bytes:
    """The bytes of `path` if it is a regular file of at most `cap` bytes (UserError otherwise, naming
    the file as `shown`, default `path`).

    Opened non-blocking so a FIFO cannot block the open; the type is checked on the open descriptor
    (no race between a check and the open); at most cap + 1 bytes are read, so a file whose size the
    file system misreports (/proc) is still bounded."""
    name = shown or path
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):   # a socket cannot even be opened: say what it is first
            raise UserError(f"not a regular file ({_kind(st.st_mode)}); a {what} is read from a plain file",
                            name)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise UserError(f"cannot read {what}: {e.strerror}", name) from None
    try:
        st = os.fstat(fd)   # the file opened, which may have been swapped since the stat
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"not a regular file ({_kind(st.st_mode)}); a {what} is read from a plain file",
                            name)
        if st.st_size > cap:
            raise UserError(f"{what} is {_size(st.st_size)}, over the {_size(cap)} limit", name)
        chunks, got = [], 0
        while got <= cap:
            chunk = os.read(fd, min(cap + 1 - got, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > cap:
            raise UserError(f"{what} is over the {_size(cap)} limit", name)
        return b"".join(chunks)
    except OSError as e:
        raise UserError(f"cannot read {what}: {e.strerror}", name) from None
    finally:
        os.close(fd)


def decode_utf8(raw: bytes, path: str) -> str:
    """UTF-8 text (a byte-order mark dropped); invalid bytes are an error at their line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UserError(f"not UTF-8 text (byte {e.start}); save the file as UTF-8", path, line) from None
    return text.removeprefix("\ufeff")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a plain file"


def _size(n: int) -> str:
    return f"{n / MIB:,.0f} MiB" if n >= MIB else f"{n:,} bytes"


# --- values ----------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def value_problem(v: Any) -> str | None:
    """What is wrong with one scalar of a loaded document, or None. Booleans are fine (bool is int)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN is not a usable number; give a finite value"
        if math.isinf(v):
            return "the number is infinite (or too large to represent); give a finite value"
    elif isinstance(v, int) and not isinstance(v, bool):
        if abs(v) > MAX_INT:
            return f"the number is too large (at most {MAX_INT:,} in magnitude)"
    elif isinstance(v, str):
        m = _SURROGATE.search(v)
        if m:
            return (f"text holds a lone surrogate \\u{ord(m.group()):04x} (not a character; "
                    "save valid Unicode text)")
    return None


def too_many_digits(literal: str) -> bool:
    """A numeric literal Python refuses to convert (over 4,300 digits) or that is absurdly long."""
    return sum(c.isdigit() for c in literal) > 400
