"""A log line parsed against the previous one (`sources.linejson`) and rendered and sized against the
previous request (`render.History`, `Sizer.with_sizes`) gives exactly what a fresh parse and render
of every line gives (issue 16: full-request logs re-parsed and re-rendered their history per line)."""
from __future__ import annotations

import json

import pytest
from log_fixtures import lines, session

from prefixsim import sources
from prefixsim.sources import anthropic_log, linejson, timeorder
from prefixsim.wire import anthropic as render


def _same_parse(prev: str, text: str) -> None:
    """`text` parsed after `prev` is what json.loads gives, to the type and key order (repr), or
    raises what json.loads raises."""
    parser = linejson.LineParser()
    parser.loads(prev)
    try:
        want = repr(json.loads(text))
    except (ValueError, RecursionError) as e:
        with pytest.raises(type(e)) as got:
            parser.loads(text)
        assert str(got.value) == str(e)
        return
    assert repr(parser.loads(text)) == want


PAIRS = [
    ('{"a": [{"x": 1}, {"y": "s"}]}', '{"a": [{"x": 1.0}, {"y": "s"}, {"z": 2}]}'),       # 1 -> 1.0
    ('{"a": [{"x": 0.0}, {"y": "s"}]}', '{"a": [{"x": -0.0}, {"y": "s"}]}'),               # 0.0 -> -0.0
    ('{"a": [{"x": true}, 1]}', '{"a": [{"x": 1}, 1]}'),
    ('{"a": [12, {"k": 1}, 3]}', '{"a": [123, {"k": 1}, 3]}'),                              # a number's prefix
    ('{"a": [{"k": 1}, 12]}', '{"a": [{"k": 1}, 123]}'),
    ('{"s": "abc", "n": 1}', '{"s": "abcd", "n": 1}'),
    ('{"m": [{"a": 1, "b": 2}, 0]}', '{"m": [{"b": 2, "a": 1}, 0]}'),                       # key order
    ('{"m": [{"a": "\\u0041"}, 0]}', '{"m": [{"a": "A"}, 0]}'),                              # escapes
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m" : [ {"a": 1} ,{"b": 2}\t] }\n'),                 # spacing
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m": [{"a": 1}, {"b": 2}], "m": [{"c": 3}]}'),       # a repeated key
    ('{"r": {"b": {"m": [{"a": 1}, {"b": 2}], "t": "x"}}}', '{"r": {"b": {"m": [{"a": 1}, {"b": 2}, {"c": 3}], "t": "x"}}}'),
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m": [{"a": 1}, {"b": 2},]}'),                        # broken after reuse
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m": [{"a": 1}, {"b": 2}]} x'),
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m": [{"a": 1}, {"b": 2}'),
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m": [{"a": 1} {"b": 2}]}'),
    ('{"m": [{"a": 1}, {"b": 2}]}', '{"m": [{"a": 1}, {"b": 2}], }'),
    ('{"m": [{"a": 1}, {"b": 2}]}', '\ufeff{"m": [{"a": 1}, {"b": 2}]}'),
    ('{"m": [{"a": 1}]}', '[{"m": [{"a": 1}]}]'),
    ('{"m": [{"a": 1}]}', '"text"'),
    ('{"m": [{"a": 1}]}', ''),
    ('{"m": [{"a": 1}]}', '{"m": [{"a": NaN}, Infinity]}'),
    ('{"m": [{"a": 1}]}', '{"m": ' + '[' * 100_000 + ']' * 100_000 + '}'),
    ('{}', '{ }'),
    ('{"m": []}', '{"m": [], "n": [ ]}'),
]


@pytest.mark.parametrize("prev, text", PAIRS)
def test_a_line_parsed_after_another_is_what_json_loads_gives(prev, text):
    _same_parse(prev, text)


def test_unchanged_members_are_the_previous_lines_objects_and_changed_ones_are_not():
    parser = linejson.LineParser()
    a = parser.loads('{"t": 1, "request": {"tools": [{"n": "x"}], "messages": [{"c": [1]}, {"c": "y"}]}}')
    b = parser.loads('{"t": 2, "request": {"tools": [{"n": "x"}], "messages": [{"c": [1]}, {"c": "z"}, {}]}}')
    assert b["request"]["tools"][0] is a["request"]["tools"][0]
    assert b["request"]["messages"][0] is a["request"]["messages"][0]
    assert b["request"]["messages"][1] is not a["request"]["messages"][1]
    assert b["request"]["messages"] is not a["request"]["messages"]
    assert parser.reused == 2


def test_the_constructed_log_parses_line_by_line_as_json_loads_does():
    parser = linejson.LineParser()
    for text in lines():
        if text.strip():
            _same_parse_in_sequence(parser, text)
    assert parser.reused > 50


def _same_parse_in_sequence(parser, text):
    try:
        want = repr(json.loads(text))
    except ValueError:
        with pytest.raises(ValueError):
            parser.loads(text)
        return
    assert repr(parser.loads(text)) == want


class _Fresh:
    """json.loads for every line: the reader without the line parser (every line's values new)."""

    fresh = 0

    def loads(self, text):
        self.fresh = len(text)
        return json.loads(text)

    def copy(self):
        return _Fresh()


def _slow(monkeypatch):
    """Every line parsed with json.loads and rendered on its own, as before the reuse."""
    monkeypatch.setattr(timeorder, "LineParser", _Fresh)
    monkeypatch.setattr("prefixsim.sources.api_log.LineParser", _Fresh)
    monkeypatch.setattr(anthropic_log, "render_anthropic", lambda body, history=None: render.render_anthropic(body))


@pytest.mark.filterwarnings("ignore::prefixsim.sources.problems.SkippedLineWarning")
@pytest.mark.parametrize("stream", [False, True], ids=["in memory", "streamed"])
@pytest.mark.parametrize("make", [lines, lambda: session(30)], ids=["constructed", "session"])
def test_a_log_gives_the_same_records_with_and_without_reuse(tmp_path, monkeypatch, stream, make):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(make()))
    if stream:
        monkeypatch.setattr(sources, "STREAM_LOGS_OVER", 0)
    fast = list(sources.open_many([path], "anthropic", errors=[]))
    with monkeypatch.context() as m:
        _slow(m)
        slow = list(sources.open_many([path], "anthropic", errors=[]))
    assert len(fast) == len(slow) > 5
    assert fast == slow   # Records, down to each Block's bytes, path, breakpoint and size
    assert [[b.tokens for b in r.call.request.blocks] for r in fast] == \
        [[b.tokens for b in r.call.request.blocks] for r in slow]


def test_a_session_log_renders_and_sizes_each_message_once(tmp_path, monkeypatch):
    """Work counts, not time: n requests, each a turn longer, render a few messages per line and
    share the sized blocks they repeat; before, every line rendered its tool_use turns again and
    made every block again (n² / 2 of each)."""
    n = 60
    path = tmp_path / "log.jsonl"
    path.write_text("".join(session(n)))
    calls = 0
    real = render.message_blocks

    def counted(*a, **k):
        nonlocal calls
        calls += 1
        return real(*a, **k)

    monkeypatch.setattr(render, "message_blocks", counted)
    records = anthropic_log.load_jsonl(path, anthropic_log.Sizer(len))
    assert len(records) == n
    # Per line: the new assistant and user messages and the one that loses the marker; every fifth
    # line two more, and the turns whose thinking leaves the prompt.
    assert calls <= 5 * n
    blocks = [b for r in records for b in r.call.request.blocks]
    assert len(blocks) > 40 * n
    assert len({id(b) for b in blocks}) <= 12 * n


def test_an_interleaved_conversation_shares_its_history_with_its_own_last_line():
    # A gateway's log: conversation c's turn k follows the other conversations' turn k, so its last
    # request is lines back. Its messages come from that line (issue 35: each line was parsed whole).
    lines, convs = [], [[{"role": "system", "content": "s " * 50}, {"role": "user", "content": f"task {c}"}]
                        for c in range(5)]
    for k in range(4):
        for c, messages in enumerate(convs):
            lines.append(json.dumps({"t": k, "request": {"model": "m", "messages": messages}}))
            messages += [{"role": "assistant", "content": f"a{c}.{k}"}, {"role": "user", "content": f"u{c}.{k}"}]
    parser = linejson.LineParser()
    got = [parser.loads(x) for x in lines]
    assert got == [json.loads(x) for x in lines]
    for c in range(5):   # line 5 + c is conversation c's second request; line c its first
        now, before = got[5 + c]["request"]["messages"], got[c]["request"]["messages"]
        assert all(a is b for a, b in zip(now, before))
    assert len(parser._recent) == 5   # each conversation's last line stands for it
    copy = parser.copy()   # goes on from the same lines
    nxt = json.dumps({"t": 9, "request": {"model": "m", "messages": convs[2]}})
    assert parser.loads(nxt)["request"]["messages"][5] is copy.loads(nxt)["request"]["messages"][5]


def test_the_recent_lines_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(linejson, "RECENT_LINES", 3)
    parser = linejson.LineParser()
    first = parser.loads('{"m": [{"a": 1}, {"b": 2}, {"c": 3}]}')
    for i in range(3):
        parser.loads(f'{{"m": [{{"x": {i}}}, {{"y": 2}}]}}')
    again = parser.loads('{"m": [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]}')
    assert again == json.loads('{"m": [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]}')
    assert again["m"][0] is not first["m"][0]   # four lines back: no longer kept
    monkeypatch.setattr(linejson, "RECENT_CHARS", 10)
    parser = linejson.LineParser()
    for i in range(5):
        parser.loads(f'{{"m": [{{"x": {i}}}, {{"y": 2}}]}}')
    assert len(parser._recent) == 1   # the previous line is always kept
