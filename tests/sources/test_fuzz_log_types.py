"""Type confusion in real log lines: one field of a real line at a time becomes each JSON type (null,
true, 0, -1, 1.5, 1e308, "", "x", [], {}, deep nesting, a lone surrogate), and the log is read and
replayed. Every line is replayed or named; nothing raises (no exit 70).

Seeds: Claude Code transcripts (tests/data/claude-code), the request bodies and usage of the
Anthropic cassettes (tests/data/anthropic-api), the OpenAI Chat Completions fixture
(tests/fixtures/openai), the Gemini fixtures (tests/fixtures/gemini). In CI a fixed sample of mutations (SEED, a few hundred, well under 30 s);
with PREFIXSIM_FUZZ_LONG=1 every mutation of every API line and a larger transcript sample drawn
from a fresh seed (printed, so a failure can be replayed with PREFIXSIM_FUZZ_SEED). The sibling
tests/wire/test_fuzz_bodies.py fuzzes well-formed bodies with hypothesis.
"""
import json
import os
import random
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from conftest import data_file
from ruamel.yaml import YAML

from prefixsim.cli import main
from prefixsim.engines.trace import load_trace
from prefixsim.errors import UserError
from prefixsim.replay import replay
from prefixsim.sources import load
from prefixsim.sources.problems import collecting

LONG = bool(os.environ.get("PREFIXSIM_FUZZ_LONG"))
SEED = int(os.environ.get("PREFIXSIM_FUZZ_SEED") or (time.time_ns() % 2**32 if LONG else 20261130))
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

DEEP = "__DEEP__"
DEEP_JSON = "[" * 5000 + "]" * 5000      # past the JSON reader's stack, not past a file's size
NESTED = "__NESTED__"
NESTED_JSON = '{"a": ' * 900 + "1" + "}" * 900   # parses, then meets every recursive walk after the reader
SURROGATE = "\ud800"
#: One of each JSON type and the awkward values of each: what a field may hold in a log someone edited.
VALUES: list[Any] = [None, True, 0, -1, 1.5, 1e308, "", "x", [], {}, DEEP, NESTED, SURROGATE]


def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every field's path in a parsed line (keys and list indices), containers before their contents."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):   # the first few items stand for the rest
            yield (*prefix, i)
            yield from paths(v, (*prefix, i))


def mutated(line: dict, path: tuple, value: Any) -> str:
    """`line` as JSON text with the field at `path` replaced by `value`."""
    copy = json.loads(json.dumps(line))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(copy).replace(json.dumps(DEEP), DEEP_JSON).replace(json.dumps(NESTED), NESTED_JSON)


def _api_lines() -> list[tuple[str, dict]]:
    """(format, line) seeds: cassette interactions as log lines, and the OpenAI fixture's lines."""
    out = []
    yaml = YAML(typ="safe", pure=True)
    for name in ("test_anthropic_cache_real_api.yaml", "test_inline_system_prompt_cache_prefix_is_reused.yaml"):
        doc = yaml.load(data_file("anthropic-api", name).read_text())
        for k, inter in enumerate(doc["interactions"]):
            body = inter["request"].get("parsed_body")
            if not isinstance(body, dict) or "count_tokens" in str(inter["request"].get("uri")):
                continue
            usage = (inter.get("response", {}).get("parsed_body") or {}).get("usage")
            out.append(("anthropic", {"id": f"{name}#{k}", "timestamp": f"2026-11-30T10:00:{k:02d}Z",
                                      "request": body, "response": {"usage": usage}}))
    for text in (FIXTURES / "openai" / "chat-completions.jsonl").read_text().splitlines():
        out.append(("openai", json.loads(text)))
    for name in ("implicit.jsonl", "explicit.jsonl"):   # an update or delete line is no request: left out
        for text in (FIXTURES / "gemini" / name).read_text().splitlines():
            if '"PATCH"' not in text and '"DELETE"' not in text:
                out.append(("gemini", json.loads(text)))
    return out


def _mutations(lines: list[tuple[str, dict]]) -> list[tuple[str, int, tuple, Any]]:
    every = [(fmt, i, p, v) for i, (fmt, line) in enumerate(lines) for p in paths(line) for v in VALUES]
    return every if LONG else random.Random(SEED).sample(every, min(len(every), 360))


def _check_log(path: Path, fmt: str, n_lines: int) -> None:
    """Read and replay one log: every line a record or a named skip, the replay raises nothing."""
    with collecting() as found:
        records = load(path, fmt)
    assert len(records) + len(found.skipped) == n_lines, (SEED, found.skipped)
    assert all(p.path == str(path) and p.line for p in found.skipped)
    assert all("\n" not in str(p) for p in found.skipped)
    "\n".join(str(p) for p in found.skipped).encode("utf-8")   # printable: lone surrogates escaped
    if records:
        replay(records)   # replay_adds_up checks the sums inside


@pytest.mark.slow
def test_api_log_lines_with_any_field_of_any_type(tmp_path):
    lines = _api_lines()
    muts = _mutations(lines)
    print(f"PREFIXSIM_FUZZ_SEED={SEED}: {len(muts)} mutations of {len(lines)} API lines")
    for fmt in ("anthropic", "openai", "gemini"):
        mine = [m for m in muts if m[0] == fmt]
        for start in range(0, len(mine), 30):   # 30 mutated lines per log: one read, one replay
            batch = mine[start:start + 30]
            path = tmp_path / f"{fmt}-{start}.jsonl"
            text = [mutated(lines[i][1], p, v) for _, i, p, v in batch]
            # Unique ids where the mutation left one, so a line is never a duplicate of another's copy.
            text = [t.replace('"id": "', f'"id": "m{k}-', 1) for k, t in enumerate(text)]
            path.write_text("\n".join(text) + "\n")
            _check_log(path, fmt, len(text))


def _transcript_lines(name: str) -> list[dict]:
    return [json.loads(x) for x in data_file("claude-code", "spotter", name).read_text().splitlines() if x.strip()]


@pytest.mark.slow
def test_transcript_lines_with_any_field_of_any_type(tmp_path):
    seed_lines = _transcript_lines("tool_heavy.jsonl")
    original = {r.request_id for r in load(data_file("claude-code", "spotter", "tool_heavy.jsonl"))}
    every = [(i, p, v) for i, line in enumerate(seed_lines) for p in paths(line)
             if len(p) <= 3 for v in VALUES]   # the fields a transcript line is read by
    rng = random.Random(SEED)
    muts = rng.sample(every, min(len(every), 800 if LONG else 120))
    print(f"PREFIXSIM_FUZZ_SEED={SEED}: {len(muts)} transcript mutations")
    for k, (i, p, v) in enumerate(muts):
        text = [json.dumps(x) for x in seed_lines]
        text[i] = mutated(seed_lines[i], p, v)
        path = tmp_path / f"t{k}.jsonl"
        path.write_text("\n".join(text) + "\n")
        with collecting() as found:
            records = load(path)
        got = {r.request_id for r in records}
        named = len(found.skipped) + len(found.notes)
        # A request the mutation lost (its id, or its only line) is named; a changed id is a new one.
        assert len(original - got) <= len(got - original) + named, (SEED, i, p, v, found.skipped)
        assert all(q.path == str(path) for q in found.skipped)
        if records:
            replay(records)


def _cli_cases() -> Iterator[tuple[str, list[dict], int, tuple]]:
    """(name, seed lines, line index, field path): the id, time, model and usage fields of two calls
    of a transcript and of the OpenAI and Anthropic API lines."""
    cc = _transcript_lines("tool_heavy.jsonl")
    for i in [i for i, x in enumerate(cc) if x.get("type") == "assistant"][:2]:
        for field in (("requestId",), ("timestamp",), ("message",), ("message", "model")):
            yield "transcript", cc, i, field
    api = _api_lines()
    for fmt in ("openai", "anthropic", "gemini"):
        lines = [x for f, x in api if f == fmt][:2]
        for field in (("id",), ("timestamp",), ("request", "model"), ("response", "usage")):
            yield fmt, lines, 1, field


@pytest.mark.slow
def test_the_cli_never_exits_70_on_a_mutated_line(tmp_path, capsys):
    # The whole command, output formatting included, over the nastiest values.
    for k, (name, lines, i, field) in enumerate(_cli_cases()):
        for v in (SURROGATE, DEEP, 1e308, [], -1):
            text = [json.dumps(x) for x in lines]
            text[i] = mutated(lines[i], field, v)
            path = tmp_path / f"{name}-{k}.jsonl"
            path.write_text("\n".join(text) + "\n")
            for fmt in ("table", "json"):
                with pytest.raises(SystemExit) as e:
                    main(["replay", str(path), "--format", fmt])
                assert e.value.code in (0, 2), (name, field, v, capsys.readouterr().err[-300:])
                capsys.readouterr()


def test_engine_trace_lines_with_any_field_of_any_type(tmp_path):
    # Engine traces stop at a bad line (a located error, exit 2), never crash.
    lines = [json.loads(x) for x in data_file("mooncake", "conversation_trace.jsonl").read_text().splitlines()[:3]]
    for k, (i, p, v) in enumerate((i, p, v) for i, line in enumerate(lines) for p in paths(line) for v in VALUES):
        text = [json.dumps(x) for x in lines]
        text[i] = mutated(lines[i], p, v)
        path = tmp_path / f"trace{k}.jsonl"
        path.write_text("\n".join(text) + "\n")
        try:
            load_trace(path)
        except UserError as e:
            assert e.path == str(path) and e.line == i + 1, (p, v, e)
