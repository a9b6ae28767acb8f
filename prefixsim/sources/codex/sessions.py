"""A rollout, or a folder of them (`~/.codex/sessions`), as Codex calls in start order and as Records."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from prefixsim.core.tokens import remembered_count
from prefixsim.sources import problems
from prefixsim.sources.codex.calibrate import Calibrator
from prefixsim.sources.codex.rollout import Raw, parse
from prefixsim.sources.files import not_regular


def files_for(path: Path) -> list[Path]:
    """The rollouts at `path`: the file itself, or every `*.jsonl` under a folder (Codex names them
    `rollout-<time>-<session id>.jsonl` in YYYY/MM/DD folders), in name order, which is start order.
    An entry that is no regular file is skipped and named, never opened."""
    if not path.is_dir():
        return [path]
    out = []
    for f in sorted(path.rglob("*.jsonl")):
        why = not_regular(f)
        if why is not None:
            problems.skip(str(f), None, f"{why}; not read")
            continue
        out.append(f)
    return out


def session_key(root: Path, f: Path) -> str:
    """A rollout's name inside the folder `root`: its path relative to it, without `.jsonl`."""
    try:
        return f.with_suffix("").relative_to(root).as_posix() if root.is_dir() else f.stem
    except ValueError:
        return f.with_suffix("").as_posix()


def raws(path: Path, prefix: str = "") -> list[Raw]:
    """Every call of the rollouts at `path`, each request once (by its usage counts), in start order.
    With several rollouts, each stream is named after its file (`session_key`); `prefix` goes in
    front of every stream."""
    files = files_for(path)
    seen: set[str] = set()
    sessions: dict[str, str] = {}
    out: list[Raw] = []
    for f in files:
        own = f"{session_key(path, f)}/" if len(files) > 1 else ""
        out.extend(parse(f, seen, prefix + own, len(out), sessions))
    out.sort(key=lambda r: (r.start, r.order))
    return out


def calibrated(ordered: Iterable[Raw]) -> Iterator:
    """Records of calls given in start order, built one at a time as they are consumed."""
    return map(Calibrator(remembered_count("cl100k_base")).step, ordered)


def load(path: Path) -> list:
    """All requests of the rollouts at `path`, rebuilt and time-ordered."""
    return list(calibrated(raws(path)))
