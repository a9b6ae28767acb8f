"""What several commands share: reading real traffic with its skipped lines named on stderr, the
--price-date and --start options, and the progress bar."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import datetime as dt
import os
import sys
import time

import click

from prefixsim.errors import UserError
from prefixsim.report.layout import DEFAULT_WIDTH

#: Every command's --format, with one meaning everywhere: `table` what a terminal shows, `markdown`
#: the same tables in Markdown, `csv` the rows of the table the answer rests on (the one `table`
#: prints; with -v / --requests, the requests), `json` the whole result (issue 34 item 11).
FORMATS = ("table", "markdown", "csv", "json")
FORMAT_HELP = ("table: what a terminal shows; markdown: the same tables; csv: the rows of the main table "
               "(with -v/--requests, of the requests); json: the whole result.")


def format_option(f):
    """`--format` as every command takes it (FORMATS)."""
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                        help=FORMAT_HELP)(f)


def width_option(f):
    """`--width` as the commands that print tables take it (output_width reads it)."""
    return click.option("--width", type=int, metavar="COLUMNS",
                        help="Fit tables to this width (default: the terminal's, or 120 when not a terminal).")(f)


class TokenSize(click.ParamType):
    """A token count as every size option takes it (16, 30K, 1.5M, 30_000: core/sizes.py, exactly as a
    scenario's sizes), refused by the option's name outside [low, high]."""

    name = "tokens"

    def __init__(self, low: int = 1, high: int = 10_000_000) -> None:
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        from prefixsim.core.sizes import whole_tokens  # lazy: start-up: read only when the option is given

        if isinstance(value, int):
            n: int | None = value
        else:
            try:
                n = whole_tokens(str(value))
            except ValueError as e:
                self.fail(str(e), param, ctx)
        if n is None:
            self.fail(f"{value!r} is not a number of tokens (e.g. 512, 16, 1k)", param, ctx)
        if not self.low <= n <= self.high:
            self.fail(f"{value} is not a size it can take ({self.low:,} to {self.high:,} tokens)", param, ctx)
        return n


class Seconds(click.ParamType):
    """A time in seconds as a latency option takes it: `3`, `3s`, `2.5s`, `3000ms`, `1m`; refused by the
    option's name unless finite, above 0 and at most `high`."""

    name = "seconds"

    def __init__(self, high: float = 3600.0) -> None:
        self.high = high

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            x = float(value)
        else:
            text = str(value).strip().lower()
            scale = 0.001 if text.endswith("ms") else 1.0
            number = text[:-2] if scale != 1.0 else text[:-1] if text.endswith("s") else text
            try:
                x = float(number) * scale if number.strip() and "_" not in number else float("nan")
            except ValueError:
                x = float("nan")
            if x != x and scale == 1.0:   # 1m, 1m30s: as a scenario writes a duration
                from prefixsim.scenario.fields import parse_duration  # lazy: start-up: only then

                try:
                    x = parse_duration(text)
                except ValueError:
                    pass
        if x != x or x in (float("inf"), float("-inf")):
            self.fail(f"{value!r} is not a time (seconds: 3, 3s, 2.5s, 3000ms)", param, ctx)
        if not 0 < x <= self.high:
            self.fail(f"{value} is not a time it can take (above 0, at most {self.high:g} s)", param, ctx)
        return x


#: Skipped lines named one by one on stderr before the rest are only counted.
SHOWN_PROBLEMS = 20


def warn_problems(found, failed: list[UserError]) -> None:
    """Skipped lines and notes on stderr (stdout stays the report), then each path that failed."""
    for p in found.notes:
        click.echo(f"{p}", err=True)
    for p in found.skipped[:SHOWN_PROBLEMS]:
        click.echo(f"{p}", err=True)
    n = len(found.skipped)
    if n > SHOWN_PROBLEMS:
        click.echo(f"... and {n - SHOWN_PROBLEMS:,} more skipped lines", err=True)
    if n:
        click.echo(f"prefixsim: skipped {n:,} unusable line{'s' if n > 1 else ''} (--strict makes them fatal)",
                   err=True)
    for e in failed:
        click.echo(str(e), err=True)


def failure(failed: list[UserError], paths) -> UserError:
    """The exit status names every path that failed; the others were read."""
    return UserError(f"{len(failed)} of {len(paths)} paths failed: {', '.join(e.path or '?' for e in failed)}")


def read_traffic(paths, source: str | None, strict: bool, partial: bool):
    """(traffic, failed paths) of `paths`, read once, with skipped lines and failed paths named on
    stderr. One path that fails raises its own error; with `partial` the other paths are kept (the
    caller raises `failure` after printing), else any failed path is fatal. No request at all is an error."""
    # lazy: the readers load only when a command reads traffic (`prefixsim --help` loads no command's work)
    from prefixsim.sources import open_many
    from prefixsim.sources.problems import collecting

    failed: list[UserError] = []
    with collecting(strict) as found:
        # Read once; each replay walks the requests in time order without holding them all.
        traffic = open_many(paths, source, errors=failed)
    if not len(traffic) and len(failed) == len(paths) == 1:
        warn_problems(found, [])
        raise failed[0]
    warn_problems(found, failed)
    traffic.skipped = tuple(found.skipped)
    if failed and not partial:
        raise failure(failed, paths)
    if not len(traffic):
        raise UserError("no requests found", str(paths[0])) if not failed else failure(failed, paths)
    return traffic, failed


def output_width(width: int | None, fallback: int = DEFAULT_WIDTH, columns: bool = False) -> int:
    """--width, else ($COLUMNS when `columns`, for a command that honours it, then) the terminal's
    width on a terminal, else `fallback` (pipes and files get the same bytes whoever runs the
    command)."""
    if width is not None:
        if width < 40:
            raise UserError(f"--width {width} is too narrow (at least 40 columns)")
        return width
    env = os.environ.get("COLUMNS", "").strip() if columns else ""
    if env.isdigit() and int(env) > 0:
        return max(int(env), 40)
    if sys.stdout.isatty():
        import shutil   # lazy: only a terminal's width is asked (shutil loads its compressors)

        return max(shutil.get_terminal_size((fallback, 24)).columns, 40)
    return fallback


def emphasis() -> bool:
    """Whether stdout takes ANSI bold: a terminal, and NO_COLOR unset or empty (https://no-color.org:
    "when present and not an empty string" it turns colour off). Never for a pipe or a file."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def parse_price_date(value: str | None) -> dt.date | None:
    """--price-date YYYY-MM-DD (None: today's genai-prices rates)."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UserError(f"--price-date {value!r} is not YYYY-MM-DD") from None


def parse_start_option(value: str | None) -> dt.datetime | None:
    """--start DATETIME (None: the scenario's own, else the default clock start)."""
    if value is None:
        return None
    from prefixsim.scenario.checks import parse_start  # lazy: the scenario model loads only when --start is given

    try:
        return parse_start(value)
    except ValueError as e:
        raise UserError(f"--start {value!r} {e}") from None


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only after a second."""

    def __init__(self, total: int, delay: float = 1.0) -> None:
        self.total = total
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.shown = 0   # the widest frame written, in columns
        self.delay = delay   # 0: from the first call (a command known to take seconds)

    def __call__(self, done: int, label: str = "") -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        width = 30
        fill = int(width * done / max(self.total, 1))
        count = f"{done}/{self.total} " if self.total else ""   # no count before the steps are known
        bar = f"[{'#' * fill}{'.' * (width - fill)}] {count}"
        # short of the terminal's last column: a frame that fills it wraps, and `\r` leaves it behind
        import shutil   # lazy: as in output_width

        room = max(min(40, shutil.get_terminal_size((80, 24)).columns - 1 - len(bar)), 0)
        frame = f"{bar}{label[:room]:<{room}}"
        sys.stderr.write(f"\r{frame}")
        sys.stderr.flush()
        self.shown = max(self.shown, len(frame))

    def close(self) -> None:
        if self.shown:   # the widest frame shown, blanked
            sys.stderr.write("\r" + " " * self.shown + "\r")
            sys.stderr.flush()
