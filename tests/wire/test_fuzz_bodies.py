"""Fuzzing request bodies and the logs that carry them: every generated line, valid or mutated,
is either replayed with numbers that add up or skipped and named — nothing else.

PREFIXSIM_FUZZ_EXAMPLES sets the examples per test (default 300); see tests/scenario/test_fuzz_scenarios.py.
"""
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from prefixsim.errors import UserError
from prefixsim.replay import replay
from prefixsim.sources import load
from prefixsim.sources.problems import collecting
from prefixsim.wire.anthropic import render_anthropic

EXAMPLES = int(os.environ.get("PREFIXSIM_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("PREFIXSIM_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
cache = st.one_of(st.none(), st.just({"type": "ephemeral"}), st.just({"type": "ephemeral", "ttl": "1h"}))


def _marked(part, cc):
    return {**part, "cache_control": cc} if cc else part


content_block = st.one_of(
    st.builds(lambda t, cc: _marked({"type": "text", "text": t}, cc), text, cache),
    st.builds(lambda i, cc: _marked({"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"c": "ls"}}, cc),
              st.integers(0, 9), cache),
    st.builds(lambda i, t: {"type": "tool_result", "tool_use_id": f"t{i}", "content": t}, st.integers(0, 9), text),
    st.just({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}),
)
message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                 "content": st.one_of(text, st.lists(content_block, min_size=1, max_size=3))})
tool = st.builds(lambda n, cc: _marked({"name": n, "description": "d", "input_schema": {"type": "object"}}, cc),
                 st.sampled_from(["Bash", "Read", "Grep"]), cache)
body = st.fixed_dictionaries(
    {"model": st.sampled_from(["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"]),
     "max_tokens": st.integers(1, 100), "messages": st.lists(message, min_size=1, max_size=4)},
    optional={"system": st.one_of(text, st.lists(st.builds(lambda t, cc: _marked({"type": "text", "text": t}, cc),
                                                          text, cache), max_size=2)),
              "tools": st.lists(tool, max_size=3), "tool_choice": st.just({"type": "auto"}),
              "thinking": st.just({"type": "enabled", "budget_tokens": 1024})})
usage = st.fixed_dictionaries({"input_tokens": st.integers(0, 5000), "cache_read_input_tokens": st.integers(0, 5000),
                               "cache_creation_input_tokens": st.integers(0, 5000),
                               "output_tokens": st.integers(0, 500)})
junk = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), text, st.lists(st.integers(), max_size=2),
                 st.dictionaries(text, st.integers(), max_size=2), st.floats(allow_nan=True),
                 # the values tests/sources/test_fuzz_log_types.py puts in real lines: huge, a lone surrogate
                 st.sampled_from([1e308, 10**30, "\ud800", "claude-nonesuch-9"]))


@st.composite
def log_line(draw) -> bytes:
    """One log line: a body with optional usage and timestamp, sometimes damaged (a field replaced
    by junk, the JSON cut short, a byte changed)."""
    entry = {"request": draw(body)}
    if draw(st.booleans()):
        entry["response"] = {"usage": draw(usage)}
    if draw(st.booleans()):
        entry["timestamp"] = draw(st.one_of(st.integers(1_700_000_000, 1_800_000_000),
                                            st.sampled_from(["2026-11-30T10:00:00Z", "yesterday"])))
    how = draw(st.sampled_from(["valid", "valid", "junk", "cut", "byte"]))
    if how == "junk":
        target = draw(st.sampled_from(["request", "body", "usage"]))
        if target == "request":
            entry["request"] = draw(junk)
        elif target == "body":
            entry["request"][draw(st.sampled_from(sorted(entry["request"])))] = draw(junk)
        elif "response" in entry:
            entry["response"]["usage"][draw(st.sampled_from(sorted(entry["response"]["usage"])))] = draw(junk)
    raw = json.dumps(entry).encode()
    if how == "cut":
        raw = raw[:draw(st.integers(0, len(raw)))]
    elif how == "byte":
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1:]
    event(how)
    return raw.replace(b"\n", b" ")


@pytest.mark.slow
@FUZZ
@given(body)
def test_rendering_a_body_gives_blocks_or_a_request_error(b):
    try:
        req = render_anthropic(b)
    except UserError as e:
        assert str(e) and "\n" not in str(e)
        event("request error")
        return
    assert req.blocks and all(blk.data for blk in req.blocks)


@pytest.mark.slow
@FUZZ
@given(st.lists(log_line(), min_size=1, max_size=6))
def test_a_log_replays_or_names_every_line_it_skips(lines):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "calls.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        with collecting() as found:
            try:
                records = load(path, "anthropic")
            except UserError as e:   # the file as a whole: only a clean, located message
                assert e.path and "\n" not in str(e)
                event("file error")
                return
    nonblank = sum(1 for x in lines if x.strip())
    assert len(records) + len(found.skipped) == nonblank   # every line replayed or named
    assert all(p.line for p in found.skipped)
    if records:
        # Whatever a line holds was judged when it was read (an unknown model skips its line), so
        # the replay itself never fails; replay_adds_up runs inside, the per-request split is checked here.
        res = replay(records)
        for r in res.rows:
            u = r.predicted
            assert u.input_tokens + u.cache_creation + u.cache_read == u.prompt_tokens
            assert min(u.input_tokens, u.cache_write_5m, u.cache_write_1h, u.cache_read) >= 0
        event("replayed")
