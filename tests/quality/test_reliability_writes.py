"""Nothing lost: a report is replaced whole or not at all, whatever interrupts the run."""
import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from prefixsim.cli import main

SCENARIO = "name: keep\nprovider: prefix\ntokenizer: approx\nbase: {{system: 100}}\ntimeline: [request: {n}]\n"
FILES = ("requests.csv", "summary.csv", "summary.md", "results.json")


def _first_report(tmp_path):
    sc = tmp_path / "keep.yaml"
    sc.write_text(SCENARIO.format(n=2))
    with pytest.raises(SystemExit) as e:
        main(["run", str(sc), "--out", str(tmp_path / "r"), "--price-date", "2026-11-30", "--format", "json"])
    assert e.value.code == 0
    before = {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES}
    sc.write_text(SCENARIO.format(n=5))   # the next run would write different reports
    return sc, before


# The child stalls in its third fsync: two temporary files are staged, none renamed yet. It takes
# SIGINT as a terminal's Ctrl-C finds it: a job a non-interactive shell starts in the background
# inherits SIGINT ignored, and prefixsim rightly keeps a disposition it found.
CHILD = textwrap.dedent("""
    import os, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    calls = []
    def stall(fd):
        calls.append(fd)
        if len(calls) == 3:
            open(sys.argv[1], "w").close()
            time.sleep(60)
    os.fsync = stall
    from prefixsim.cli import main
    main(sys.argv[2:])
""")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_interrupted_run_leaves_the_previous_report_whole(tmp_path, sig):
    sc, before = _first_report(tmp_path)
    marker = tmp_path / "stalled"
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(marker), "run", str(sc), "--out", str(tmp_path / "r"),
                          "--price-date", "2026-11-30"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
        time.sleep(0.02)
    p.send_signal(sig)
    p.wait(timeout=30)
    after = {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES}
    assert after == before
    leftovers = _debris(tmp_path / "r")
    if sig == signal.SIGINT:   # Ctrl-C: exit 130 and the temporary files cleaned up
        assert p.returncode == 130 and not leftovers
    else:                      # SIGKILL cannot clean up: the debris is hidden, the report intact
        assert all(f.name.startswith(".") for f in leftovers)
    with pytest.raises(SystemExit) as e:   # the next run removes what the killed one left
        main(["run", str(sc), "--out", str(tmp_path / "r"), "--price-date", "2026-11-30", "--format", "json"])
    assert e.value.code == 0 and not _debris(tmp_path / "r")


def _debris(root):
    """Temporary files and staging folders left anywhere under `root`."""
    return [p for p in root.rglob("*") if p.name.endswith(".tmp") or ".new-" in p.name or ".old-" in p.name]


def test_full_disk_is_a_user_error_and_keeps_the_report(tmp_path, monkeypatch, capsys):
    sc, before = _first_report(tmp_path)
    capsys.readouterr()

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(SystemExit) as e:
        main(["run", str(sc), "--out", str(tmp_path / "r"), "--price-date", "2026-11-30"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" not in err
    assert "cannot write: No space left on device (any previous version is left as it was)" in err
    assert {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES} == before
    assert not list((tmp_path / "r").rglob("*.tmp"))


def test_streamed_export_is_atomic_too(tmp_path):
    from prefixsim.io.fsutil import open_atomic

    target = tmp_path / "trace.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with open_atomic(target) as fh:
            fh.write("half a line")
            raise RuntimeError("crash mid-export")
    assert target.read_text() == "old\n" and not list(tmp_path.glob(".*.tmp"))


CHARTED = ("name: keep\nprovider: prefix\ntokenizer: approx\nbase: {system: 100}\ntimeline: [request: \"${n}\"]\n"
           "sweep: {param: n, values: [1, 2]}\nchart: {x: n, y: cost_usd}\n")


def _run(sc, out):
    with pytest.raises(SystemExit) as e:
        main(["run", str(sc), "--out", str(out), "--price-date", "2026-11-30", "--format", "json"])
    return e.value.code


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_files_of_an_earlier_run_that_this_run_does_not_write_go(tmp_path):
    sc = tmp_path / "keep.yaml"
    sc.write_text(CHARTED)
    assert _run(sc, tmp_path / "r") == 0
    assert (tmp_path / "r" / "keep" / "chart.png").is_file()
    sc.write_text(SCENARIO.format(n=2))   # no sweep, no chart
    assert _run(sc, tmp_path / "r") == 0
    assert sorted(p.name for p in (tmp_path / "r" / "keep").iterdir()) == [".prefixsim-report", *sorted(FILES)]


# The child moves the old report away, then stalls before renaming the new one in (the two-rename
# path, taken where the system cannot exchange two folders in one step).
BETWEEN = textwrap.dedent("""
    import os, sys, time
    import prefixsim.io.fsops as fsops
    fsops.exchange = lambda a, b: False
    calls = []
    def stalling(real):
        def rename(a, b, *args, **kwargs):
            calls.append(a)
            if len(calls) == 2:
                open(sys.argv[1], "w").close()
                time.sleep(60)
            return real(a, b, *args, **kwargs)
        return rename
    os.rename, os.replace = stalling(os.rename), stalling(os.replace)
    from prefixsim.cli import main
    main(sys.argv[2:])
""")


@pytest.mark.slow
def test_a_kill_between_renames_never_mixes_two_reports(tmp_path, monkeypatch, capsys):
    sc, before = _first_report(tmp_path)
    assert _run(sc, tmp_path / "new") == 0
    new = {f: (tmp_path / "new" / "keep" / f).read_bytes() for f in FILES}
    marker = tmp_path / "stalled"
    p = subprocess.Popen([sys.executable, "-c", BETWEEN, str(marker), "run", str(sc), "--out", str(tmp_path / "r"),
                          "--price-date", "2026-11-30"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
        time.sleep(0.02)
    p.kill()
    p.wait(timeout=30)
    present = {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES if (tmp_path / "r" / "keep" / f).exists()}
    assert present in ({}, before, new)   # never some of one report beside some of the other
    # A later run that fails (a full disk) puts the report the killed run had moved away back.
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")))
    assert _run(sc, tmp_path / "r") == 2
    assert {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES} == before
    assert not _debris(tmp_path / "r")
    monkeypatch.undo()
    assert _run(sc, tmp_path / "r") == 0
    assert {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES} == new


def test_debris_of_killed_runs_and_older_versions_is_removed(tmp_path):
    sc, before = _first_report(tmp_path)
    r = tmp_path / "r"
    (r / "keep" / ".prefixsim-report").unlink()          # a report folder from before the marker
    (r / "keep" / ".requests.csv.k3x_9q2a.tmp").write_text("half")   # and an older version's debris
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (r / f".keep.new-{dead.pid}-abcdefgh").mkdir()         # a killed run's staging folder
    (r / f".keep.new-{dead.pid}-abcdefgh" / "requests.csv").write_text("half")
    alive = r / f".keep.new-{os.getpid()}-zzzzzzzz"        # a run still writing: left alone
    alive.mkdir()
    assert _run(sc, r) == 0
    assert sorted(p.name for p in (r / "keep").iterdir()) == [".prefixsim-report", *sorted(FILES)]
    assert _debris(r) == [alive]


CONCURRENT = textwrap.dedent("""
    import sys
    import prefixsim.io.fsops as fsops
    if sys.argv[1] == "renames":
        fsops.exchange = lambda a, b: False
    from prefixsim.cli import main
    for _ in range(int(sys.argv[2])):
        try:
            main(sys.argv[3:])
        except SystemExit as e:
            if e.code:
                raise
""")


@pytest.mark.slow
@pytest.mark.parametrize("swap", ["exchange", "renames"])
def test_concurrent_runs_leave_one_whole_report(tmp_path, swap):
    expected = []
    procs = []
    for n in (2, 3, 4):
        sc = tmp_path / f"keep{n}.yaml"
        sc.write_text(SCENARIO.format(n=n))
        assert _run(sc, tmp_path / f"alone{n}") == 0
        expected.append(_tree(tmp_path / f"alone{n}" / "keep"))
        procs.append(subprocess.Popen([sys.executable, "-c", CONCURRENT, swap, "4", "run", str(sc), "--out",
                                       str(tmp_path / "r"), "--price-date", "2026-11-30", "--format", "json"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    assert _tree(tmp_path / "r" / "keep") in expected
    assert not _debris(tmp_path / "r")


def test_a_folder_put_in_place_between_two_renames_is_replaced_whole(tmp_path, monkeypatch):
    """The two-rename path: another run's report lands after ours moved the old one away."""
    import prefixsim.io.fsutil as fs

    target = tmp_path / "keep"
    fs.replace_folder(target, {"a.csv": "old"}, "test")
    import prefixsim.io.fsops as fsops
    monkeypatch.setattr(fsops, "exchange", lambda a, b: False)
    real, raced = os.rename, []

    def racing(a, b):
        if ".new-" in str(a) and not raced:
            raced.append(a)
            target.mkdir()
            (target / "b.csv").write_text("theirs")
            (target / fs.MARKER).write_text("prefixsim: test\nb.csv\n")
        return real(a, b)
    monkeypatch.setattr(os, "rename", racing)
    fs.replace_folder(target, {"a.csv": "ours"}, "test")
    assert raced
    assert _tree(target) == {".prefixsim-report": b"prefixsim: test\na.csv\n", "a.csv": b"ours"}
    assert not _debris(tmp_path)


def test_read_only_output_is_a_user_error_and_keeps_the_report(tmp_path, monkeypatch, capsys):
    # The folder refuses every new file the way a read-only folder does for a user; simulated, so the
    # test means the same as root (which a chmod does not stop) and on every machine.
    sc, before = _first_report(tmp_path)
    capsys.readouterr()

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    import tempfile
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert _run(sc, tmp_path / "r") == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"{tmp_path / 'r' / 'keep'}: cannot write: Permission denied (any previous "
                                    "version is left as it was)")
    assert {f: (tmp_path / "r" / "keep" / f).read_bytes() for f in FILES} == before


@pytest.mark.parametrize("gone_at", ["lstat", "listdir"])
def test_a_report_another_run_moves_away_mid_check_counts_as_absent(tmp_path, monkeypatch, gone_at):
    """Another run's swap can take the folder away between the checks `replace_folder` makes: the
    check then sees no folder (was: FileNotFoundError, exit 70, once in ~16 concurrent test runs)."""
    import prefixsim.io.fsutil as fs

    target = tmp_path / "keep"
    fs.replace_folder(target, {"a.csv": "old"}, "test")
    real, moved = getattr(os, gone_at), []

    def moved_away(path, *a, **k):
        if not moved and Path(path) == target:
            moved.append(path)
            shutil.rmtree(target)            # the other run renamed it away just now
        return real(path, *a, **k)

    monkeypatch.setattr(fs.os, gone_at, moved_away)
    fs.check_replaceable(target, "test", lambda name: False)
    monkeypatch.undo()
    assert moved
    fs.replace_folder(target, {"b.csv": "new"}, "test")
    assert sorted(p.name for p in target.iterdir()) == [fs.MARKER, "b.csv"]
