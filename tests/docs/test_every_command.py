"""Every command the pages document runs in its documented form: each `prefixsim ...` line of README.md
and docs/*.md code blocks (fenced lines and complete inline commands), each example of every command's
--help, then every --format of every command, every break-even study and `replay` under each what-if.

Each runs in a temporary folder holding the repository's scenarios and tests/data (a command writes its
reports there, never into the checkout), as on a terminal of 80 and of 120 columns, and must end with
its documented exit code: 0, or 1 for `diff` of two bodies that differ (as diff(1)); never 70 (an
internal error) and never a traceback. A documented input the repository does not ship (a user's
~/.claude/projects/, a gateway log, a dask scheduler) is the test's own, built here: PLACEHOLDERS.

What a command lays out for the terminal fits it (`layout_faults`): no line of its text wider than
the terminal (or its --width), in characters, and no word broken across two lines."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import textwrap
from pathlib import Path

import click
import click.testing
import pytest
from click.testing import CliRunner
from doc_pages import PAGES, fenced_blocks, name

from prefixsim.cli import cli, main

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (80, 120)
#: Commands whose output does not depend on the terminal's width: run at one width only (and their text
#: must fit the narrowest terminal, WIDTHS[0]: it is the same on every one).
WIDTH_FREE = ("report", "init", "schema", "validate")
#: Output no terminal lays out, exempt from the width and broken-word checks: JSON and CSV are for
#: programs, Markdown for its renderer (a table row is one line by Markdown's rule), --help is laid out
#: by click, and `schema` without --keys prints the JSON Schema.
NOT_LAID_OUT = ("--format json", "--format csv", "--format markdown", "--help")
#: A terminal on which nothing wraps: what a command prints there holds each of its words whole.
WIDE = 1000

#: A small real Claude Code session (the matrix replays it some 50 times).
SESSION = "tests/data/claude-code/entire-cli/883595c929-0.jsonl"
#: Documented inputs the repository does not ship, and what the test gives in their place (files made by
#: `_inputs`, or shipped data of the same kind).
PLACEHOLDERS = {
    "~/.claude/projects/-home-me-app/4d5611e5.jsonl": "home/proj/s1.jsonl",
    "~/.claude/projects/-home-me-app/": "home/proj/",
    "~/.claude/projects/my-app/": "home/proj/",
    "~/.claude/projects/my-project/": "home/proj/",
    "~/.claude/projects/": "home/",
    "~/.codex/sessions": "tests/data/codex",
    "~/.local/share/opencode": "own/opencode",
    "calls.jsonl": "logs/calls.jsonl",
    "gateway.jsonl": "logs/calls.jsonl",
    "log.jsonl": "logs/calls.jsonl",
    "tests/cassettes/test_chat.yaml": "tests/data/openai-api/test_openai_chat_prompt_cache_e2e.yaml",
    "before.json": "bodies/before.json",
    "after.json": "bodies/after.json",
    "A.json": "bodies/before.json",
    "B.json": "bodies/after.json",
    "my-deepseek.yaml": "own/my-deepseek.yaml",
    "sweeps/": "own/sweeps/",
    "/tmp/r": "r",
    "tcp://10.0.0.5:8786": "SCHEDULER",
}
#: Words of a line that only a shell reads.
SHELL_ONLY = ("python3", "pip", ".", "cd")


def commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    return {n: cli.get_command(ctx, n) for n in cli.list_commands(ctx)}


def _complete(args: list[str]) -> bool:
    """A whole command, not a fragment of prose (`prefixsim replay`, `run --format json`): click
    parses it without a missing argument."""
    if not args or args[0] not in commands() or "--help" in args:
        return bool(args) and (args[0] in commands() or args[0] == "--help")
    if "--examples" in args:
        return True
    cmd = commands()[args[0]]
    try:
        ctx = cmd.make_context(args[0], list(args[1:]), resilient_parsing=False)
    except click.MissingParameter:
        return False
    except click.UsageError:
        return True   # a real mistake of the page's: kept, so the run below names it
    # a command named with its inputs (`run scenarios/`), not only in passing (`prefixsim run`)
    return any(ctx.params.get(p.name) for p in cmd.params if isinstance(p, click.Argument))


def page_lines() -> list[tuple[str, str]]:
    """(where, shell line) of every `prefixsim` line of the pages' code blocks, and of every inline
    `prefixsim ...` span that is a whole command."""
    out = []
    for page in PAGES:
        text = page.read_text()
        env = dict(re.findall(r"^\$ (\w+)=(\S+)$", text, re.M))
        for block in fenced_blocks(text):
            for line in block.splitlines():
                line = line.removeprefix("$ ")
                if re.search(r"(^|&& )prefixsim ", line):
                    out.append((name(page), re.sub(r"\$(\w+)", lambda m: env[m.group(1)], line)))
        for span in re.findall(r"`(prefixsim [^`]+)`", text):
            try:
                words = shlex.split(span)[1:]
            except ValueError:
                continue
            if not re.search(r"[A-Z]{2,}|\.\.\.|…|[\[<]", span) and _complete(words):
                out.append((name(page), span))
    return sorted(set(out))


def help_lines() -> list[tuple[str, str]]:
    """(where, line) of every example of `prefixsim --help` and of every command's --help."""
    out = []
    for cmd_name, cmd in [("", cli), *sorted(commands().items())]:
        text = cmd.help or ""
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("prefixsim "):
                out.append((f"prefixsim {cmd_name} --help".replace("  ", " "), re.split(r"\s{2,}(?=\S)", line)[0]))
    return out


def _base(cmd: str) -> list[list[str]]:
    """The test's own arguments for each command with a --format (a new command fails
    test_every_format_command_has_inputs until it is given some here)."""
    from prefixsim.scenario.studyparams import BREAKEVEN_STUDIES

    return {
        "run": [["scenarios/ttl-expiry.yaml", "--no-write"]],
        "replay": [[SESSION]],
        "advise": [["tests/fixtures/advise/system-timestamp.jsonl"]],
        "search": [["scenarios/agent-design-space.yaml", "--no-write"]],
        "breakeven": [[s, "--out", "be"] for s in BREAKEVEN_STUDIES],
        "diff": [["bodies/before.json", "bodies/after.json"], ["bodies/before.json", "bodies/before.json"]],
        "prices": [["claude-sonnet-4-5"], ["gemini-3.1-pro-preview"]],
    }.get(cmd, [])


def _format_choices(cmd: click.Command) -> list[str]:
    for p in cmd.params:
        if "--format" in getattr(p, "opts", ()) and isinstance(p.type, click.Choice):
            return list(p.type.choices)
    return []


def format_lines() -> list[tuple[str, str]]:
    out = []
    for cmd_name, cmd in sorted(commands().items()):
        for fmt in _format_choices(cmd):
            for base in _base(cmd_name):
                out.append((f"{cmd_name} --format {fmt}", shlex.join(["prefixsim", cmd_name, *base, "--format", fmt])))
    return out


def whatif_lines() -> list[tuple[str, str]]:
    """`replay` under each what-if: every --ttl and --breakpoints value, every provider's rules, a model."""
    from prefixsim.providers.registry import PROVIDERS

    cmd = commands()["replay"]
    out = []
    for p in cmd.params:
        if p.name in ("ttl", "breakpoints"):
            out += [(f"replay --{p.name} {v}", f"prefixsim replay {SESSION} --{p.name} {v}")
                    for v in p.type.choices if v != "observed"]
    out += [(f"replay --provider {v}", f"prefixsim replay {SESSION} --provider {v}") for v in PROVIDERS if v not in ("vllm", "sglang")]
    out += [("replay --model", f"prefixsim replay {SESSION} --model claude-haiku-4-5"),
            ("replay --model --provider", "prefixsim replay tests/fixtures/openai/chat-completions.jsonl "
                                          "--provider deepseek --model deepseek-v4-flash")]
    return out


def documented() -> list[tuple[str, str]]:
    """Each documented line once (the README's `run scenarios/` is also the --help's), where it is first."""
    seen: dict[str, str] = {}
    for where, line in [*page_lines(), *help_lines()]:
        seen.setdefault(line, where)
    return [(where, line) for line, where in seen.items()]


def expected_exit(args: list[str], cwd: Path) -> int:
    """0, except `diff` of two bodies that differ: 1, as diff(1)."""
    if args[:1] == ["diff"]:
        files = [a for a in args[1:] if not a.startswith("-") and (cwd / a).is_file()]
        if len(files) == 2 and (cwd / files[0]).read_bytes() != (cwd / files[1]).read_bytes():
            return 1
        if "--index" in args:
            return 1
    return 0


def _inputs(tmp: Path) -> None:
    """The folder a documented command runs in: the repository's scenarios and test data, and the
    inputs of PLACEHOLDERS."""
    import cc_fixtures
    import log_fixtures

    shutil.copytree(ROOT / "scenarios", tmp / "scenarios")
    (tmp / "tests").mkdir()
    for part in ("data", "fixtures"):
        (tmp / "tests" / part).symlink_to(ROOT / "tests" / part)
    cc_fixtures.session(tmp / "home")
    (tmp / "logs").mkdir()
    (tmp / "logs" / "calls.jsonl").write_text("".join(log_fixtures.session(12)))
    bodies = [json.loads(line)["request"] for line in log_fixtures.session(6)]
    (tmp / "bodies").mkdir()
    (tmp / "bodies" / "before.json").write_text(json.dumps(bodies[4], indent=1))
    (tmp / "bodies" / "after.json").write_text(json.dumps(bodies[5], indent=1))
    (tmp / "own" / "sweeps").mkdir(parents=True)
    shutil.copy(ROOT / "scenarios" / "parallel-children-stagger.yaml", tmp / "own" / "sweeps")
    deepseek = (ROOT / "scenarios" / "ttl-expiry.yaml").read_text()
    deepseek = re.sub(r"(?m)^(\s*)provider: \S+", r"\1provider: deepseek", deepseek)
    deepseek = re.sub(r"(?m)^(\s*)model: \S+", r"\1model: deepseek-v4-flash", deepseek)
    (tmp / "own" / "my-deepseek.yaml").write_text(deepseek)
    from sources.test_opencode import CHILD, MAIN, write_storage

    write_storage(tmp / "own" / "opencode" / "storage", [MAIN, CHILD])


@pytest.fixture
def workdir(tmp_path):
    """A fresh folder for each command: what one writes (`init my-study`, reports) is not another's input."""
    _inputs(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def scheduler():
    """A local dask scheduler for the pages' `--scheduler tcp://...` (started only if a line needs it)."""
    state: dict = {}
    yield lambda: _start(state)
    if "cluster" in state:
        state["cluster"].close()


def _start(state: dict) -> str:
    if "cluster" not in state:
        distributed = pytest.importorskip("distributed")
        state["cluster"] = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                                    protocol="tcp", host="127.0.0.1", dashboard_address=":0")
    return state["cluster"].scheduler_address


def _words(segment: str, scheduler) -> list[str]:
    segment = re.sub(r"\s+#.*$", "", segment)            # a comment
    segment = re.sub(r"\s*>\s*\S+\s*$", "", segment)    # a redirect: the output is printed instead
    words = [PLACEHOLDERS.get(w, w) for w in shlex.split(segment)]
    return [scheduler() if w == "SCHEDULER" else w for w in words]


class Result:
    def __init__(self, args: list[str], code: int, stdout: str, stderr: str) -> None:
        self.args, self.code, self.stdout, self.stderr = args, code, stdout, stderr


def invoke(args: list[str]) -> Result:
    """`prefixsim ARGS` in-process through the console entry point (user errors exit 2, bugs 70),
    its stdout and stderr captured."""
    with CliRunner().isolation() as (out, err, _):
        try:
            main(list(args))
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return Result(args, code, out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace"))


def run_line(line: str, cwd: Path, width: int, scheduler, monkeypatch) -> list[Result]:
    """Each `prefixsim` command of a shell line, run in-process as on a terminal `width` columns wide
    (`cd` between them honoured)."""
    monkeypatch.setattr(click.testing._NamedTextIOWrapper, "isatty", lambda self: True, raising=False)
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    here = cwd
    results = []
    for segment in line.split("&&"):
        words = _words(segment.strip(), scheduler)
        if not words or words[0] in SHELL_ONLY[:3]:
            continue
        if words[0] == "cd":
            here = here / words[1]
            continue
        assert words[0] == "prefixsim", f"a documented line runs {words[0]!r}: {line}"
        monkeypatch.chdir(here)
        results.append(invoke(words[1:]))
    return results


def _check(where: str, line: str, results: list[Result], cwd: Path, width: int, wide) -> None:
    """Each command's exit code, then its layout at `width` (`wide()`: the line's results at WIDE
    columns, run only when a broken word must be told from a wrap)."""
    assert results, f"{where}: no prefixsim command in {line!r}"
    for r in results:
        shown = f"{where}: `prefixsim {' '.join(r.args)}` exited {r.code}:\n{(r.stdout + r.stderr)[-3000:]}"
        assert r.code != 70 and "Traceback" not in r.stdout + r.stderr, shown
        assert r.code == expected_exit(r.args, cwd), shown
    for k, r in enumerate(results):
        faults = layout_faults(r, width, lambda: wide()[k].stdout)
        assert not faults, (f"{where}: `prefixsim {' '.join(r.args)}` at {width} columns:\n" + "\n".join(faults[:12])
                            + f"\n--- its output:\n{r.stdout[-3000:]}")


#: Each documented line's results at WIDE columns, run once for all its widths.
_WIDE: dict[str, list[Result]] = {}


def _wide(line: str, tmp_path_factory, scheduler, monkeypatch):
    """`line`'s results on a terminal WIDE columns wide, run (in a folder of its own) when first asked for."""
    def get() -> list[Result]:
        if line not in _WIDE:
            here = tmp_path_factory.mktemp("wide")
            _inputs(here)
            _WIDE[line] = run_line(line, here, WIDE, scheduler, monkeypatch)
        return _WIDE[line]
    return get


def width_free(args: list[str]) -> bool:
    """A command whose text is the same on every terminal (WIDTH_FREE; `schema --keys` reads the width)."""
    return bool(args) and args[0] in WIDTH_FREE and not (args[0] == "schema" and "--keys" in args)


def laid_out_width(args: list[str], width: int) -> int | None:
    """The width a command's stdout must fit on a terminal `width` columns wide: its --width when it is
    given one, else the terminal's (WIDTHS[0] for a command that does not read it); None for output
    no terminal lays out (NOT_LAID_OUT)."""
    line = " ".join(args)
    if any(x in f"{line} " for x in (f"{n} " for n in NOT_LAID_OUT)) or args[:1] == ["schema"] and "--keys" not in args:
        return None
    if "--width" in args:
        return int(args[args.index("--width") + 1])
    return min(WIDTHS) if width_free(args) else width


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_PUNCT = "()[],;:.'\"`"


def _word_set(text: str) -> set[str]:
    return {w.strip(_PUNCT) for w in text.split()}


def broken_words(text: str, whole: str) -> list[str]:
    """Words of `text` broken across two lines: a piece ending in a letter at the end of a line (prose)
    or in a table cell (a word starting at the same column on the next line), continued on the next
    line by a piece starting with a lowercase letter, the two joined a word, or part of one, that
    `text` or `whole` (the same command on a terminal where nothing wraps) prints unbroken. A wrap at
    a space never joins into a printed word (`an` + `hour`); a word cut to fit a column or a line does
    (`gemini-ex` + `plicit.csv`). Joins under 6 letters are left alone (`in` + `to`)."""
    words = _word_set(text) | _word_set(whole)
    lines = [_ANSI.sub("", x) for x in text.splitlines()]
    out = []
    for a, b in zip(lines, lines[1:]):
        above = {m.start(): m[0] for m in re.finditer(r"\S+", a)}
        below = list(re.finditer(r"\S+", b))
        pairs = [(above[m.start()], m[0]) for m in below if m.start() in above]   # a cell and its next line
        if above and below:
            pairs.append((a.split()[-1], below[0][0]))   # a line and the next
        for x, y in dict.fromkeys(pairs):
            joined = (x + y).strip(_PUNCT)
            if re.search(r"[A-Za-z]$", x) and re.match(r"[a-z]", y) and len(joined) >= 6 \
                    and any(joined in w for w in words):
                out.append(f"{x!r} | {y!r}")
    return out


def layout_faults(r: Result, width: int, whole) -> list[str]:
    """What of `r`'s output does not fit a terminal `width` columns wide: stdout lines wider than the
    width it must fit (laid_out_width; a line of one word, a path longer than the terminal, cannot
    wrap and is left alone), words broken across lines (`whole()`: its stdout at WIDE columns, asked
    for only when a line pair might be one), and progress-bar frames (stderr, after each carriage
    return) wider than the terminal. Other stderr lines are diagnostics, one each as `file:line:
    message` or `prefixsim: message` so that editors and grep find them whole, and the list of files
    written: left to the terminal."""
    faults = []
    fit = laid_out_width(r.args, width)
    if fit is not None:
        for line in _ANSI.sub("", r.stdout).splitlines():
            if len(line) > fit and len(line.split()) > 1:
                faults.append(f"{len(line)} > {fit} columns: {line}")
        if re.search(r"[A-Za-z]\n\s*[a-z]", r.stdout):   # a line pair that might hold a broken word
            faults += [f"a word broken across lines: {p}" for p in broken_words(r.stdout, whole())]
    # a frame is what a carriage return overwrites: each piece of a stderr line but its first and last
    frames = [f for line in r.stderr.split("\n") for f in line.split("\r")[1:-1]]
    for frame in frames:
        if len(frame) > width:
            faults.append(f"a progress frame of {len(frame)} > {width} columns: {frame.strip()[:60]!r}")
    return faults


def _cases(lines):
    out = []
    for where, line in lines:
        commands = [shlex.split(c)[1:] for c in re.findall(r"prefixsim [^&#>]*", line)]
        widths = (WIDTHS[-1],) if all(width_free(c) for c in commands) or "--format json" in line \
            or "--format csv" in line or "--help" in line else WIDTHS
        out += [pytest.param(where, line, w, id=f"{w}:{line[10:70]}") for w in widths]
    return out


def test_the_pages_document_commands_the_test_runs():
    lines = [line for _, line in documented()]
    assert len(lines) >= 60, f"{len(lines)} documented lines: the extraction lost some"
    assert any("breakeven gemini-explicit" in x for x in lines)       # an inline command of the pages
    assert any("report scenarios/" in x for x in lines)
    assert any(x.startswith("prefixsim init") and "&&" in x for x in lines)   # a --help example's chain


def test_every_format_command_has_inputs():
    for cmd_name, cmd in commands().items():
        if _format_choices(cmd):
            assert _base(cmd_name), f"`prefixsim {cmd_name}` has a --format and no inputs in _base"


def test_every_placeholder_is_documented():
    """A placeholder no page or --help names any more is stale: drop it."""
    text = "\n".join(line for _, line in documented())
    for k in PLACEHOLDERS:
        assert k in text, f"{k}: no documented command names it"


def test_a_word_cut_to_fit_is_told_from_a_wrap_at_a_space():
    text = "wrote reports/breakeven/minimum.csv and the chart, once it is read more than 3.6 times an hour"
    cut = "\n".join(textwrap.wrap(text, 22, break_long_words=True))   # a word longer than the line, cut
    assert broken_words(cut, text) == ["'reports/breakeve' | 'n/minimum.csv'"]
    assert broken_words(cut, "") == []   # nothing prints the word whole: no evidence
    for width in range(20, 60):   # wraps at spaces: never
        assert broken_words("\n".join(textwrap.wrap(text, width, break_long_words=False)), text) == []
    table = "x  claude-son  $1\n   net-4-5\n{}  claude-sonnet-4-5  $2\n"   # a cell cut to its column
    assert broken_words(table.format("y"), "") == ["'claude-son' | 'net-4-5'"]
    wrapped = "implicit  never cheaper  $0.11\nexplicit  never         $0.45\n          cheaper\n"
    assert broken_words(wrapped, "") == []   # a cell wrapped at its space


def test_the_width_a_command_must_fit():
    assert laid_out_width(["breakeven", "ttl"], 80) == 80
    assert laid_out_width(["run", "x.yaml", "--width", "150"], 80) == 150
    assert laid_out_width(["validate", "x.yaml"], 120) == min(WIDTHS)
    assert laid_out_width(["schema", "--keys", "fork"], 120) == 120
    assert laid_out_width(["schema"], 120) is None
    assert laid_out_width(["run", "x.yaml", "--format", "json"], 80) is None
    assert laid_out_width(["run", "x.yaml", "--format", "table"], 80) == 80


@pytest.mark.slow
@pytest.mark.parametrize("where,line,width", _cases(documented()))
def test_documented_command_runs(where, line, width, workdir, scheduler, monkeypatch, tmp_path_factory):
    _check(where, line, run_line(line, workdir, width, scheduler, monkeypatch), workdir, width,
           _wide(line, tmp_path_factory, scheduler, monkeypatch))


@pytest.mark.slow
@pytest.mark.parametrize("where,line,width", _cases(format_lines() + whatif_lines()))
def test_every_format_and_what_if_runs(where, line, width, workdir, scheduler, monkeypatch, tmp_path_factory):
    _check(where, line, run_line(line, workdir, width, scheduler, monkeypatch), workdir, width,
           _wide(line, tmp_path_factory, scheduler, monkeypatch))
