"""Writing output files so that nothing the user has is lost.

- An output is never an input: `check_outputs` compares every path a command will write with every
  file it reads (resolved paths and device/inode, so a symlink or hard link is caught too) before
  anything is written.
- A node that is not a regular file is never replaced (`io/nodes.py`): a symlink's target is
  written, a device or a FIFO is written through, a folder or a socket is refused.
- Files that belong together (a report folder; a page, its Markdown twin and its images; a study's
  CSV, PNG and SVG) are one set, staged beside their place and swapped in as one (`io/swap.py`), so
  a crash, Ctrl-C or a full disk leaves either the previous set or the new one, never a mix, and
  files of an earlier report folder that the new one does not hold disappear with it.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, Mapping

from prefixsim.errors import UserError
from prefixsim.io.nodes import Target, opened_through, output_target, write_through
from prefixsim.io.swap import MARKER, Content, Folder, check_replaceable, staged

__all__ = ["MARKER", "Folder", "check_outputs", "check_replaceable", "open_atomic", "replace_folder", "slug",
           "write_atomic", "write_files"]


# --- an output is never an input --------------------------------------------------------------------

def check_outputs(inputs: Iterable[str | os.PathLike], files: Iterable[str | os.PathLike] = (),
                  folders: Iterable[str | os.PathLike] = (), nodes: bool = True) -> None:
    """Refuse, before anything is written, an output that is one of the inputs.

    `inputs`: every file the command reads (a folder counts as every file under it). `files`: files
    that will be replaced; with `nodes`, one that is a folder, a socket or a block device (or a
    symlink to one) is refused too (`io/nodes.py`). `folders`: folders that will be replaced whole;
    one that is an input or holds one (or a hard link to one) is refused too. Raises a UserError
    naming the output."""
    known = _Inputs(inputs)
    for out in files:
        hit = known.match(Path(out))
        if hit is not None:
            raise _clash(out, hit)
        if nodes:
            output_target(out)
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


# --- writing -----------------------------------------------------------------------------------------

def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """One file, replaced whole (or a symlink's target, or written through a device; see `write_files`)."""
    write_files({path: data})


def write_files(files: Mapping[str | os.PathLike, Content], exclusive: bool = False) -> None:
    """Files (and `Folder`s) that belong together, in one folder: staged, then swapped in as one set
    (`io/swap.py`). An entry that is a symlink has its target replaced, one that is a character
    device or a FIFO is written through, after the set; a folder or socket where a file goes is
    refused before anything is written. With `exclusive`, nothing that exists is replaced."""
    plain: dict[str, Content] = {}
    parents: set[Path] = set()
    special: list[tuple[Target, Content]] = []
    for path, data in files.items():
        path = Path(path)
        # a Folder is checked by its kind as it commits; `exclusive` refuses whatever exists there
        t = Target(path) if isinstance(data, Folder) or exclusive else output_target(path)
        if t.through or t.linked:
            special.append((t, data))
        else:
            plain[path.name] = data
            parents.add(path.parent)
    assert len(parents) <= 1, f"a set lives in one folder: {sorted(map(str, parents))}"
    if plain:
        _write_set(parents.pop(), plain, exclusive)
    for t, data in special:
        if t.through:
            write_through(t.path, data)   # type: ignore[arg-type]
        else:
            _write_set(t.path.parent, {t.path.name: data}, make_parent=False)


def _write_set(parent: Path, entries: Mapping[str, Content], exclusive: bool = False, make_parent: bool = True) -> None:
    with staged(parent, list(entries), exclusive, make_parent) as s:
        for name, data in entries.items():
            s.put(name, data)


def replace_folder(target: str | os.PathLike, files: Mapping[str, str | bytes], kind: str,
                   legacy: Callable[[str], bool] = lambda name: False) -> None:
    """Make `target` a folder holding exactly `files` (name -> content), as one step. `target` is
    replaced only if prefixsim wrote it for this `kind` of output: every entry is listed in its
    marker, or (folders written before the marker existed) passes `legacy`."""
    target = Path(target)
    check_replaceable(target, kind, legacy)
    write_files({target: Folder(files, kind, legacy)})


@contextmanager
def open_atomic(path: str | os.PathLike) -> Iterator[IO[str]]:
    """A text file to stream into (large exports); it replaces `path` (or a symlink's target) only
    when the block completes. A device or a FIFO is written as the block goes."""
    t = output_target(path)
    if t.through:
        with opened_through(t.path, text=True) as fh:
            yield fh
        return
    with staged(t.path.parent, [t.path.name], make_parent=not t.linked) as s:
        with s.stream(t.path.name) as fh:
            yield fh


def slug(name: str) -> str:
    """A scenario name as a folder name."""
    s = "".join(c if c.isalnum() or c in "-_." else "-" for c in name.strip()).strip("-.")
    return s or "scenario"
