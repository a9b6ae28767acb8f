"""Scenarios given to the library as YAML text or a mapping, with overrides (issue 34 item 12): the
same loader, checks and errors as a file, without writing one."""
import datetime as dt
import os
from pathlib import Path

import pytest

from prefixsim.api import load_scenario, run_scenario
from prefixsim.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
WHEN = dt.date(2026, 11, 30)
TEXT = """\
name: inline
model: claude-sonnet-4-5
base: {system: 4000}
timeline:
  - request: 2
  - wait: ${gap}
  - request: 1
vars: {gap: 60s}
variants:
  - name: five
    ttl: 5m
  - name: hour
    ttl: 1h
"""


def _costs(res):
    return dict(zip(res.comparison["variant"], res.comparison["cost_usd"]))


def test_text_runs_as_the_same_file_does(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(TEXT)
    from_file, from_text = run_scenario(str(f), WHEN), run_scenario(TEXT, WHEN)
    assert from_text.name == "inline" and from_text.path == "<scenario>"
    assert from_text.comparison.drop(columns="scenario").equals(from_file.comparison.drop(columns="scenario"))
    assert from_text.requests.equals(from_file.requests)


def test_a_mapping_runs_and_is_never_changed():
    doc = {"name": "d", "model": "claude-sonnet-4-5", "base": {"system": 4000}, "timeline": [{"request": 3}],
           "variants": [{"name": "a", "ttl": "5m"}, {"name": "b", "ttl": "1h"}]}
    before = repr(doc)
    res = run_scenario(doc, WHEN, overrides={"variants.b.ttl": "5m", "base": {"tools": {"count": 2, "size": 100}}})
    assert repr(doc) == before
    costs = _costs(res)
    assert costs["a"] == costs["b"]                     # both 5m now
    # `base` merged: the system prompt stays and the tools join it
    def prompt(r):
        c = r.comparison.iloc[0]
        return c["input_tokens"] + c["cache_creation_input_tokens"] + c["cache_read_input_tokens"]
    alone = run_scenario(doc, WHEN)
    assert prompt(res) > prompt(alone) > 3 * 4000


def test_an_override_is_what_editing_the_file_gives(tmp_path):
    """Overriding `vars.gap` to 10m is the file with `gap: 10m`: past the 5-minute TTL the 5m design
    rebuilds and the 1h design does not."""
    edited = tmp_path / "edited.yaml"
    edited.write_text(TEXT.replace("gap: 60s", "gap: 10m"))
    by_override = _costs(run_scenario(TEXT, WHEN, overrides={"vars.gap": "10m"}))
    assert by_override == _costs(run_scenario(str(edited), WHEN))
    base = _costs(run_scenario(TEXT, WHEN))
    assert by_override["five"] > base["five"] and by_override["hour"] == base["hour"]


def test_overrides_reach_a_variant_by_index_and_by_name_and_a_sweep():
    by_index = _costs(run_scenario(TEXT, WHEN, overrides={"variants.1.ttl": "5m"}))
    by_name = _costs(run_scenario(TEXT, WHEN, overrides={"variants.hour.ttl": "5m"}))
    assert by_index == by_name and by_name["five"] == by_name["hour"]
    swept = run_scenario(TEXT, WHEN, overrides={"sweep": {"param": "gap", "values": ["1m", "10m"]}})
    assert len(swept.comparison) == 4 and set(swept.comparison["gap"]) == {"1m", "10m"}


def test_a_file_with_overrides_is_not_written(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(TEXT)
    res = run_scenario(str(f), WHEN, overrides={"model": "claude-haiku-4-5"})
    assert set(res.requests["model"]) == {"claude-haiku-4-5"} and f.read_text() == TEXT
    assert len(load_scenario(str(f), {"variants.five.ttl": "1h"})) == 2


@pytest.mark.parametrize("overrides,message", [
    ({"variants.nope.ttl": "5m"}, "<scenario>: override 'variants.nope.ttl': no item named 'nope' at variants "
                                  "('five', 'hour')"),
    ({"variants.5.ttl": "1h"}, "<scenario>: override 'variants.5.ttl': variants.5 is past the end (2 items)"),
    ({"name.x": 1}, "<scenario>: override 'name.x': name is a single value, not a mapping or a list"),
    ({"": 1}, "<scenario>: override '': a dotted key such as `ttl`, `vars.history` or `variants.0.stagger`"),
    ({"model": "claude-sonet-4-5"}, "<scenario>:2:1: unknown Anthropic model 'claude-sonet-4-5' (did you mean "
                                    "'claude-sonnet-4-5'?)"),
])
def test_a_bad_override_is_one_line_naming_it(overrides, message):
    with pytest.raises(UserError) as e:
        run_scenario(TEXT, WHEN, overrides=overrides)
    assert str(e.value) == message


def test_text_errors_name_the_line_and_the_given_name():
    with pytest.raises(UserError) as e:
        run_scenario(TEXT.replace("ttl: 1h", "ttl: 2h"), WHEN, name="notebook cell 3")
    assert str(e.value).startswith("notebook cell 3:13:5: variants[1].ttl: ")
    with pytest.raises(UserError) as e:
        run_scenario("name: x\nname: y\n")
    assert str(e.value).startswith("<scenario>:2:1: duplicate key 'name'")


@pytest.mark.parametrize("source,message", [
    ("scenarios/none-such.yaml", "scenarios/none-such.yaml: no such scenario file"),
    (b"name: x", "a scenario is a path, YAML text or a mapping, not bytes"),
    (42, "a scenario is a path, YAML text or a mapping, not int"),
    ("   \n", "<scenario>:1: empty file"),
])
def test_what_is_no_scenario_is_said(source, message):
    with pytest.raises(UserError) as e:
        run_scenario(source)
    assert str(e.value).startswith(message)


def test_text_larger_than_a_scenario_file_may_be_is_refused():
    from prefixsim.io.userfiles import MAX_YAML_BYTES

    with pytest.raises(UserError, match="larger than"):
        run_scenario("name: x\n" + "#" * MAX_YAML_BYTES)


def test_a_mapping_is_checked_as_a_file_is():
    with pytest.raises(UserError, match="unknown key 'sytem'"):
        run_scenario({"name": "d", "model": "claude-sonnet-4-5", "base": {"sytem": 10}, "timeline": [{"request": 1}]})
    with pytest.raises(UserError, match="not a finite number|finite|NaN|nan"):
        run_scenario({"name": "d", "model": "claude-sonnet-4-5", "base": {"system": float("nan")},
                      "timeline": [{"request": 1}]})


def test_file_references_resolve_beside_the_name(tmp_path):
    """A scenario given as text with `name=` in a folder reads that folder's body file, as the same
    text saved there would; a name elsewhere does not find it."""
    folder = tmp_path / "sc"
    folder.mkdir()
    (folder / "body.json").write_text('{"model": "claude-sonnet-4-5", "system": "' + "You are careful. " * 400 +
                                      '", "messages": [{"role": "user", "content": "hello"}]}')
    text = ("name: with a body\nmodel: claude-sonnet-4-5\nbase: {file: body.json}\n"
            "timeline: [request: 2]\n")
    (folder / "saved.yaml").write_text(text)
    name = str(folder / "inline.yaml")
    res = run_scenario(text, WHEN, name=name)
    assert not os.path.exists(name)
    saved = run_scenario(str(folder / "saved.yaml"), WHEN)
    assert res.requests.drop(columns="scenario").equals(saved.requests.drop(columns="scenario"))
    assert res.comparison["cache_read_input_tokens"].iloc[0] > 0
    with pytest.raises(UserError, match="body.json"):
        run_scenario(text, WHEN, name=str(tmp_path / "x.yaml"))
