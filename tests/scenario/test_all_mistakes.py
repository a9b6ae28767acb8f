"""Every mistake of a scenario file in one pass (issue 34 item 9): schema errors, `${...}` names, the
sweep, unknown providers, tokenizers and models, prices and dates are all reported by one run, one
line each at `file:line:col`, by line, exit 2; a file's refused values do not hide the checks of the
rest, nor make the checks name mistakes the file does not have."""
import re
import shutil
from pathlib import Path

import pytest

from prefixsim.cli import main
from prefixsim.errors import UserError
from prefixsim.scenario.loader import load_runs

ANTHROPIC_DEMO = "\n".join([
    "name: many-mistakes",
    "model: claude-sonet-4-5",           # 2: unknown model
    "provider: anthropic",
    "tokenizer: cl100k",                  # 4: unknown tokenizer
    "ttll: 5m",                           # 5: unknown key
    "pace: fast",                         # 6: not a duration
    'price_date: "2026-13-01"',           # 7: not a date
    "base:",
    "  system: 4000",
    "  tools: {count: many, size: 300}",  # 10: not a whole number
    "timeline:",
    "  - request: 2",
    '  - wait: "${gapp}"',                # 13: undefined placeholder
    "  - wait: 5 minutes",                # 14: not a duration
    "  - switch_model: gpt-9",            # 15: unknown model (under Anthropic and under OpenAI)
    "  - request: 1",
    "variants:",
    "  - name: a",
    "    ttl: 10m",                       # 19: not 5m or 1h
    "  - name: b",
    "    provider: antropic",             # 21: unknown provider
    "  - name: c",
    "    model: gpt-4o",                  # 23: its price sheet row has no output price
    "    provider: openai",
    "vars: {gap: 60s}",
    "sweep: {param: stager, values: [0, 2]}",   # 26: used nowhere
    "prices:",
    "  gpt-4o: {input: 2.5}",
    "",
])

#: (line:col, what the line says), in the order printed.
EXPECTED = [
    ("2:1", "unknown Anthropic model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'?)"),
    ("4:1", "unknown tokenizer 'cl100k'"),
    ("5:1", "unknown key 'ttll' (did you mean 'ttl'?)"),
    ("6:1", "pace: 'fast' is not a duration"),
    ("7:1", "price_date '2026-13-01' is not a date"),
    ("10:11", "base.tools.count: 'many' (a string) is not a whole number"),
    ("13:5", "undefined placeholder ${gapp} (did you mean ${gap}?"),
    ("14:5", "timeline[2].wait.seconds: '5 minutes' is not a duration"),
    ("15:5", "unknown Anthropic model 'gpt-9'"),
    ("15:5", "unknown OpenAI model 'gpt-9'"),
    ("19:5", "variants[0].ttl: '10m' (a string) is not allowed"),
    ("21:5", "unknown provider 'antropic' (did you mean 'anthropic'?"),
    ("23:5", "price sheet for gpt-4o: 'input' and 'output' (USD per MTok) are required"),
    ("26:9", "sweep.param 'stager' is used nowhere"),
]


def _cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.err


def _mistakes(err: str, path: str) -> list[tuple[str, str]]:
    """(line:col, message) of each located line of `path` on stderr."""
    out = []
    for line in err.splitlines():
        m = re.match(re.escape(path) + r":(\d+(?::\d+)?): (.*)$", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def _says(found, expected):
    assert [at for at, _ in found] == [at for at, _ in expected], found
    for (_, text), (_, want) in zip(found, expected):
        assert text.startswith(want), (text, want)


@pytest.mark.parametrize("command", [["validate"], ["run", "--no-write"]])
def test_every_mistake_of_a_file_in_one_run_by_line(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("many.yaml").write_text(ANTHROPIC_DEMO)
    code, err = _cli([*command, "many.yaml"], capsys)
    assert code == 2 and "Traceback" not in err and "internal error" not in err
    found = _mistakes(err, "many.yaml")
    _says(found, EXPECTED)
    lines = [tuple(int(x) for x in at.split(":")) for at, _ in found]
    assert lines == sorted(lines)
    # every printed line is a located mistake or the closing count
    assert len(err.splitlines()) == len(EXPECTED) + 1


def test_the_order_is_the_same_on_every_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("many.yaml").write_text(ANTHROPIC_DEMO)
    first = _cli(["validate", "many.yaml"], capsys)
    assert all(_cli(["validate", "many.yaml"], capsys) == first for _ in range(3))


def test_the_library_raises_one_error_carrying_the_others(tmp_path):
    p = tmp_path / "many.yaml"
    p.write_text(ANTHROPIC_DEMO)
    with pytest.raises(UserError) as e:
        load_runs(str(p))
    every = [e.value, *e.value.also]
    assert [(x.line, x.col) for x in every] == [tuple(int(n) for n in at.split(":")) for at, _ in EXPECTED]
    assert all(x.path == str(p) for x in every) and not any(x.also for x in every[1:])


def test_run_on_a_folder_reports_every_mistake_of_every_bad_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("s").mkdir()
    Path("s/a-many.yaml").write_text(ANTHROPIC_DEMO)
    shutil.copy(Path(__file__).parents[2] / "scenarios" / "ttl-expiry.yaml", "s/b-good.yaml")
    Path("s/c-two.yaml").write_text("name: two\nmodel: claude-sonet-4-5\ntimeline: [request: 1, wiat: 5m]\n")
    Path("s/d-one.yaml").write_text("name: one\nttl: 10m\ntimeline: [request: 1]\n")
    code, err = _cli(["run", "--no-write", "s/"], capsys)
    assert code == 2 and "Traceback" not in err
    _says(_mistakes(err, "s/a-many.yaml"), EXPECTED)
    _says(_mistakes(err, "s/c-two.yaml"), [("2:1", "unknown Anthropic model 'claude-sonet-4-5'"),
                                           ("3:24", "unknown step 'wiat' (did you mean 'wait'?)")])
    _says(_mistakes(err, "s/d-one.yaml"), [("2:1", "ttl: '10m' (a string) is not allowed")])
    assert err.splitlines()[-1] == ("prefixsim: 3 of 4 scenario files failed: s/a-many.yaml, s/c-two.yaml, "
                                    "s/d-one.yaml")


@pytest.mark.parametrize("text,line", [
    ("name: x\nmodel: claude-sonet-4-5\ntimeline: [request: 1]\n",
     "x.yaml:2:1: unknown Anthropic model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'?)"),
    ("name: x\nttl: 10m\ntimeline: [request: 1]\n",
     "x.yaml:2:1: ttl: '10m' (a string) is not allowed (one of: '5m' or '1h')"),
    ("name: x\ntimeline: [request: 1, wait: \"${gapp}\"]\nvars: {gap: 60s}\n",
     "x.yaml:2:24: undefined placeholder ${gapp} (did you mean ${gap}? `vars:` or `sweep: {param: ...}` define "
     "them)"),
    # a sweep that gives no values: its ${param} is not also called undefined, nor its wait no duration
    ("name: x\nsweep: {param: gap, values: []}\ntimeline: [request: 1, wait: \"${gap}\"]\n",
     "x.yaml:2:21: sweep.values gives no values (an empty list); a sweep runs each variant once per value"),
    # a price the schema refuses takes out its model's row, which the price check then does not call incomplete
    ("name: x\nprices:\n  claude-sonnet-4-5: {input: 1e308, output: 15}\ntimeline: [request: 1]\n",
     "x.yaml:3:23: prices.claude-sonnet-4-5.input: 1e+308 is too large (at most 1,000,000.0)"),
    # a refused body file is not read, so its model is not checked as the default one under OpenAI
    ("name: x\nprovider: openai\nbase: {file: 5}\ntimeline: [request: 1]\n",
     "x.yaml:3:8: base.file: 5 is not text (a string; quote it)"),
    # a refused timeline is not also called missing
    ("name: x\ntimeline: 5\n", "x.yaml:2:1: timeline: 5 is not a list (`- item` lines or [a, b])"),
])
def test_a_file_with_one_mistake_gets_that_one_line(text, line, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("x.yaml").write_text(text)
    code, err = _cli(["validate", "x.yaml"], capsys)
    assert code == 2 and err.splitlines() == [line, "prefixsim: 1 scenario file(s) have errors"]


def _heads(p: Path) -> list[tuple[int | None, str]]:
    """Each mistake the loader finds in `p`: its line and its message up to the first parenthesis."""
    with pytest.raises(UserError) as e:
        load_runs(str(p))
    return [(x.line, x.message.split(" (")[0]) for x in (e.value, *e.value.also)]


def test_a_refused_step_keeps_the_later_steps_at_their_own_lines(tmp_path):
    """The refused step stands in as a wait of no time, so the step after it is still the 3rd."""
    p = tmp_path / "s.yaml"
    p.write_text("name: s\ntimeline:\n  - request: 1\n  - wiat: 5m\n  - switch_model: claude-sonet-4-5\n"
                 "  - fork: {children: many, modify: [{switch_model: gpt-9}]}\n")
    assert _heads(p) == [
        (4, "unknown step 'wiat'"),
        (5, "unknown Anthropic model 'claude-sonet-4-5'"),
        (6, "unknown Anthropic model 'gpt-9'"),
        (6, "timeline[3].fork.children: 'many'"),
    ]


def test_a_variant_refused_whole_leaves_the_others_checked(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("name: s\ntimeline: [request: 1]\nvariants:\n  - ttl: 1h\n  - name: b\n    model: gpt-9\n"
                 "  - name: c\n    tokenizer: gpt2\n")
    assert _heads(p) == [
        (4, "missing required key 'name' in variants[0]"),
        (6, "unknown OpenAI model 'gpt-9'"),
        (8, "unknown tokenizer 'gpt2'"),
    ]


def test_a_sweep_value_with_the_same_mistake_says_it_once(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("name: s\nsweep: {param: g, range: [1, 300, 1]}\npace: fast\nmodel: gpt-9\n"
                 "timeline: [request: 1, wait: \"${g}\"]\n")
    with pytest.raises(UserError) as e:
        load_runs(str(p))
    assert [x.line for x in (e.value, *e.value.also)] == [3, 4]
