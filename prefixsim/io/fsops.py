"""The filesystem steps a set's swap is made of (`io/swap.py`): an atomic exchange of two paths, a
lock on a folder, signals held while the entries move, flushed files and folders."""
from __future__ import annotations

import ctypes
import errno
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    fn = _renameat2()
    if fn is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.ENOENT):
        return False   # the kernel or filesystem cannot exchange, or `b` is gone: plain renames
    raise OSError(err, os.strerror(err), str(b))


_RENAMEAT2: list = []


def _renameat2():
    if not _RENAMEAT2:
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
        except (AttributeError, OSError, TypeError):   # not Linux (or no glibc): two renames
            fn = None
        _RENAMEAT2.append(fn)
    return _RENAMEAT2[0]


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` while a set moves in: two runs writing there never interleave
    their renames. Advisory and best effort (a filesystem without locks just goes unlocked)."""
    try:
        import fcntl  # lazy: not on every system
        fd = os.open(folder, os.O_RDONLY)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP delivered only once the block is done (a set's renames): caught
    meanwhile by a handler that notes them, then sent again under the handlers they found. Python
    runs handlers in the main thread only, whichever thread the signal hit; elsewhere, as no
    handler can be set, the signals are held for this thread only."""
    wanted = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    if threading.current_thread() is not threading.main_thread():
        try:
            before = signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
        except (AttributeError, OSError, ValueError):   # not a POSIX system
            before = None
        try:
            yield
        finally:
            if before is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, before)
        return
    caught: list[int] = []
    found = {s: signal.getsignal(s) for s in wanted}
    for s, h in found.items():
        if h is not None:   # None: a handler set outside Python, left alone
            signal.signal(s, lambda n, frame: caught.append(n))
    try:
        yield
    finally:
        for s, h in found.items():
            if h is not None:
                signal.signal(s, h)
        for n in dict.fromkeys(caught):
            os.kill(os.getpid(), n)


def write_file(path: Path, data: str | bytes) -> None:
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())


def fsync_dir(path: Path) -> None:
    """The renames themselves on disk, where the system allows a folder to be synced."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def discard(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
