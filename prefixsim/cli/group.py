"""The click group: every command line but the top-level help (cli/toplevel.py prints that without
click). Commands live in their own modules and are imported only when invoked, so `prefixsim --help`
(when click prints it) does not load pandas, matplotlib or tiktoken.

Errors: a UserError becomes one line `path:line[:col]: message` and exit code 2; anything else is a
bug: exit 70 with a short message (`--debug` shows the traceback).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys

import click

from prefixsim import __version__
from prefixsim.cli.toplevel import COMMANDS, DEBUG_HELP, HELP, HELP_OPTIONS, SUMMARIES
from prefixsim.errors import UserError

EXIT_USAGE = 2
EXIT_BUG = 70


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if self._load(name) is not None)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """`prefixsim rn`: say which command was probably meant."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self._load(name) is None:
            from prefixsim.io.suggest import unknown   # lazy: only a mistyped command loads difflib

            ctx.fail(unknown("command", name, self.list_commands(ctx)))
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing (Group.format_commands), each command's short help from SUMMARIES:
        a stand-in command with that help shortens it as click shortens the real one."""
        names = [n for n in sorted(COMMANDS) if importlib.util.find_spec(COMMANDS[n].split(":")[0]) is not None]
        if not names:
            return
        limit = formatter.width - 6 - max(map(len, names))
        rows = [(n, click.Command(n, help=SUMMARIES[n]).get_short_help_str(limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            if importlib.util.find_spec(module) is None:  # not built yet: the command is absent
                return None
            raise


@click.group(cls=LazyGroup, help=HELP, context_settings={"help_option_names": HELP_OPTIONS})
@click.version_option(__version__, prog_name="prefixsim")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    ctx.ensure_object(dict)["debug"] = debug


def main(args: list[str]) -> None:
    """The command line `args` through click: user errors exit 2, bugs 70 (cli.main, the entry point,
    calls it)."""
    try:
        rv = cli.main(args=args, prog_name="prefixsim", standalone_mode=False)
    except UserError as e:
        click.echo(f"prefixsim: {e}" if not e.path else str(e), err=True)
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        click.echo("prefixsim: interrupted", err=True)
        sys.exit(130)
    except click.UsageError as e:   # a bad option or argument: one line too, with where to look
        cmd = e.ctx.command_path if e.ctx else "prefixsim"
        click.echo(f"{cmd}: {e.format_message()} (see `{cmd} --help`)", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as e:
        e.show()
        sys.exit(EXIT_USAGE if e.exit_code == 2 else e.exit_code)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("prefixsim: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # a bug: say so briefly; the traceback is one flag away
        if "--debug" in args:
            raise
        click.echo(f"prefixsim: internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback)",
                   err=True)
        sys.exit(EXIT_BUG)
    sys.exit(rv if isinstance(rv, int) else 0)
