"""The command line: a thin layer over the library. Commands live in their own modules and are
imported only when invoked, so `prefixsim --help` does not load pandas, matplotlib or tiktoken.

Errors: a UserError becomes one line `path:line[:col]: message` and exit code 2; anything else is a
bug: exit 70 with a short message (`--debug` shows the traceback).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys

import click

from prefixsim import __version__
from prefixsim.errors import UserError

#: command name -> "module:attribute" of a click command, imported lazily.
COMMANDS: dict[str, str] = {
    "run": "prefixsim.commands.run:run",
    "validate": "prefixsim.commands.run:validate",
    "schema": "prefixsim.commands.run:schema",
    "replay": "prefixsim.commands.replay:replay",
    "diff": "prefixsim.commands.replay:diff",
    "advise": "prefixsim.commands.advise:advise",
    "search": "prefixsim.commands.search:search",
    "breakeven": "prefixsim.commands.analysis:breakeven",
    "report": "prefixsim.commands.analysis:report",
    "init": "prefixsim.commands.init:init",
    "prices": "prefixsim.commands.prices:prices",
}

#: Each command's short help as `--help` lists it (the first sentence of its help), so the list needs
#: no command module imported: they import what their options name (file writers, report layout),
#: a third of `prefixsim --help`'s own imports. tests/cli/test_help_summaries.py holds them to the
#: commands' own at every width.
SUMMARIES: dict[str, str] = {
    "run": "Run scenario files (or every *.yaml in folders): per scenario, the comparison of its variants and "
           "a one-line answer (which design is cheapest, and by how much).",
    "validate": "Check scenario files as `run` does, writing nothing: every check `run` makes, each mistake at "
                "its line (the timeline is played and simulated; only the tables and reports are left out).",
    "schema": "Print the JSON Schema of scenario files (for editor completion).",
    "replay": "Replay real traffic and explain every cache miss.",
    "diff": "Where two requests' prefixes part, and what it costs on the next request.",
    "advise": "Where real traffic (anything `prefixsim replay` reads) loses money to the cache, and the changes "
              "a what-if replay of the same traffic shows would save it.",
    "search": "Design search: every combination of the values a scenario lists under `optimize:`, each "
              "design's cost beside its time to first token (p50/p95 per request, and the wait per turn), the "
              "cheapest design and the Pareto front of cost and p95 TTFT (docs/design-search.md).",
    "breakeven": "Crossing points of a design choice, with the curve behind them (CSV + PNG + SVG).",
    "report": "One self-contained HTML page for a design review (and report.md with PNGs beside it).",
    "init": "Write a commented starter scenario (my-scenario.yaml) and the example scenarios "
            "(examples/*.yaml) into FOLDER (default: here).",
    "prices": "Every rate prefixsim would use for MODEL (input, output, cache read, 5m and 1h writes), with "
              "the source of each: genai-prices' bundled data, a prefixsim overlay row, or a documented "
              "multiplier.",
}

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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="prefixsim")
@click.option("--debug", is_flag=True, help="Show the full traceback of an internal error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Offline prefix-cache simulator and cost calculator for LLM agent harnesses.

    \b
    Examples:
      prefixsim run scenarios/          the comparison of each scenario's designs
      prefixsim run --examples          the example scenarios shipped with prefixsim
      prefixsim init my-study           a commented starter scenario to edit

    \b
    Shell completion (bash; zsh and fish alike, with zsh_source / fish_source):
      eval "$(_PREFIXSIM_COMPLETE=bash_source prefixsim)"
    """
    ctx.ensure_object(dict)["debug"] = debug


def main(argv: list[str] | None = None) -> None:
    """Console entry point: maps user errors to exit 2 and bugs to exit 70."""
    args = sys.argv[1:] if argv is None else argv
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
