"""An output path that is not a regular file is never replaced (issue 33, class 1): a symlink's
target is written (the link stays), a character device or a FIFO is written through (its reader gets
the bytes; /dev/full's ENOSPC is exit 2 naming the path), a folder, socket or block device is refused.

The corpus below is every command that writes a file, each with a node at its output path. Devices
are reached through a symlink in tmp_path: on the old code the rename replaced the link, never the
machine's /dev/full or /dev/null."""
import os
import socket
import stat
import threading
from pathlib import Path

import pytest
from conftest import cli_exit

from prefixsim.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
LOG = str(ROOT / "tests" / "malformed" / "logs" / "out-of-order.jsonl")
DATE = ["--price-date", "2026-11-30"]
SCENARIO = "name: keep\nprovider: prefix\ntokenizer: approx\nbase: {system: 100}\ntimeline: [request: 2]\n"


def _exit(args, capsys):
    code, _, err = cli_exit(args, capsys)
    return code, err


class Reader:
    """The other end of a FIFO: reads whatever is written until the writer closes."""

    def __init__(self, path: Path) -> None:
        self.data: bytes | None = None
        self.thread = threading.Thread(target=self._read, args=(path,), daemon=True)
        self.thread.start()

    def _read(self, path):
        with open(path, "rb") as fh:
            self.data = fh.read()

    def got(self) -> bytes | None:
        self.thread.join(timeout=30)   # on the old code the FIFO was replaced: nobody ever writes to it
        return self.data


# --- the shared writer, every kind of node ------------------------------------------------------------

@pytest.mark.parametrize("writer", ["write_atomic", "open_atomic"])
def test_every_kind_of_node_at_an_output_path(tmp_path, monkeypatch, writer):
    from prefixsim.io import fsutil

    def write(path, text="new\n"):
        if writer == "write_atomic":
            fsutil.write_atomic(path, text)
        else:
            with fsutil.open_atomic(path) as fh:
                fh.write(text)

    monkeypatch.chdir(tmp_path)
    os.mkdir("elsewhere")
    Path("elsewhere/target.txt").write_text("old\n")
    os.symlink("elsewhere/target.txt", "link.txt")
    write("link.txt")                                          # a symlink: its target is written
    assert os.readlink("link.txt") == "elsewhere/target.txt" and Path("elsewhere/target.txt").read_text() == "new\n"
    os.symlink("elsewhere/missing.txt", "dangling.txt")
    write("dangling.txt")                                      # a dangling one: its target is made
    assert os.path.islink("dangling.txt") and Path("elsewhere/missing.txt").read_text() == "new\n"
    assert sorted(os.listdir("elsewhere")) == ["missing.txt", "target.txt"]   # no temporary file left
    os.mkfifo("fifo")
    reader = Reader(Path("fifo"))
    write("fifo")                                              # a FIFO: written through
    assert reader.got() == b"new\n" and stat.S_ISFIFO(os.lstat("fifo").st_mode)
    os.symlink("/dev/null", "null")
    write("null")
    assert os.readlink("null") == "/dev/null" and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    os.symlink("/dev/full", "full")
    with pytest.raises(UserError) as e:
        write("full")
    assert str(e.value) == "full: cannot write: No space left on device"
    assert os.readlink("full") == "/dev/full" and stat.S_ISCHR(os.stat("/dev/full").st_mode)
    os.mkdir("folder")
    with pytest.raises(UserError) as e:
        write("folder")
    assert str(e.value) == ("folder: is a folder; an output is written to a file, a character device or a FIFO, "
                            "never over a folder (nothing was written; choose another output path)")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind("sock")
        with pytest.raises(UserError) as e:
            write("sock")
    finally:
        sock.close()
    assert str(e.value).startswith("sock: is a socket; an output is written to a file, a character device or a FIFO")
    assert stat.S_ISSOCK(os.lstat("sock").st_mode)
    os.symlink("loop", "loop")
    with pytest.raises(UserError) as e:
        write("loop")
    assert str(e.value) == "loop: is a symlink that cannot be followed (Too many levels of symbolic links); nothing was written"
    Path("file").write_text("x")
    with pytest.raises(UserError) as e:
        write("file/out.txt")
    assert str(e.value) == "file/out.txt: file is a file, not a folder; cannot write under it"
    assert Path("file").read_text() == "x"


def test_a_link_only_the_kernel_can_follow_is_written_through(tmp_path):
    """/dev/stdout -> /proc/self/fd/1 -> a pipe: its path names no folder to write a temporary file in."""
    from prefixsim.io.fsutil import write_atomic

    r, w = os.pipe()
    try:
        write_atomic(f"/proc/self/fd/{w}", "through\n")
        assert os.read(r, 100) == b"through\n"
    finally:
        os.close(r)
        os.close(w)


def test_a_node_refused_as_output_is_refused_before_the_command_works(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("out/minimum.csv")
    code, err = _exit(["breakeven", "minimum", "--out", "out", *DATE], capsys)
    assert code == 2
    assert err == ("out/minimum.csv: is a folder; an output is written to a file, a character device or a FIFO, "
                   "never over a folder (nothing was written; choose another output path)\n")
    assert sorted(os.listdir("out")) == ["minimum.csv"]


# --- the corpus: every command that writes a file -------------------------------------------------------

def _scenario(tmp_path):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    return "s.yaml"


#: command -> (the arguments given the output path, the path of the file the node is put at)
COMMANDS = {
    "replay --export-mooncake": (lambda t: ["replay", LOG, "--export-mooncake", "out.jsonl", "--format", "csv"],
                                 "out.jsonl"),
    "advise --chart": (lambda t: ["advise", LOG, "--chart", "out.svg"], "out.svg"),
    "search --chart": (lambda t: ["search", str(ROOT / "scenarios" / "agent-design-space.yaml"), "--no-write",
                                  "--chart", "out.svg", *DATE], "out.svg"),
    "breakeven --out": (lambda t: ["breakeven", "minimum", "--out", "out", *DATE], "out/minimum.svg"),
    "report --output": (lambda t: ["report", _scenario(t), "-o", "r.html", *DATE], "r.md"),   # the page's twin
}


def _node(kind: str, path: Path) -> Reader | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        return Reader(path)
    if kind == "symlink":
        (path.parent / "target").write_text("old")
        os.symlink("target", path)
    if kind == "full":
        os.symlink("/dev/full", path)
    return None


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "symlink", "full"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_writes_through_or_to_the_target_never_over_the_node(tmp_path, capsys, monkeypatch,
                                                                          command, kind):
    monkeypatch.chdir(tmp_path)
    import prefixsim.report.build as build
    monkeypatch.setattr(build, "study_designs", lambda files, params, sized=None, serving=None: [])   # report: its page without studies
    args, at = COMMANDS[command]
    reader = _node(kind, Path(at))
    code, err = _exit(args(tmp_path), capsys)
    if kind == "full":
        assert code == 2 and err.splitlines()[-1] == f"{at}: cannot write: No space left on device", err
        assert os.readlink(at) == "/dev/full" and stat.S_ISCHR(os.stat("/dev/full").st_mode)
        return
    assert code == 0, err
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(at).st_mode)
        assert reader.got()   # the reader got the output
    else:
        assert os.readlink(at) == "target"
        written = (Path(at).parent / "target").read_bytes()
        assert written and written != b"old"


#: Output options that name a folder swapped in whole (refused unless it is our folder: the test below).
FOLDER_OUTPUTS = {"run --out", "search --out", "advise --out"}


def test_the_corpus_holds_every_command_that_writes_a_file():
    """A command that gains an output option joins COMMANDS (and so the node cases above)."""
    import importlib

    from prefixsim.cli import COMMANDS as ALL

    outputs = set()
    for name, target in ALL.items():
        module, attr = target.split(":")
        for p in getattr(importlib.import_module(module), attr).params:
            if {"--out", "--output", "--chart", "--export-mooncake"} & set(p.opts):
                outputs.add(f"{name} {max(p.opts, key=len)}")
    files = {" ".join(c.split()[:2]) for c in COMMANDS}
    assert outputs == files | FOLDER_OUTPUTS


def test_a_fifo_or_symlink_as_a_run_report_folder_is_refused(tmp_path, capsys, monkeypatch):
    """Report folders are swapped whole: a node that is not our folder is refused, never replaced."""
    monkeypatch.chdir(tmp_path)
    _scenario(tmp_path)
    os.mkdir("out")
    os.mkfifo("out/keep")
    code, err = _exit(["run", "s.yaml", "--out", "out", *DATE], capsys)
    assert code == 2 and err == ("out/keep: exists and is not a scenario report; not replacing it "
                                 "(choose another output folder)\n")
    assert stat.S_ISFIFO(os.lstat("out/keep").st_mode)
