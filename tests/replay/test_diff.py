import json

import pytest
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.replay.diff import diff_requests
from prefixsim.wire.anthropic import render_anthropic

BASE = {"model": "claude-sonnet-4-5", "system": "You are terse. " * 50,
        "messages": [{"role": "user", "content": "What is 2+2? Answer briefly."}]}


def test_parting_in_the_system_layer():
    other = {**BASE, "system": "You are terse! " + "You are terse. " * 49}
    d = diff_requests(render_anthropic(BASE), render_anthropic(other))
    assert (d.block, d.layer, d.path, d.byte) == (0, "system", "system[0]", 36)
    assert d.shared_tokens == 0 and d.rewritten_tokens > 0 and d.cost_usd > 0
    assert "terse." in d.before and "terse!" in d.after


def test_extension_and_parameter_change():
    longer = {**BASE, "messages": BASE["messages"] + [{"role": "assistant", "content": "4"}]}
    assert diff_requests(render_anthropic(BASE), render_anthropic(longer)).block is None
    tc = {**longer, "tool_choice": {"type": "auto"}}
    d = diff_requests(render_anthropic(longer), render_anthropic(tc))
    assert d.block == 1 and "parameters changed" in d.path


def test_cli_two_files_and_log_indices(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(BASE))
    b.write_text(json.dumps({**BASE, "messages": [{"role": "user", "content": "What is 3+3?"}]}))
    out = CliRunner().invoke(cli, ["diff", str(a), str(b)])
    assert out.exit_code == 1 and "messages layer, messages[0].content[0]" in out.output   # they differ: 1
    log = tmp_path / "log.jsonl"
    log.write_text(a.read_text() + "\n" + b.read_text() + "\n")
    js = CliRunner().invoke(cli, ["diff", str(log), "--index", "0", "1", "--format", "json"])
    assert json.loads(js.output)["block"] == 1 and js.exit_code == 1
    bad = CliRunner().invoke(cli, ["diff", str(log), "--index", "0", "9"])
    assert bad.exit_code != 0 and "out of range" in str(bad.exception)


#: A system prompt above claude-sonnet-4-5's 1,024-token minimum, its breakpoint the request's only one.
CACHED = {"model": "claude-sonnet-4-5",
          "system": [{"type": "text", "text": "You are a careful coding agent. " * 240, "cache_control": {"type": "ephemeral"}}],
          "messages": [{"role": "user", "content": "Please fix the failing test in parser.py."}]}


def _cli(tmp_path, a, b, *more):
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(json.dumps(a))
    fb.write_text(json.dumps(b))
    return CliRunner().invoke(cli, ["diff", str(fa), str(fb), *more])


def test_the_same_request_is_not_said_to_extend_itself_and_exits_0(tmp_path):
    """Issue 34 item 10: `diff a.json a.json` said "B extends A" and exited 0 whatever the bodies; as
    diff(1), 0 when they are the same, 1 when they differ."""
    same = _cli(tmp_path, CACHED, CACHED)
    assert same.exit_code == 0, same.output
    assert same.output.startswith("A and B are the same request") and "extends" not in same.output
    longer = {**CACHED, "messages": [*CACHED["messages"], {"role": "assistant", "content": "Looking."},
                                     {"role": "user", "content": "Go on."}]}
    ext = _cli(tmp_path, CACHED, longer)
    assert ext.exit_code == 1 and ext.output.startswith("B extends A")


def test_the_readable_count_follows_the_providers_rules():
    """Issue 34 item 10: with B = A plus two messages, diff called B's whole prompt readable, where A's
    only breakpoint was on the system prompt: B reads what A's breakpoint wrote (the system prompt),
    not A's whole prompt; below the model's minimum nothing is cached at all."""
    from prefixsim.core.tokens import TokenCounter, get_tokenizer

    longer = {**CACHED, "messages": [*CACHED["messages"], {"role": "assistant", "content": "Looking."},
                                     {"role": "user", "content": "Go on."}]}
    a, b = render_anthropic(CACHED), render_anthropic(longer)
    d = diff_requests(a, b)
    count = TokenCounter(get_tokenizer("cl100k_base")).count
    system = sum(count(x) for x in a.blocks if x.layer.label in ("tools", "system"))
    assert d.block is None and d.shared_tokens == sum(count(x) for x in a.blocks)   # A's whole prompt is shared
    assert d.readable_tokens == system < d.shared_tokens < d.tokens_b
    assert f"B reads {system:,} of its {d.tokens_b:,} tokens" in d.describe()
    short = {**CACHED, "system": [{**CACHED["system"][0], "text": "You are terse."}]}
    assert diff_requests(render_anthropic(short), render_anthropic(short)).readable_tokens == 0


def test_a_caret_under_the_first_differing_byte_and_excerpts_start_at_a_word(tmp_path):
    """Issue 34 item 10: no caret showed where the bytes part, and excerpts started mid-word."""
    text = "Instructions follow carefully considered. " * 3
    a = {**BASE, "system": text + "Always answer in English."}
    b = {**BASE, "system": text + "Always answer in French."}
    out = _cli(tmp_path, a, b)
    assert out.exit_code == 1
    lines = out.output.splitlines()
    la = next(x for x in lines if x.startswith("  A: "))
    lb = next(x for x in lines if x.startswith("  B: "))
    caret = lines[lines.index(lb) + 1]
    assert caret.strip() == "^"
    col = caret.index("^")
    assert la[col] != lb[col] and la[5:col] == lb[5:col]          # under the first difference, not before it
    assert (la[col], lb[col]) == ("E", "F")
    d = diff_requests(render_anthropic(a), render_anthropic(b))
    shown = d.before.removeprefix("…")
    data = render_anthropic(a).blocks[d.block].data.decode()
    start = data.index(shown.removesuffix("…"))
    assert start == 0 or not (data[start - 1].isalnum() or data[start - 1] == "_"), d.before   # a word's start


def test_an_automatic_caches_parting_is_priced_under_its_own_rules():
    """Two requests of an OpenAI log: the extra write was priced at Anthropic's rates, so for gpt-4o
    it was left out, and the readable count was said to be what A's breakpoints cover (OpenAI's cache
    has none). The tokens after the parting cost the input rate there: no write premium."""
    gpt = {**BASE, "model": "gpt-4o", "system": "You are a careful coding agent. " * 240}
    other = {**gpt, "messages": [{"role": "user", "content": "What is 3+3? Answer briefly."}]}
    d = diff_requests(render_anthropic(gpt), render_anthropic(other), "openai")
    assert d.block is not None and d.readable_tokens > 0
    assert d.cost_usd == pytest.approx(d.rewritten_tokens * 2.5 / 1_000_000)   # gpt-4o's input rate, $2.50/MTok
    text = d.describe()
    assert "breakpoints" not in text and "gpt-4o's input rate (no write premium)" in text, text
    claude = diff_requests(render_anthropic(BASE), render_anthropic({**BASE, "system": "You are terse!"}))
    assert "claude-sonnet-4-5's 5m write rate" in claude.describe()
