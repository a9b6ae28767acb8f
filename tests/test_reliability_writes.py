"""Nothing lost: a report is replaced whole or not at all, whatever interrupts the run."""
import errno
import os
import signal
import subprocess
import sys
import textwrap
import time

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


# The child stalls in its third fsync: two temporary files are staged, none renamed yet.
CHILD = textwrap.dedent("""
    import os, sys, time
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
    leftovers = list((tmp_path / "r").rglob("*.tmp"))
    if sig == signal.SIGINT:   # Ctrl-C: exit 130 and the temporary files cleaned up
        assert p.returncode == 130 and not leftovers
    else:                      # SIGKILL cannot clean up: the debris is hidden, the report intact
        assert all(f.name.startswith(".") for f in leftovers)


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
    from prefixsim.fsutil import open_atomic

    target = tmp_path / "trace.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with open_atomic(target) as fh:
            fh.write("half a line")
            raise RuntimeError("crash mid-export")
    assert target.read_text() == "old\n" and not list(tmp_path.glob(".*.tmp"))
