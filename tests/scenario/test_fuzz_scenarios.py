"""Fuzzing scenario files: generated documents, valid and mutated, must give either results whose
numbers add up or one clean UserError (a located one-line message) — nothing else.

CI runs PREFIXSIM_FUZZ_EXAMPLES (default 300) examples per test; a long run is
`PREFIXSIM_FUZZ_EXAMPLES=5000 python -m pytest tests/scenario/test_fuzz_scenarios.py tests/wire/test_fuzz_bodies.py`.
"""
import datetime as dt
import os
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from prefixsim.api import simulate
from prefixsim.core.invariants import summary_matches_rows
from prefixsim.core.pricing import PriceBook
from prefixsim.errors import UserError
from prefixsim.scenario.loader import load_runs

EXAMPLES = int(os.environ.get("PREFIXSIM_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("PREFIXSIM_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PRICE_DATE = dt.date(2026, 11, 30)

size = st.integers(0, 1500)
small = st.integers(0, 3)
duration = st.one_of(st.integers(0, 4000), st.sampled_from(["90s", "5m", "1h", "2m30s", "0s"]))
tool_names = st.sampled_from(["Bash", "Read", "Grep", "Edit", "tool_1", "Nope"])
models = st.sampled_from(["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1", "gpt-4o", "gpt-5",
                          "deepseek-chat", "my-model", "claude-nonexistent"])
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)

steps = st.one_of(
    st.fixed_dictionaries({"request": st.one_of(small, st.fixed_dictionaries(
        {"turns": small}, optional={"user": size, "tool_result": size, "label": text, "after": duration}))}),
    st.fixed_dictionaries({"fork": st.fixed_dictionaries(
        {"children": st.integers(0, 4)},
        optional={"directive": size, "stagger": duration, "turns": small, "join": st.booleans(),
                  "modify": st.lists(st.fixed_dictionaries({"remove_tool": tool_names}), max_size=2),
                  "refuse": st.lists(tool_names, max_size=2), "boundary": st.booleans()})}),
    st.fixed_dictionaries({"subagent": st.fixed_dictionaries(
        {"children": st.integers(0, 3)},
        optional={"system": size, "task": size, "turns": small, "distinct": st.booleans(),
                  "tools": st.fixed_dictionaries({"count": st.integers(0, 5), "size": size})})}),
    st.fixed_dictionaries({"btw": st.one_of(size, st.fixed_dictionaries({"question": size, "answer": size}))}),
    st.fixed_dictionaries({"wait": duration}),
    st.fixed_dictionaries({"compact": st.fixed_dictionaries({}, optional={"instruction": size, "summary": size})}),
    st.fixed_dictionaries({"add_image": size}),
    st.fixed_dictionaries({"remove_tool": tool_names}),
    st.fixed_dictionaries({"add_tool": st.fixed_dictionaries({"name": tool_names}, optional={"size": size})}),
    st.fixed_dictionaries({"reorder_tools": st.sampled_from(["reverse", "rotate"])}),
    st.fixed_dictionaries({"edit_system": st.fixed_dictionaries({"append": st.one_of(text, size)})}),
    st.fixed_dictionaries({"set_tool_choice": st.just({"type": "auto"})}),
    st.fixed_dictionaries({"set_thinking": st.just({"type": "enabled", "budget_tokens": 1024})}),
    st.fixed_dictionaries({"switch_model": models}),
    st.fixed_dictionaries({"refuse_tool_at_call_time": tool_names}),
)
settings_keys = {
    "provider": st.sampled_from(["anthropic", "openai", "deepseek", "prefix", "antropic"]),
    "model": models,
    "tokenizer": st.sampled_from(["approx", "approx", "approx", "cl100k_base"]),
    "ttl": st.sampled_from(["5m", "1h"]),
    "breakpoints": st.sampled_from(["none", "system_and_tools", "last_message", "automatic", "claude_code"]),
    "ttft": duration, "pace": duration, "output": size,
}
documents = st.fixed_dictionaries(
    {"name": text.filter(str.strip), "base": st.fixed_dictionaries({}, optional={
        "tools": st.fixed_dictionaries({"count": st.integers(0, 6), "size": size}),
        "system": st.one_of(size, text),
        "history": st.fixed_dictionaries({"turns": small}, optional={"user": size, "tool_result": size})}),
     "timeline": st.lists(steps, max_size=5)},
    optional={**settings_keys,
              "variants": st.lists(st.fixed_dictionaries({"name": text}, optional=settings_keys), max_size=2),
              "prices": st.just({"my-model": {"input": 3, "output": 15}})})

junk = st.one_of(st.none(), st.booleans(), st.integers(-10**13, 10**13), st.floats(allow_nan=True), text,
                 st.lists(st.integers(), max_size=3), st.dictionaries(text, st.integers(), max_size=2))


@st.composite
def mutated(draw):
    """A valid document with one structural change: a key dropped, a value replaced by junk, a key
    misspelt, or the YAML text damaged (truncated, a byte changed, a line repeated)."""
    doc = draw(documents)
    how = draw(st.sampled_from(["drop", "junk", "typo", "truncate", "byte", "repeat"]))
    if how in ("drop", "junk", "typo"):
        node, key = _random_place(draw, doc)
        if how == "drop":
            del node[key]
        elif how == "junk":
            node[key] = draw(junk)
        else:
            node[key + draw(st.sampled_from(["s", "_", "x"]))] = node.pop(key)
        return _yaml(doc)
    raw = _yaml(doc).encode()
    at = draw(st.integers(0, max(len(raw) - 1, 0)))
    if how == "truncate":
        return raw[:at]
    if how == "byte":
        return raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1:]
    lines = raw.splitlines(keepends=True)
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    return b"".join(lines[:i + 1] + lines[i:])


def _random_place(draw, doc):
    """A (mapping, key) somewhere in the document, found by walking down a random path."""
    node = doc
    while True:
        key = draw(st.sampled_from(sorted(node)))
        child = node[key]
        if isinstance(child, list) and child and isinstance(child[0], dict) and draw(st.booleans()):
            child = draw(st.sampled_from(child))
        if isinstance(child, dict) and child and draw(st.booleans()):
            node = child
            continue
        return node, key


def _yaml(doc) -> str:
    import io
    buf = io.StringIO()
    y = YAML(typ="safe", pure=True)
    y.dump(doc, buf)
    return buf.getvalue()


def _rates_cost(rates, u) -> Decimal:
    """Cost from the token classes and the per-MTok rates, written out independently of Rates.cost."""
    p = u.prompt_tokens
    pairs = [(u.input_tokens, rates.input), (u.cache_write_5m, rates.cache_write_5m),
             (u.cache_write_1h, rates.cache_write_1h), (u.cache_read, rates.cache_read),
             (u.output_tokens, rates.output)]
    return sum((n * r.at(p) for n, r in pairs), Decimal(0)) / Decimal(10**6)


def outcome_or_user_error(text) -> str:
    """Load and simulate one scenario text; assert the invariants; return what happened."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzz.yaml"
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        try:
            runs = load_runs(str(path))
            results = [simulate(r, PRICE_DATE) for r in runs]
        except UserError as e:
            msg = str(e)
            # one line per mistake (a file's errors come in one pass), each naming the file
            assert msg and "\n" not in e.message and e.path, msg
            assert all(line.startswith(e.path) for line in msg.splitlines()), msg
            return "user error: " + e.message.split(" ")[0]
        for run, v in zip(runs, results):
            summary_matches_rows(v.summary(), v.cost_exact, v.rows(), v.outcomes)
            book = PriceBook(run.scenario.prices, when=PRICE_DATE)
            for o in v.outcomes:
                rates = book.rates(o.call.request.model, run.settings.provider or "anthropic")
                assert o.cost_usd == _rates_cost(rates, o.usage)
        return "result"


@pytest.mark.slow
@FUZZ
@given(documents.map(_yaml))
def test_generated_scenarios_give_results_or_a_user_error(text):
    event(outcome_or_user_error(text))


@pytest.mark.slow
@FUZZ
@given(mutated())
def test_mutated_scenarios_give_results_or_a_user_error(text):
    event(outcome_or_user_error(text))
