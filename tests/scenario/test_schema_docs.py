"""`prefixsim schema` teaches the format (issue 34 item 7): every key and step has its own one line
and an example that the format accepts, closed sets are enums, and `--keys` is a page to read."""
import builtins
import json
from typing import Annotated

import pytest
from pydantic import BaseModel, TypeAdapter

from prefixsim.cli import main
from prefixsim.core.tokens import TOKENIZERS
from prefixsim.providers.registry import PROVIDERS
from prefixsim.scenario import fielddocs
from prefixsim.scenario.schema import STEP_KINDS, Scenario, Step
from prefixsim.scenario.studynames import SCENARIO_STUDIES

SCHEMA = Scenario.model_json_schema()
# Every builtin's docstring: a model built on `str` once took str's as its description.
BUILTIN_DOCS = {" ".join(o.__doc__.split()) for o in vars(builtins).values() if getattr(o, "__doc__", None)}


def run(args, capsys):
    """`prefixsim ARGS` as the console runs it: (exit code, stdout + stderr)."""
    code = 0
    try:
        main(args)
    except SystemExit as e:
        code = e.code or 0
    out = capsys.readouterr()
    return code, out.out + out.err


def _defs():
    return [("Scenario", SCHEMA), *SCHEMA["$defs"].items()]


def _models(cls=Scenario, seen=None):
    """Every pydantic model the format is made of, by walking the field annotations."""
    seen = {} if seen is None else seen
    if cls.__name__ in seen:
        return seen
    seen[cls.__name__] = cls
    for f in cls.model_fields.values():
        stack = [f.annotation]
        while stack:
            t = stack.pop()
            if isinstance(t, type) and issubclass(t, BaseModel):
                _models(t, seen)
            stack.extend(getattr(t, "__args__", ()) or ())
            stack.extend(getattr(t, "__metadata__", ()) and (t.__origin__,) or ())
    return seen


@pytest.mark.parametrize("model,d", _defs(), ids=[n for n, _ in _defs()])
def test_every_part_and_key_has_its_own_line_and_an_example(model, d):
    if "properties" not in d:
        return
    line = " ".join(d.get("description", "").split())
    assert line and line not in BUILTIN_DOCS, f"{model}: {line!r}"
    for key, prop in d["properties"].items():
        line = " ".join(prop.get("description", "").split())
        assert line and line not in BUILTIN_DOCS, f"{model}.{key} has no description of its own"
        assert prop.get("examples"), f"{model}.{key} has no example"


def test_every_step_is_described_and_has_an_example_the_format_accepts():
    steps = {next(iter(d["properties"])): d for n, d in SCHEMA["$defs"].items() if n.endswith("Step")}
    assert set(steps) == set(STEP_KINDS)
    for kind, d in steps.items():
        assert d["description"] == fielddocs.STEPS[kind][0] and d["description"] not in BUILTIN_DOCS
        assert set(d["examples"][0]) == {kind}
        TypeAdapter(Step).validate_python(d["examples"][0])   # the example is a valid step


def test_every_example_is_a_value_its_field_accepts():
    for name, cls in _models().items():
        for key, f in cls.model_fields.items():
            entry = fielddocs.field_doc(cls, key) if not hasattr(cls, "__step_kind__") else None
            if entry is not None:
                t = Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation
                TypeAdapter(t).validate_python(entry[1])


def test_the_table_names_only_keys_the_format_has():
    models = _models()
    for model, keys in fielddocs.FIELDS.items():
        owners = [c for c in models.values() if model in [b.__name__ for b in c.__mro__]]
        assert owners, f"fielddocs.py documents {model}, which the format does not use"
        for key in keys:
            assert any(key in c.model_fields for c in owners), f"fielddocs.py documents {model}.{key}"


def _enum(prop):
    for p in prop.get("anyOf", [prop]):
        if "enum" in p:
            return p["enum"]
    return None


def test_closed_sets_are_enums_an_editor_completes():
    props = SCHEMA["properties"]
    assert _enum(props["provider"]) == list(PROVIDERS)
    assert _enum(props["tokenizer"]) == list(TOKENIZERS)
    assert _enum(props["ttl"]) == ["5m", "1h"]
    assert _enum(props["endpoint"]) == ["global", "regional", "multi-region"]
    studies = next(p for p in props["studies"]["anyOf"] if p.get("type") == "object")
    assert studies["propertyNames"]["enum"] == list(SCENARIO_STUDIES)   # what `run` takes: not gemini-explicit
    engine = SCHEMA["$defs"]["EngineSpec"]["properties"]
    assert _enum(engine["eviction"]) == ["lru", "lfu", "fifo"]
    assert "llama-3.1-8b" in _enum(engine["kv_model"])


def test_durations_written_as_text_pass_the_schema_an_editor_checks():
    # The format takes "5m"; a schema saying "number" would flag every such file as wrong.
    wait = SCHEMA["$defs"]["WaitSpec"]["properties"]["seconds"]
    assert {"number", "string"} <= {p.get("type") for p in wait["anyOf"]}


def test_a_wrong_provider_is_still_refused_at_its_line_with_a_did_you_mean(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nprovider: antropic\ntimeline:\n  - request: 1\n")
    code, out = run(["validate", str(f)], capsys)
    assert code == 2
    assert f"{f}:2:" in out and "anthropic" in out


def test_schema_keys_prints_each_key_type_default_line_and_example(capsys):
    code, out = run(["schema", "--keys", "fork"], capsys)
    assert code == 0, out
    out = out.splitlines()
    assert out[0].startswith("fork: ")
    i = out.index("  children (integer, default 1)")
    assert out[i + 1].strip() == "Children forked from the parent's exact prefix."
    assert out[i + 2].strip() == "e.g. 4"
    assert "  stagger (duration or hold, default \"hold\")" in out
    assert not any(line.startswith("subagent:") for line in out)


def test_schema_keys_covers_every_step_and_the_scenario(capsys):
    code, out = run(["schema", "--keys"], capsys)
    assert code == 0
    for kind in STEP_KINDS:
        assert f"  {kind} (" in out
    assert "  provider (anthropic | bedrock | " in out


def test_schema_keys_of_an_unknown_section_is_one_line_with_a_did_you_mean(capsys):
    code, out = run(["schema", "--keys", "frok"], capsys)
    assert code == 2 and "Traceback" not in out
    assert "fork" in out and len(out.strip().splitlines()) == 1


def test_the_json_schema_is_still_json(capsys):
    code, out = run(["schema"], capsys)
    assert json.loads(out)["title"] == "Scenario"
