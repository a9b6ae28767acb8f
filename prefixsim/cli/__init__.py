"""The command line, `prefixsim` (the console script runs `main`; `python -m prefixsim` too): a thin
layer over the library. `prefixsim --help` (or `-h`) alone is printed from cli/toplevel.py without
importing click, half of the process's start-up, when that page is click's own (toplevel.text says);
every other command line goes to the click group, cli/group.py, imported then. `cli` (the group) and
`LazyGroup` are importable from here as before, loaded on first use.
"""
from __future__ import annotations

import os
import sys

from prefixsim.cli import toplevel
from prefixsim.cli.toplevel import COMMANDS, SUMMARIES

__all__ = ["COMMANDS", "SUMMARIES", "main", "cli", "LazyGroup"]


def main(argv: list[str] | None = None) -> None:
    """Console entry point: maps user errors to exit 2 and bugs to exit 70 (cli/group.py)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 1 and args[0] in toplevel.HELP_OPTIONS and toplevel.COMPLETE_VAR not in os.environ:
        page = toplevel.text()
        if page is not None:
            _show(page)
    from prefixsim.cli import group   # lazy: click, which the page above does without

    group.main(args)


def _show(page: str) -> None:
    """Print the top-level help as click.echo does, and exit as cli/group.py's main would after it."""
    try:
        sys.stdout.write(page + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.exit(0)
    except KeyboardInterrupt:
        sys.stderr.write("prefixsim: interrupted\n")
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - as group.main: a bug, briefly (stdout closed, a full disk)
        sys.stderr.write(f"prefixsim: internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback)\n")
        sys.exit(70)
    sys.exit(0)


def __getattr__(name: str):
    """`cli` and `LazyGroup`: the click group's, imported on first use (importing click)."""
    if name in ("cli", "LazyGroup"):
        from prefixsim.cli import group   # lazy: click, which `prefixsim --help` does without

        return getattr(group, name)
    raise AttributeError(f"module 'prefixsim.cli' has no attribute {name!r}")
