"""Writing output files so that nothing the user has is lost.

- An output is never an input: `check_outputs` compares every path a command will write with every
  file it reads (resolved paths and device/inode, so a symlink or hard link is caught too) before
  anything is written.
- A file is written to a temporary file in the same folder, flushed to disk, then renamed over the
  target (a rename within one folder is atomic), so the previous file stays whole until the new one is.
- A report folder is written whole to a staging folder beside it and swapped in by rename, so a
  crash, Ctrl-C or a full disk leaves either the previous set or the new one, never a mix, and files
  of an earlier run that the new one does not write disappear with the old folder.

Temporary names carry the writer's process id, so a later run removes the debris of a killed one
without touching the staging of a run still going on beside it.
"""
from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, Mapping

from prefixsim.errors import UserError

#: Inside every report folder: what kind of output it is, then the names of the files prefixsim wrote
#: there, one a line. A folder may be replaced whole only by output of its kind and only if it holds
#: nothing else, so a user's own files (or another command's output) are never deleted.
MARKER = ".prefixsim-report"


# --- an output is never an input --------------------------------------------------------------------

def check_outputs(inputs: Iterable[str | os.PathLike], files: Iterable[str | os.PathLike] = (),
                  folders: Iterable[str | os.PathLike] = ()) -> None:
    """Refuse, before anything is written, an output that is one of the inputs.

    `inputs`: every file the command reads (a folder counts as every file under it). `files`: files
    that will be replaced. `folders`: folders that will be replaced whole; one that is an input or
    holds one (or a hard link to one) is refused too. Raises a UserError naming the output."""
    known = _Inputs(inputs)
    for out in files:
        hit = known.match(Path(out))
        if hit is not None:
            raise _clash(out, hit)
    folders = list(folders)
    under: dict[Path, str] = {}   # each input's path and every folder above it -> the input
    if folders:
        for shown, path, _ in known.items:
            for p in (path, *path.parents):
                under.setdefault(p, shown)
    for out in folders:
        real = Path(out).resolve()
        if real in under:
            raise _clash(out, under[real], inside=True)
        if real.is_dir():
            for root, _, names in os.walk(real):
                for n in names:
                    hit = known.match(Path(root) / n)
                    if hit is not None:
                        raise _clash(out, hit, inside=True)


class _Inputs:
    def __init__(self, inputs: Iterable[str | os.PathLike]) -> None:
        self.items: list[tuple[str, Path, tuple[int, int] | None]] = []
        for p in inputs:
            if os.path.isdir(p):
                for root, _, names in os.walk(p):
                    for n in sorted(names):
                        self._add(os.path.join(root, n))
            else:
                self._add(os.fspath(p))
        self.by_path = {path: shown for shown, path, _ in self.items}
        self.by_inode = {key: shown for shown, _, key in self.items if key is not None}

    def _add(self, p: str) -> None:
        try:
            st = os.stat(p)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = None
        self.items.append((p, Path(p).resolve(), key))

    def match(self, out: Path) -> str | None:
        """The input `out` names (same resolved path, or the same file by another name), if any."""
        hit = self.by_path.get(out.resolve())
        if hit is None:
            try:
                st = os.stat(out)
            except OSError:
                return None
            hit = self.by_inode.get((st.st_dev, st.st_ino))
        return hit


def _clash(out: str | os.PathLike, shown: str, inside: bool = False) -> UserError:
    if inside:
        what = f"this output folder holds the input {shown}; refusing to replace it"
    elif Path(out).resolve() == Path(shown).resolve():
        what = "this output is an input of this command; refusing to overwrite it"
    else:
        what = f"this output is the input {shown} under another name; refusing to overwrite it"
    return UserError(f"{what}, nothing was written (choose another output path)", os.fspath(out))


# --- single files -----------------------------------------------------------------------------------

def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename over `path`."""
    write_files({path: data})


def write_files(files: Mapping[str | os.PathLike, str | bytes]) -> None:
    """Several files that belong together: every temporary file is written and flushed before the
    first rename, so an interruption while writing leaves the whole previous set. (Files in one
    folder of their own are better written with `replace_folder`, which swaps them in as one.)"""
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
    _clean_orphans(path.parent, path.name)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())   # mkstemp makes 0600; a report is as readable as any new file
    os.close(fd)
    return tmp


# --- report folders, swapped in whole ---------------------------------------------------------------

def replace_folder(target: str | os.PathLike, files: Mapping[str, str | bytes], kind: str,
                   legacy: Callable[[str], bool] = lambda name: False) -> None:
    """Make `target` a folder holding exactly `files` (name -> content), as one step.

    The files go to a staging folder beside `target` (same filesystem), are flushed, and the staging
    folder is renamed into place: exchanged with the old folder in one atomic step where the system
    can (Linux renameat2), else the old folder is renamed away first and restored by the next run if
    a kill falls between the two renames. The old folder is then deleted. `target` is replaced only
    if prefixsim wrote it for this `kind` of output: every entry is listed in its marker, or
    (folders written before the marker existed) passes `legacy`."""
    target = Path(target)
    assert all("/" not in n and n not in ("", ".", "..", MARKER) for n in files), files
    staging: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _clean_orphans(target.parent, target.name)
        check_replaceable(target, kind, legacy)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-{os.getpid()}-", dir=target.parent))
        os.chmod(staging, 0o777 & ~_umask())   # mkdtemp makes 0700
        marker = "".join(f"{line}\n" for line in (f"prefixsim: {kind}", *sorted(files)))
        for name, data in {**files, MARKER: marker}.items():
            with open(staging / name, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
                f.flush()
                os.fsync(f.fileno())
        _fsync_dir(staging)
        old = _swap_in(staging, target)
        staging = None
        _fsync_dir(target.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException as e:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if isinstance(e, OSError):
            raise _write_error(e, target) from None
        raise


def check_replaceable(target: Path, kind: str, legacy: Callable[[str], bool]) -> None:
    """`replace_folder` may replace `target` (a command checks this before it runs, and again as it writes)."""
    # Another run may move the folder away at any moment (its own swap): a folder gone mid-check is
    # absent, never "not a report" nor an internal error.
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):   # a file, or a symlink (lstat does not follow it)
        raise UserError(f"exists and is not a {kind}; not replacing it (choose another output folder)", str(target))
    try:
        lines = (target / MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = None
    if lines is not None and lines[:1] != [f"prefixsim: {kind}"]:
        found = lines[0].removeprefix("prefixsim: ") if lines else "unknown"
        raise UserError(f"holds another kind of prefixsim output ({found}), not a {kind}; not replacing it "
                        "(choose another output folder)", str(target))
    listed = {*lines[1:], MARKER} if lines is not None else None
    try:
        names = os.listdir(target)
    except FileNotFoundError:
        return
    foreign = sorted(n for n in names
                     if not (n in listed if listed is not None else legacy(n) or _LEGACY_TMP.fullmatch(n)))
    if foreign:
        raise UserError(f"holds files that are not part of a {kind} ({', '.join(foreign[:3])}"
                        f"{', ...' if len(foreign) > 3 else ''}); not replacing the folder "
                        "(move them, or choose another output folder)", str(target))


def _swap_in(staging: Path, target: Path) -> Path | None:
    """Put `staging` at `target`; returns where the previous folder now is (to delete), if any.
    Another run may swap its own folder in at the same moment: each step is retried, and whichever
    run renames last wins with its whole set."""
    for _ in range(100):
        if os.path.lexists(target):
            if _exchange(staging, target):
                return staging
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{os.getpid()}-", dir=target.parent))
            try:
                os.rename(target, old)       # a folder may be renamed over an empty one
            except FileNotFoundError:        # another run moved it away first
                os.rmdir(old)
                old = None
        else:
            old = None
        try:
            os.rename(staging, target)
            return old
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                if old is not None:
                    _restore(old, target)
                raise
            # Another run put its folder in between our two renames: move that one away too.
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    raise OSError(errno.EBUSY, "the folder keeps being replaced by other runs", str(target))


def _exchange(a: Path, b: Path) -> bool:
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


def _restore(old: Path, target: Path) -> None:
    try:
        os.rename(old, target)
    except OSError:
        pass   # someone else's report is in place now; ours is debris for the next run to remove


# --- debris of killed runs --------------------------------------------------------------------------

#: `.NAME.PID-XXXXXXXX.tmp` (a file being written), `.NAME.new-PID-XXXXXXXX` (a staging folder) and
#: `.NAME.old-PID-XXXXXXXX` (a replaced folder not yet deleted).
_DEBRIS = re.compile(r"\.(?P<name>.+)\.(?:(?P<pid1>\d+)-[^.]+\.tmp|(?P<kind>new|old)-(?P<pid2>\d+)-[^.]+)")
#: Temporary files of prefixsim versions before process ids were in the name.
_LEGACY_TMP = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")


def _clean_orphans(folder: Path, name: str) -> None:
    """Remove what killed runs left beside `folder/name`; a previous report folder moved away by a run
    killed between its two renames is put back first, so a failure of this run keeps it."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return
    for entry in entries:
        m = _DEBRIS.fullmatch(entry)
        legacy = _LEGACY_TMP.fullmatch(entry)
        if m is not None and m["name"] == name:
            if _alive(int(m["pid1"] or m["pid2"])):
                continue
            path = folder / entry
            if m["kind"] == "old" and not os.path.lexists(folder / name):
                _restore(path, folder / name)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                _discard(str(path))
        elif legacy is not None and legacy["name"] == name:
            _discard(str(folder / entry))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # exists, owned by someone else
        return True
    return True


def _fsync_dir(path: Path) -> None:
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
