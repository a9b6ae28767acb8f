"""A small on-disk memo for start-up work whose result never changes for the same inputs: genai-prices'
resolved rates (importing it and building its data is ~0.3 s) and BPE counts of short texts (building
tiktoken's cl100k encoding is ~0.3 s). A short replay then neither imports genai-prices nor builds the
encoding when a previous run already looked the same things up.

Each memo is one JSON file holding a stamp (what its values were computed from: the installed
package's files, the pinned BPE file) and its entries; a different stamp empties it. A missing,
corrupt or unwritable file only costs the work again, never an error. Where: $PREFIXSIM_CACHE_DIR,
else $XDG_CACHE_HOME/prefixsim, else ~/.cache/prefixsim; PREFIXSIM_CACHE_DIR=off turns it off."""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
from pathlib import Path

from prefixsim.errors import UserError

#: Entries kept per memo: the newest win (a file of a few hundred KB at most).
MAX_ENTRIES = 20_000


def cache_dir() -> Path | None:
    env = os.environ.get("PREFIXSIM_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "none") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "prefixsim"


def package_stamp(package: str, files: tuple[str, ...]) -> str | None:
    """What identifies an installed package's data without importing it: its folder and the size and
    modification time of `files` in it (an upgrade or an edit changes them). None if it is not found."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    root = Path(spec.origin).parent
    parts = [str(root)]
    for name in files:
        try:
            st = (root / name).stat()
        except OSError:
            return None
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


class DiskMemo:
    """key (str) -> JSON value, read on first use and written back (merged) when the process exits."""

    def __init__(self, name: str, stamp: str | None) -> None:
        self.name = name
        self.stamp = stamp
        self._items: dict[str, object] | None = None
        self._new: dict[str, object] = {}
        self._where: tuple | None = None   # the environment `_at` was made from
        self._at: Path | None = None

    def _path(self) -> Path | None:
        # Made again only when what `cache_dir` reads changes: a replay puts a count per distinct
        # text, and making the Path each time cost more than the puts (issue 35).
        env = os.environ.get("PREFIXSIM_CACHE_DIR")
        where = (env,) if env is not None else (None, os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))
        if where != self._where:
            d = cache_dir()
            self._where, self._at = where, None if d is None or self.stamp is None else d / f"{self.name}.json"
        return self._at

    def _read(self, path: Path | None) -> dict[str, object]:
        if path is None:
            return {}
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return {}
        if not isinstance(doc, dict) or doc.get("stamp") != self.stamp or not isinstance(doc.get("items"), dict):
            return {}
        return doc["items"]

    def get(self, key: str):
        if self._items is None:
            self._items = self._read(self._path())
        return self._items.get(key)

    def put(self, key: str, value) -> None:
        if self._path() is None:
            return
        if self._items is None:
            self._items = self._read(self._path())
        if not self._new:
            atexit.register(self.flush)
        self._items[key] = self._new[key] = value

    def flush(self) -> None:
        """Merge this process's new entries into the file (another process may have written since)."""
        path, new = self._path(), self._new
        if path is None or not new:
            return
        self._new = {}
        items = {**self._read(path), **new}
        if len(items) > MAX_ENTRIES:
            items = dict(list(items.items())[-MAX_ENTRIES:])
        # The writer every output goes through: the memo replaced whole, a symlink's target written,
        # never a node replaced.
        from prefixsim.io.fsutil import write_atomic  # lazy: loads only when a memo has new entries, at exit

        try:
            write_atomic(path, json.dumps({"stamp": self.stamp, "items": items}, separators=(",", ":")))
        except (OSError, UserError):
            pass   # the memo only saves work: a folder that cannot hold it costs the work again
