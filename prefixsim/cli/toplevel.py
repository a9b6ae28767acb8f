"""What `prefixsim --help` prints, without importing click (click is about half of the process's
start-up): the commands, their short help and the group's own help are data here, and `page` lays
them out as click's HelpFormatter does (click's Group.format_help, 8.5). cli/group.py builds the click
group from the same data; tests/cli/test_toplevel_help.py holds the two pages equal at every width
the terminal can give, so they cannot drift. Where it could, the page is not used: `text` answers
None (click prints it) when click is already imported (a test runner may force its width), the
installed click is not one of VERIFIED_CLICK, a command's module is missing, or the page is not
ASCII (click.echo may re-encode what is not).
"""
from __future__ import annotations

import os
import sys

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

#: The group's help, as click shows it (already what inspect.cleandoc makes of it; "\b": not rewrapped).
HELP = """Offline prefix-cache simulator and cost calculator for LLM agent harnesses.

\b
Examples:
  prefixsim run scenarios/          the comparison of each scenario's designs
  prefixsim run --examples          the example scenarios shipped with prefixsim
  prefixsim init my-study           a commented starter scenario to edit

\b
Shell completion (bash; zsh and fish alike, with zsh_source / fish_source):
  eval "$(_PREFIXSIM_COMPLETE=bash_source prefixsim)\""""

USAGE = "[OPTIONS] COMMAND [ARGS]..."   # click's Group: options_metavar, then subcommand_metavar
DEBUG_HELP = "Show the full traceback of an internal error."
HELP_OPTIONS = ["-h", "--help"]
COMPLETE_VAR = "_PREFIXSIM_COMPLETE"   # click's completion switch for prog_name "prefixsim"

#: click versions whose rendering `page` has been compared with (tests/cli/test_toplevel_help.py fails
#: on another: compare, then add it). Told by the dist-info folder beside the click package.
VERIFIED_CLICK = ("8.5.1",)


def text() -> str | None:
    """The page `prefixsim --help` prints (without the final newline), or None: click must print it."""
    if "click" in sys.modules or sys.stdout is None or not _verified_click() or not _commands_present():
        return None
    out = page(max(min(columns(), 80) - 2, 50))   # click's HelpFormatter: the terminal, at most 78, at least 50
    return out if out.isascii() else None


def columns() -> int:
    """shutil.get_terminal_size().columns (shutil itself imports the compression modules)."""
    try:
        cols = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        cols = 0
    if cols > 0:
        return cols
    try:
        cols = os.get_terminal_size(sys.__stdout__.fileno()).columns   # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        cols = 80
    return cols or 80


def _verified_click() -> bool:
    """Is the click that `import click` would load one of VERIFIED_CLICK? (Its dist-info beside it.)"""
    for entry in sys.path:
        entry = entry or os.getcwd()
        if os.path.isfile(os.path.join(entry, "click", "__init__.py")):
            return any(os.path.isdir(os.path.join(entry, f"click-{v}.dist-info")) for v in VERIFIED_CLICK)
    return False


def _commands_present() -> bool:
    """Every command's module is there (the group lists only those: cli/group.py LazyGroup)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(__file__)), "commands")
    return all(os.path.isfile(os.path.join(folder, target.split(":")[0].rsplit(".", 1)[1] + ".py"))
               for target in COMMANDS.values())


def page(width: int) -> str:
    """click's Group.get_help for the prefixsim group on a HelpFormatter of this width."""
    options = [("--version", _("Show the version and exit.")), ("--debug", DEBUG_HELP),
               (", ".join(sorted(HELP_OPTIONS, key=lambda o: len(o) - len(o.lstrip("-")))),
                _("Show this message and exit."))]
    names = sorted(COMMANDS)
    limit = width - 6 - max(map(len, names))
    commands = [(n, short_help(SUMMARIES[n], limit)) for n in names]
    prefix = f"{_('Usage:')} "
    if width >= len(prefix) + len("prefixsim ") + 20:   # HelpFormatter.write_usage
        usage = wrap(USAGE, width, prefix + "prefixsim ", " " * len(prefix + "prefixsim "))
    else:
        usage = f"{prefix}prefixsim \n" + wrap(USAGE, width, " " * (len(prefix) + 4), " " * (len(prefix) + 4))
    out = [usage, "\n", "\n", wrap(HELP, width, "  ", "  ", paragraphs=True), "\n"]
    for heading, rows in ((_("Options"), options), (_("Commands"), commands)):
        out += ["\n", f"{heading}:\n", *definitions(rows, width, indent=2)]
    return "".join(out).rstrip("\n")


def _(message: str) -> str:
    """gettext.gettext, as click's own words ("Usage:", "Options", ...) go through it; not imported when
    its default folder of catalogs is missing, where it translates nothing (it imports locale: 1.6 ms)."""
    if os.path.isdir(os.path.join(sys.base_prefix, "share", "locale")):
        from gettext import gettext   # lazy: gettext imports locale, and without catalogs is not needed

        return gettext(message)
    return message


def definitions(rows: list[tuple[str, str]], width: int, indent: int) -> list[str]:
    """click's HelpFormatter.write_dl (col_max 30, col_spacing 2)."""
    first_col = min(max(len(term) for term, _desc in rows), 30) + 2
    out = []
    for term, desc in rows:
        out.append(" " * indent + term)
        if not desc:
            out.append("\n")
            continue
        if len(term) <= first_col - 2:
            out.append(" " * (first_col - len(term)))
        else:
            out.append("\n" + " " * (first_col + indent))
        lines = wrap(desc, max(width - first_col - 2, 10), paragraphs=True).splitlines()
        out.append(f"{lines[0]}\n" if lines else "\n")
        out += [f"{' ' * (first_col + indent)}{line}\n" for line in lines[1:]]
    return out


def wrap(text: str, width: int, initial: str = "", subsequent: str = "", paragraphs: bool = False) -> str:
    """click.formatting.wrap_text: paragraphs are parted by empty lines, a paragraph whose first line is
    "\\b" is kept as it is, each paragraph is indented as its first line."""
    import textwrap   # lazy: only the page wraps text; every command line reads this module's data

    text = text.expandtabs()
    if not paragraphs:
        return textwrap.TextWrapper(width, initial_indent=initial, subsequent_indent=subsequent,
                                    replace_whitespace=False).fill(text)
    found: list[tuple[int, bool, list[str]]] = []
    for line in text.splitlines():
        if not line:
            found.append((0, False, []))
        elif not found or not found[-1][2]:
            stripped = line.lstrip()
            found[-1:] = [(len(line) - len(stripped), stripped.strip() == "\b", [stripped])]
        else:
            found[-1][2].append(line)
    out = []
    for indent, raw, lines in (p for p in found if p[2]):
        first, rest = initial + " " * indent, subsequent + " " * indent
        if raw:
            out.append("\n".join((rest if i else first) + line for i, line in enumerate(lines[1:])))
        else:
            out.append(textwrap.TextWrapper(width, initial_indent=first, subsequent_indent=rest,
                                            replace_whitespace=False).fill(" ".join(lines)))
    return "\n\n".join(out)


def short_help(help_: str, limit: int) -> str:
    """click.Command.get_short_help_str of a command with only this help: its first sentence, shortened
    to `limit` at a word with "..." (click.utils._make_default_short_help)."""
    words = help_.partition("\n\n")[0].split()
    if words and words[0] == "\b":
        words = words[1:]
    for i, word in enumerate(words):
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            words = words[:i + 1]
            break
    text = " ".join(words)
    if len(text) <= limit:
        return text.strip()
    if limit < 3:
        return "..."
    import textwrap   # lazy: only the page wraps text; every command line reads this module's data

    return textwrap.shorten(text, limit, placeholder="...", break_on_hyphens=False).strip()
