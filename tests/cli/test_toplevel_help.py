"""`prefixsim --help` and `-h` print cli/toplevel.py's page without importing click (issue 35: start-up);
that page is click's own rendering of the group, byte for byte, at every width a terminal can give, and
the process prints, exits and fails as click's would. Bare `prefixsim` is click's (a usage error, exit
2, the help on stderr): the fast page is never used for it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prefixsim.cli import cli, main, toplevel

ROOT = Path(__file__).resolve().parents[2]


def _verified() -> bool:
    from importlib.metadata import version

    return version("click") in toplevel.VERIFIED_CLICK


#: Whether the installed click is one the page was compared with. A newer click (a fresh install takes
#: the latest) turns the fast page off, and `--help` is click's own: the tests then hold that, so a
#: click release never turns CI red. To turn the page on for it: add its version to VERIFIED_CLICK
#: and run this file.
VERIFIED = _verified()

#: every width click's HelpFormatter takes from a terminal (max(min(columns, 80) - 2, 50)), and beyond
WIDTHS = [*range(50, 79), 10, 20, 30, 36, 37, 38, 45, 49, 79, 80, 100, 120, 200]


def _clicks(width: int | None) -> str:
    """click's help of the group, on a context as cli.main makes it (with the group's context_settings)."""
    return cli.get_help(cli.context_class(cli, info_name="prefixsim", terminal_width=width, **cli.context_settings))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_is_clicks_rendering_of_the_group(width):
    if VERIFIED:
        assert toplevel.page(width) == _clicks(width)
    else:   # the page is off: click renders --help itself
        assert not toplevel._verified_click()


def test_the_page_lists_every_command_and_option():
    page = toplevel.page(78)
    assert all(f"\n  {name} " in page for name in toplevel.COMMANDS)
    assert "--version" in page and "--debug" in page and "-h, --help" in page and "\nCommands:\n" in page


def test_the_help_text_is_as_click_cleans_it():
    import inspect

    assert inspect.cleandoc(toplevel.HELP).partition("\f")[0] == toplevel.HELP == cli.help


def test_the_page_is_on_only_for_a_click_it_was_compared_with():
    """On a new click: add its version to VERIFIED_CLICK and run this file (the page must still match)."""
    assert toplevel._verified_click() == VERIFIED


@pytest.mark.parametrize("columns", ["", "1", "50", "79", "80", "81", "200", "x", "0", "-3", " 90 "])
def test_columns_as_shutil_reads_them(monkeypatch, columns):
    import shutil

    monkeypatch.setenv("COLUMNS", columns)
    assert toplevel.columns() == shutil.get_terminal_size().columns
    monkeypatch.delenv("COLUMNS")
    assert toplevel.columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("size", [(24, 40), (24, 66), (50, 80), (10, 133), (0, 0)])
def test_columns_of_a_terminal_as_shutil_reads_them(monkeypatch, size):
    import fcntl
    import pty
    import shutil
    import struct
    import termios

    master, slave = pty.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
        with os.fdopen(os.dup(slave), "w") as tty:
            monkeypatch.setattr(sys, "__stdout__", tty)
            monkeypatch.delenv("COLUMNS", raising=False)
            assert toplevel.columns() == shutil.get_terminal_size().columns == (size[1] or 80)
    finally:
        os.close(master)
        os.close(slave)


def test_no_page_where_click_is_loaded_or_not_the_verified_one(monkeypatch):
    assert "click" in sys.modules and toplevel.text() is None   # a test runner may have forced its width
    monkeypatch.delitem(sys.modules, "click")
    from importlib.metadata import version
    monkeypatch.setattr(toplevel, "VERIFIED_CLICK", (version("click"),))   # whichever click is installed
    assert toplevel.text() == toplevel.page(max(min(toplevel.columns(), 80) - 2, 50))
    monkeypatch.setattr(toplevel, "VERIFIED_CLICK", ("0.1",))
    assert toplevel.text() is None


def _run(args, env, preload_click, before=""):
    code = before + ("import click\n" if preload_click else "") + "from prefixsim.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, env=env, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("columns", [None, "20", "50", "52", "53", "79", "80", "81", "200", "x"])
@pytest.mark.parametrize("args", [["--help"], ["-h"], []])
def test_the_process_prints_and_exits_as_click(columns, args):
    """The same bytes on stdout and stderr and the same exit code, with click loaded first (so the
    page is click's) and without (so it is cli/toplevel.py's, but for bare `prefixsim`)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    fast, slow = _run(args, env, preload_click=False), _run(args, env, preload_click=True)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode == (0 if args else 2) and b"Usage: prefixsim [OPTIONS] COMMAND" in fast.stdout + fast.stderr


@pytest.mark.slow
def test_help_alone_imports_no_click_and_anything_else_does():
    code = ("import contextlib, io, sys\nfrom prefixsim.cli import main\n"
            "for args in (['--help'], ['-h'], ['--debug', '--help']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            "        main(args)\n"
            "    print('click' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == (["False", "False", "True"] if VERIFIED else ["True", "True", "True"])


@pytest.mark.slow
def test_completion_and_a_bad_option_are_clicks():
    env = {**os.environ, "_PREFIXSIM_COMPLETE": "bash_source"}
    done = _run(["--help"], env, preload_click=False)
    assert done.returncode == 0 and b"_prefixsim_completion" in done.stdout and b"Usage" not in done.stdout
    bad = _run(["--bogus"], dict(os.environ), preload_click=False)
    assert bad.returncode == 2 and bad.stderr.startswith(b"prefixsim: No such option") and b"--bogus" in bad.stderr


@pytest.mark.slow
def test_a_failed_write_is_reported_as_click_s_would_be():
    """stdout closed under the process: the write fails, and says so as cli/group.py's main does."""
    fast = _run(["--help"], dict(os.environ), preload_click=False, before="import os\nos.close(1)\n")
    slow = _run(["--help"], dict(os.environ), preload_click=True, before="import os\nos.close(1)\n")
    assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr)
    assert fast.returncode == 70 and b"internal error: OSError" in fast.stderr


def test_main_in_process_prints_clicks_page(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out == _clicks(None) + "\n"
