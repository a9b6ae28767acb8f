"""Crashes at the edges (issue 33, class 9): a `--start` at either end of the clock, and `init` where
its folder cannot be made whole. Each is exit 2 naming the option or the path, and `init` writes all
or nothing."""
import errno
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import cli_exit


SCENARIO = "name: edge\nprovider: prefix\ntokenizer: approx\n{start}base: {{system: 100}}\ntimeline: [request: 2]\n"


def _exit(args, capsys):
    code, _, err = cli_exit(args, capsys)
    return code, err


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(root.rglob("*"))}


# --- --start at the ends of the clock ---------------------------------------------------------------------

@pytest.mark.parametrize("start,message", [
    ("0001-01-01T00:00:00+14:00", "prefixsim: --start '0001-01-01T00:00:00+14:00' is out of range: in UTC it falls "
                                  "outside the years 1 to 9999"),
    ("9999-12-31T23:59:59Z", "s.yaml: --start 9999-12-31T23:59:59Z: the timeline runs 10 s from 9999-12-31T23:59:59Z, "
                             "past the last instant a clock can show (9999-12-31T23:59:59Z); give an earlier one"),
    ("yesterday", "prefixsim: --start 'yesterday' is not a date and time (ISO 8601, e.g. 2026-11-24T16:30:00Z)"),
])
def test_a_start_at_the_ends_of_the_clock_names_the_option(tmp_path, capsys, monkeypatch, start, message):
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(SCENARIO.format(start=""))
    code, err = _exit(["run", "s.yaml", "--no-write", "--start", start], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[0] == message


def test_a_scenario_start_too_late_for_its_timeline_is_located_at_its_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(SCENARIO.format(start='start: "9999-12-31T23:59:55Z"\n'))
    code, err = _exit(["run", "s.yaml", "--no-write"], capsys)
    assert code == 2
    assert err.splitlines()[0] == ("s.yaml:4:1: start: the timeline runs 10 s from 9999-12-31T23:59:55Z, past the last "
                                   "instant a clock can show (9999-12-31T23:59:59Z); give an earlier one")


@settings(max_examples=40, deadline=None)
@given(offset=st.integers(-14 * 60, 14 * 60), day=st.sampled_from(["0001-01-01T00:00:00", "9999-12-31T23:59:59"]))
def test_any_offset_at_either_end_of_the_calendar_is_a_start_or_a_located_error(offset, day):
    """The clock's start parses to an instant or says why not; never an OverflowError."""
    from prefixsim.scenario.checks import clock_overrun, parse_start

    sign, h, m = "+" if offset >= 0 else "-", abs(offset) // 60, abs(offset) % 60
    try:
        t = parse_start(f"{day}{sign}{h:02d}:{m:02d}")
    except ValueError as e:
        assert str(e) == "is out of range: in UTC it falls outside the years 1 to 9999"
        return
    assert clock_overrun(t, 0) is None
    assert (clock_overrun(t, 10) is None) == (t.year < 9999 or (t.month, t.day, t.hour) != (12, 31, 23)
                                              or t.minute < 59 or t.second < 49)


# --- init: all or nothing, named ---------------------------------------------------------------------------

def test_init_beside_a_dangling_symlink_refuses_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("s")
    os.symlink("nowhere.yaml", "s/my-scenario.yaml")
    code, err = _exit(["init", "s"], capsys)
    assert code == 2
    assert err == "s/my-scenario.yaml: already exists; not overwriting (choose an empty folder)\n"
    assert sorted(os.listdir("s")) == ["my-scenario.yaml"] and not os.path.exists("nowhere.yaml")


@pytest.mark.parametrize("where,message", [
    ("file/s", "file/s: file is a file, not a folder; cannot write under it"),
    ("file/a/b", "file/a/b: file is a file, not a folder; cannot write under it"),
    ("dangling", "dangling: is a symlink to a folder that does not exist; not writing there"),
    ("dangling/s", "dangling/s: dangling is a symlink to a folder that does not exist; cannot write under it"),
])
def test_init_where_no_folder_can_be_made_is_named(tmp_path, capsys, monkeypatch, where, message):
    monkeypatch.chdir(tmp_path)
    Path("file").write_text("mine")
    os.symlink("missing", "dangling")
    before = _tree(tmp_path)
    code, err = _exit(["init", where], capsys)
    assert code == 2 and err == message + "\n"
    assert _tree(tmp_path) == before


def test_init_in_proc_is_a_user_error(capsys):
    code, err = _exit(["init", "/proc/prefixsim-init-test"], capsys)
    assert code == 2 and err.startswith("/proc/prefixsim-init-test: cannot write: ")
    assert not os.path.exists("/proc/prefixsim-init-test")


@pytest.mark.parametrize("exists", [True, False])
@pytest.mark.parametrize("after", [0, 1, 5])
def test_init_on_a_full_disk_writes_nothing_and_a_rerun_works(tmp_path, capsys, monkeypatch, exists, after):
    """The disk fills after `after` files: nothing is left (no half folder, no 0-byte example that a
    rerun would refuse to replace), the error names the path, and a rerun writes everything."""
    monkeypatch.chdir(tmp_path)
    if exists:
        os.mkdir("s")
    before = _tree(tmp_path)
    import builtins
    real, opened = builtins.open, []

    class Full:
        """A file on a disk that is full: it opens, then no write fits."""
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    def full(file, mode="r", *args, **kwargs):
        fh = real(file, mode, *args, **kwargs)
        if any(c in mode for c in "wxa") and str(tmp_path) in os.path.abspath(os.fspath(file)):
            opened.append(file)
            if len(opened) > after:
                return Full(fh)
        return fh
    monkeypatch.setattr(builtins, "open", full)
    code, err = _exit(["init", "s"], capsys)
    assert code == 2, err
    assert "cannot write: No space left on device" in err and err.startswith("s")
    assert _tree(tmp_path) == before
    monkeypatch.setattr(builtins, "open", real)
    code, err = _exit(["init", "s"], capsys)
    assert code == 0, err
    assert len(list(Path("s/examples").glob("*.yaml"))) > 5 and Path("s/my-scenario.yaml").stat().st_size > 0
