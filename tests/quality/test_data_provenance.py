"""tests/data holds byte-exact copies of public files: each one is listed in SOURCES.md with its
repository, commit, licence, size and sha256, and nothing else lives there. A file kept
gzip-compressed (`.gz`, too large to keep as it is) is listed by the public file's own bytes: its
size and sha256 are those of what it decompresses to; the 10 MiB cap counts the bytes on disk."""
import gzip
import hashlib
import re
import subprocess

from conftest import DATA

ROOT = DATA.parents[1]
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<repo>[\w.-]+/[\w.-]+) \| `(?P<path>[^`]+)` \| `(?P<commit>[0-9a-f]{40})` \| "
                 r"(?P<licence>[\w.-]+) \| (?P<bytes>[\d,]+) \| `(?P<sha>[0-9a-f]{64})` \|$")
DOCS = {"README.md", "SOURCES.md"}


def listed():
    rows = [m.groupdict() for m in map(ROW.match, (DATA / "SOURCES.md").read_text().splitlines()) if m]
    assert rows, "SOURCES.md lists no files"
    return rows


def public_bytes(name: str) -> bytes:
    """The public file's bytes: a `.gz` copy decompressed (it must be a gzip stream), any other as it is."""
    data = (DATA / name).read_bytes()
    if name.endswith(".gz"):
        assert data[:2] == b"\x1f\x8b", f"{name} is not gzip-compressed"
        return gzip.decompress(data)
    return data


def test_every_file_matches_its_sha256_and_size():
    for row in listed():
        data = public_bytes(row["file"])
        assert len(data) == int(row["bytes"].replace(",", "")), row["file"]
        assert hashlib.sha256(data).hexdigest() == row["sha"], f"{row['file']} is not the file SOURCES.md names"


def test_every_file_is_listed_and_the_folder_stays_small():
    on_disk = {p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file()} - DOCS
    assert on_disk == {row["file"] for row in listed()}
    assert sum((DATA / f).stat().st_size for f in on_disk) < 10 * 2**20   # as stored: a .gz counts compressed


def test_the_repository_never_points_outside_itself():
    """A clone must stand alone: no committed file reads or cites a folder beside the checkout."""
    needle = "../" + "shared"
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not files:   # not a git checkout (an sdist): walk the tree instead
        files = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                 if p.is_file() and ".venv" not in p.parts and ".git" not in p.parts]
    hits = [f for f in files if (ROOT / f).is_file() and needle.encode() in (ROOT / f).read_bytes()]
    assert hits == []
