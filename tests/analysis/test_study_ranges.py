"""Every study parameter has a range, declared beside it (scenario/studyparams.py) and checked in one
place (scenario/studycheck.py), for -p and a scenario's `studies:` alike, before any work (issue 33,
classes 7 and 8): ttl_s=0 and growth=0 divided by zero (exit 70); system=0, directive=0, task=0 and a
Gemini prefix below the explicit minimum printed a table and then CHECK FAILED; reads=10000000 and
stagger ttft=31536000 took gigabytes; call=10000000 was refused only after 152 s of building; and the
product of parameter lists was uncapped."""
import dataclasses
import time

import pytest
from conftest import PRICE_DATE
from conftest import cli_exit as _exit

from prefixsim.analysis.common import prices_for
from prefixsim.analysis.verify import verify
from prefixsim.scenario.studycheck import ParamError, check_limits, designs, parse_pairs, ranges
from prefixsim.scenario.studyparams import BREAKEVEN_STUDIES, OTHER_PROVIDER, params_class

KINDS = {"tokens", "count", "seconds", "number", "choice"}
FLOAT_KINDS = ("seconds", "number")
#: A gemini-2.5-pro price date well before its retirement: the check's reads then span no price change.
GEMINI_DATE = "2026-06-01"


def _outside(r):
    """Values just outside a range (a negative number is refused as such, not as out of range)."""
    if r.kind == "choice":
        return ["10m"]
    out = [r.high * 2 if r.kind in FLOAT_KINDS else int(r.high) + 1]
    if r.low > 0:
        out.append(r.low / 2 if r.kind in FLOAT_KINDS else int(r.low) - 1)
    return out


@pytest.mark.parametrize("study", BREAKEVEN_STUDIES)
def test_every_parameter_declares_a_range_its_default_is_in(study):
    for name, r in ranges(study).items():
        assert r.kind in KINDS, name
        default = next(f.default for f in dataclasses.fields(params_class(study)) if f.name == name)
        assert default in r.choices if r.kind == "choice" else r.low <= default <= r.high, name
    f, lists = parse_pairs(study, [])   # the defaults pass every limit
    assert f == params_class(study)() and lists == {}


@pytest.mark.parametrize("study,key", [(s, k) for s in BREAKEVEN_STUDIES for k in ranges(s)])
def test_a_value_outside_the_range_is_refused_fast_naming_the_range(study, key):
    r = ranges(study)[key]
    for v in _outside(r):
        began = time.monotonic()
        with pytest.raises(ParamError) as e:
            parse_pairs(study, [f"{key}={v}"])
        assert time.monotonic() - began < 5
        assert e.value.key == key and e.value.message.startswith(f"--param {key}: ")
        assert r.text() in e.value.message


@pytest.mark.parametrize("study,param,said", [
    ("gemini-explicit", "ttl_s=0", "--param ttl_s: 0 is out of its range, 1 to 86,400 s"),
    ("fork-vs-subagent", "growth=0", "--param growth: 0 is out of its range, 4 to 1,000,000 tokens"),
    ("invalidation", "system=0", "--param system: 0 is out of its range, 10 to 1,000,000 tokens"),
    ("fork-vs-subagent", "directive=0", "--param directive: 0 is out of its range, 10 to 1,000,000 tokens"),
    ("fork-vs-subagent", "task=0", "--param task: 0 is out of its range, 10 to 1,000,000 tokens"),
    ("stagger", "task=0", "--param task: 0 is out of its range, 10 to 1,000,000 tokens"),
    ("gemini-explicit", "prefix=1", "--param prefix: 1 is out of its range on gemini-2.5-pro, 2,048 to 1,000,000"),
    ("gemini-explicit", "reads=10000000", "--param reads: 10000000 is out of its range, 0 to 3,600"),
    ("stagger", "ttft=31536000", "--param ttft: 31536000 is out of its range, 0 to 60 s"),
    ("fork-vs-subagent", "call=10000000", "--param call: 10000000 is out of its range, 0 to 1,000,000 tokens"),
    ("fork-vs-subagent", "call=900000", "--param the largest prompt = 14,461,200 tokens (at most 1,000,000)"),
    ("fork-vs-subagent", "children=" + ",".join(map(str, range(1, 51))),
     "--param children x turns x 2 designs x 2 histories = 15,300 requests the check simulates (50 designs)"),
    ("gemini-explicit", "reads=3600", "--param reads in one cache's life (reads x ttl_s / 3600) = 36,000 requests"),
])
def test_the_issues_values_are_refused_before_any_work(tmp_path, capsys, study, param, said):
    extra = ["-p", "ttl_s=36000"] if param == "reads=3600" else []
    began = time.monotonic()
    code, out, err = _exit(["breakeven", study, "-p", param, *extra, "--out", str(tmp_path / "out"),
                            "--price-date", GEMINI_DATE], capsys)
    assert time.monotonic() - began < 5
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith(f"prefixsim: {said}"), err
    assert not (tmp_path / "out").exists()   # nothing written


def test_fifty_by_twenty_designs_are_refused_by_their_count(tmp_path, capsys):
    children = ",".join(map(str, range(1, 51)))
    turns = ",".join(map(str, range(1, 21)))
    began = time.monotonic()
    code, _, err = _exit(["breakeven", "fork-vs-subagent", "-p", f"children={children}", "-p", f"turns={turns}",
                          "--out", str(tmp_path)], capsys)
    assert time.monotonic() - began < 5
    assert code == 2 and err == ("prefixsim: --param: 50 children x 20 turns values make 1,000 designs to compare "
                                 "(at most 50); list fewer values\n")


@pytest.mark.parametrize("command", [["validate"], ["run", "--no-write"]])
def test_a_scenarios_studies_are_checked_alike_at_the_parameters_line(tmp_path, capsys, command):
    p = tmp_path / "s.yaml"
    p.write_text("name: s\ntokenizer: approx\ntimeline: [request: 1]\nstudies:\n  stagger: {children: 3}\n"
                 "  fork-vs-subagent:\n    children: [2, 3]\n    growth: 0\n")
    code, _, err = _exit([*command, str(p)], capsys)
    assert code == 2
    assert err.splitlines()[0] == (f"{p}:8:5: studies: fork-vs-subagent growth: 0 is out of its range, 4 to "
                                   "1,000,000 tokens (the check builds 40,000 tokens of parent history in whole "
                                   "turns of growth, at most 10,000 of them)")


def _bounds():
    """(study, key, value) at each end of every range, the other parameters at their defaults."""
    out = []
    for study in BREAKEVEN_STUDIES:
        for key, r in ranges(study).items():
            if r.kind == "choice":
                out += [(study, key, c) for c in r.choices]
                continue
            low = 2048 if r.model_low is not None else r.low   # gemini-2.5-pro's explicit minimum
            out += [(study, key, v if r.kind in FLOAT_KINDS else int(v)) for v in (low, r.high)]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("study,key,value", _bounds())
def test_at_each_end_of_a_range_the_check_agrees_or_a_limit_refuses(study, key, value):
    # A value in range is one the closed form can take: the check agrees with the runner, or a limit on
    # the work refuses it up front (in well under a second). Fork designs are checked one at a time.
    provider = OTHER_PROVIDER.get(study, "anthropic")
    model = "claude-sonnet-4-5" if provider == "anthropic" else "gemini-2.5-pro"   # live on GEMINI_DATE
    when = PRICE_DATE if provider == "anthropic" else __import__("datetime").date.fromisoformat(GEMINI_DATE)
    began = time.monotonic()
    try:
        f, lists = parse_pairs(study, [f"{key}={value}"], model)
    except ParamError as e:
        assert e.key is None and time.monotonic() - began < 5, e.message   # a limit over several parameters
        return
    p, _ = prices_for(model, when=when, provider=provider)
    for d in designs(study, f, lists)[:1] if study == "fork-vs-subagent" else [f]:
        check = verify(study, p, d, when=when, designs_=[d] if study == "fork-vs-subagent" else None)
        assert check["ok"], (study, key, value, check)


def test_limits_hold_for_every_design_a_comparison_makes():
    # 2 children and 1 children x 1 turns fit; listing 5,000 children with 2 turns does not, though
    # the first value alone would
    f, lists = parse_pairs("fork-vs-subagent", ["children=1,2", "turns=1"])
    assert [d.children for d in designs("fork-vs-subagent", f, lists)] == [1, 2]
    with pytest.raises(ParamError, match="requests the check simulates"):
        check_limits("fork-vs-subagent", f, {"children": [1, 2000], "turns": [2]})
