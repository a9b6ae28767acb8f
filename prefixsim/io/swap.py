"""A set of outputs swapped in as one: a run's report folder, a page with its Markdown twin and its
images, a study's CSV, PNG and SVG, what `init` writes. One file alone is a set of one.

Every entry is written to a staging folder beside the set (same filesystem) and flushed; then, under
a lock on the folder, a journal naming each staged entry by its inode is written and the entries
are moved into place one by one (exchanged with the previous one in one atomic step where the
system can, Linux renameat2; a file is otherwise hard-linked aside first, a folder renamed aside).
Deleting the journal is the commit point. Until then every step can be undone: an error (a full
disk, Ctrl-C) puts the previous entries back before it is reported, and the next run writing the
same set undoes what a killed run left (SIGKILL, a power cut), so the entries in place are always
one run's once a writer has looked. SIGINT, SIGTERM and SIGHUP wait while the entries move (a few
renames), so a kill from a terminal or a timeout never falls between two of them.

Staging folders carry the writer's process id, so a later run removes the debris of a killed one
without touching the staging of a run still going on beside it.
"""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from prefixsim.errors import UserError
from prefixsim.io import fsops
from prefixsim.io.fsops import discard, fsync_dir, locked, signals_held, umask, write_file
from prefixsim.io.nodes import make_folder, write_error

#: Inside every report folder: what kind of output it is, then the names of the files prefixsim wrote
#: there, one a line. A folder may be replaced whole only by output of its kind and only if it holds
#: nothing else, so a user's own files (or another command's output) are never deleted.
MARKER = ".prefixsim-report"
#: Inside a staging folder: the journal of a commit under way, the entries it replaced, and entries
#: an undo took back out. No entry of a set is named like them.
JOURNAL, OLD, UNDONE = ".prefixsim-set", ".prefixsim-old", ".prefixsim-undone"


def _never(name: str) -> bool:
    return False


@dataclass(frozen=True)
class Folder:
    """A folder entry of a set: `files` (relative path -> content); with a `kind`, a report folder
    (its MARKER lists the files) that only output of its kind may replace (`check_replaceable`)."""

    files: Mapping[str, str | bytes]
    kind: str | None = None
    legacy: Callable[[str], bool] = field(default=_never)


Content = str | bytes | Folder


@contextmanager
def staged(parent: Path, names: Sequence[str], exclusive: bool = False,
           make_parent: bool = True) -> Iterator[Staging]:
    """A Staging for the entries `names` of `parent`, committed when the block completes, discarded
    if it raises; an OSError is the user's error naming the entry being written."""
    s = None
    try:
        if make_parent:
            make_folder(parent)
        with locked(parent):   # what a killed run left is put right first, even if this run then fails
            _recover(parent, names)
        s = Staging(parent, names, exclusive)
        yield s
        s.commit()
    except BaseException as e:
        if s is not None:
            s.discard()
        if isinstance(e, OSError):
            where = s.current if s is not None else parent / names[0]
            raise write_error(e, where) from None
        raise


class Staging:
    """The staging folder of one set (see the module docstring)."""

    def __init__(self, parent: Path, names: Sequence[str], exclusive: bool) -> None:
        assert names and all(n and "/" not in n and n not in (".", "..") and not n.startswith(".prefixsim-")
                             for n in names), names
        self.parent, self.names, self.exclusive = parent, list(names), exclusive
        self.current = parent / names[0]
        self.folders: dict[str, Folder] = {}
        self.dir = Path(tempfile.mkdtemp(prefix=f".{names[0]}.new-{os.getpid()}-", dir=parent))
        os.chmod(self.dir, 0o777 & ~umask())   # mkdtemp makes 0700

    def put(self, name: str, content: Content) -> None:
        self.current = self.parent / name
        dest = self.dir / name
        if not isinstance(content, Folder):
            write_file(dest, content)
            return
        files = dict(content.files)
        if content.kind is not None:
            assert all("/" not in n and n not in ("", ".", "..", MARKER) for n in files), files
            files[MARKER] = "".join(f"{line}\n" for line in (f"prefixsim: {content.kind}", *sorted(content.files)))
        dest.mkdir()
        folders = {dest}
        for rel, data in files.items():
            f = dest / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            folders.add(f.parent)
            write_file(f, data)
        for d in sorted(folders, reverse=True):
            fsync_dir(d)
        self.folders[name] = content

    @contextmanager
    def stream(self, name: str) -> Iterator[IO[str]]:
        """A text file of the set to write as it comes (a large export)."""
        self.current = self.parent / name
        with open(self.dir / name, "w", encoding="utf-8", newline="\n") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())

    def commit(self) -> None:
        self.current = self.parent / self.names[0]
        fsync_dir(self.dir)
        keys = [[n, *_key(self.dir / n)] for n in self.names]
        with locked(self.parent), signals_held():
            _recover(self.parent, self.names)
            for name, f in self.folders.items():
                if f.kind is not None:
                    check_replaceable(self.parent / name, f.kind, f.legacy)
            if self.exclusive:
                for name in self.names:
                    if os.path.lexists(self.parent / name) and not _empty_folder(self.parent / name):
                        raise UserError("already exists; not overwriting (choose an empty folder)", str(self.parent / name))
            write_file(self.dir / JOURNAL, json.dumps(keys))
            fsync_dir(self.dir)
            try:
                os.mkdir(self.dir / OLD)
                for name in self.names:
                    self.current = self.parent / name
                    _place(self.dir / name, self.parent / name, self.dir / OLD / name, self.dir)
                fsync_dir(self.parent)
                os.unlink(self.dir / JOURNAL)   # the commit point
            except BaseException:
                _undo(self.parent, self.dir)
                raise
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _place(staged: Path, target: Path, old: Path, scratch: Path) -> None:
    """Put `staged` at `target`, the previous entry (if any) at `old`. Another writer may put a
    folder at `target` between two renames: it is moved away too, and this set wins whole."""
    for _ in range(100):
        if os.path.lexists(target) and not os.path.lexists(old):
            if fsops.exchange(staged, target):   # looked up here: a test takes the two-rename path
                os.rename(staged, old)   # `staged` holds the previous entry now
                return
            try:
                if os.path.isdir(target) or os.path.islink(target):
                    os.rename(target, old)
                else:
                    _link_or_move(target, old)
            except FileNotFoundError:   # another writer moved it away first
                pass
        try:
            os.rename(staged, target)   # a file replaces a file in one step; a folder needs `target` gone
            return
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR, errno.ENOTDIR):
                raise
            os.rename(target, tempfile.mkdtemp(prefix="intruder-", dir=scratch) + "/entry")
    raise OSError(errno.EBUSY, "the output keeps being replaced by other runs", str(target))


def _link_or_move(target: Path, old: Path) -> None:
    """The previous file kept aside; a hard link leaves it in place until the new one replaces it."""
    try:
        os.link(target, old, follow_symlinks=False)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(e.errno, e.strerror, str(target)) from None
        os.rename(target, old)   # a filesystem without hard links


def _undo(parent: Path, folder: Path) -> None:
    """Put back what the commit journaled in `folder` replaced: each new entry in place is taken
    out again (known by its inode), and the previous one returns from where the commit put it."""
    try:
        entries = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return   # no journal: nothing was moved, or the commit completed
    for name, dev, ino in reversed(entries):
        target, staged, old = parent / name, folder / name, folder / OLD / name
        try:
            if _key(target) == (dev, ino):
                os.makedirs(folder / UNDONE, exist_ok=True)
                os.rename(target, folder / UNDONE / name)
            if not os.path.lexists(target):
                if os.path.lexists(old):
                    os.rename(old, target)
                elif os.path.lexists(staged) and _key(staged) != (dev, ino):   # exchanged, not yet moved aside
                    os.rename(staged, target)
        except OSError:
            pass   # best effort: what stays is debris for the next run to undo
    try:
        os.unlink(folder / JOURNAL)
    except OSError:
        pass


def _key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _empty_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode) and not os.listdir(path)
    except OSError:
        return False


def check_replaceable(target: Path, kind: str, legacy: Callable[[str], bool]) -> None:
    """A report folder of `kind` may replace `target` (a command checks this before it runs, and the
    commit again under the lock)."""
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


# --- debris of killed runs --------------------------------------------------------------------------

#: `.NAME.new-PID-XXXXXXXX` (a staging folder, with a journal while its commit is under way),
#: `.NAME.PID-XXXXXXXX.tmp` and `.NAME.old-PID-XXXXXXXX` (a file being written and a replaced folder
#: not yet deleted, as prefixsim versions before sets wrote them).
_DEBRIS = re.compile(r"\.(?P<name>.+)\.(?:(?P<pid1>\d+)-[^.]+\.tmp|(?P<kind>new|old)-(?P<pid2>\d+)-[^.]+)")
#: Temporary files of prefixsim versions before process ids were in the name.
_LEGACY_TMP = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")


def _recover(folder: Path, names: Sequence[str]) -> None:
    """Remove what killed runs left beside the entries `names` of `folder`, first undoing a commit a
    kill interrupted (under the folder's lock, so no live commit is seen half done)."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return
    for entry in entries:
        m = _DEBRIS.fullmatch(entry)
        legacy = _LEGACY_TMP.fullmatch(entry)
        path = folder / entry
        if m is not None and m["name"] in names:
            if _alive(int(m["pid1"] or m["pid2"])):
                continue
            if m["kind"] == "new":
                _undo(folder, path)
            elif m["kind"] == "old" and not os.path.lexists(folder / m["name"]):
                _restore(path, folder / m["name"])
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                discard(path)
        elif legacy is not None and legacy["name"] in names:
            discard(path)


def _restore(old: Path, target: Path) -> None:
    try:
        os.rename(old, target)
    except OSError:
        pass   # someone else's output is in place now; ours is debris


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


