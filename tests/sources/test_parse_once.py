"""A request log already in time order is parsed once, not twice (issue 35): the first pass's values
(its order keys need every line parsed) are the second's while they fit `timeorder.HOLD`, and the
records, skips and replays are those of the two passes whatever the order, the bad lines and the room."""
from __future__ import annotations

import json

import pytest
from log_fixtures import exact_log

from prefixsim import sources
from prefixsim.replay import replay
from prefixsim.replay.output import to_json
from prefixsim.sources import linejson, timeorder
from prefixsim.sources.problems import collecting


def openai_log(conversations: int = 3, turns: int = 4) -> list[str]:
    """A gateway's Chat Completions log: conversations interleaved in time, each line the whole
    conversation so far, with usage."""
    convs = [[{"role": "system", "content": "You are terse. " * 80},
              {"role": "user", "content": f"task {c}: " + "plan the work " * (40 + c)}] for c in range(conversations)]
    out = []
    for k in range(turns):
        for c, messages in enumerate(convs):
            sec = k * 20 + c
            prompt = sum(len(json.dumps(m)) for m in messages) // 4
            out.append(json.dumps({
                "timestamp": f"2026-11-01T10:{sec // 60:02d}:{sec % 60:02d}Z",
                "request": {"model": "gpt-4o", "messages": messages, "prompt_cache_key": f"conv-{c}"},
                "response": {"id": f"chatcmpl-{c}-{k}", "choices": [{"index": 0, "message": {
                    "role": "assistant", "content": f"step {k} " * 30}}]},
                "usage": {"prompt_tokens": prompt, "completion_tokens": 60,
                          "prompt_tokens_details": {"cached_tokens": prompt // 2 // 128 * 128}}}) + "\n")
            messages += [{"role": "assistant", "content": f"step {k} " * 30},
                         {"role": "user", "content": f"go on {k} " * (20 + k)}]
    return out


def _bad(lines: list[str], at: int) -> list[str]:
    """`lines` with, before line `at`: a line that is no JSON, one that is no request, one whose
    timestamp cannot be read (its reader still reads its body first) and a blank one."""
    body = json.loads(lines[at])
    return [*lines[:at], "{not json\n", '{"event": "heartbeat"}\n',
            json.dumps({**body, "timestamp": "yesterday"}) + "\n", "\n", *lines[at:]]


def _untimed(lines: list[str]) -> list[str]:
    """The last line without its timestamp: the file's order is the replay's."""
    last = {k: v for k, v in json.loads(lines[-1]).items() if k != "timestamp"}
    return [*lines[:-1], json.dumps(last) + "\n"]


SHAPES = {
    "in order": lambda lines: lines,
    "bad lines inside": lambda lines: _bad(lines, len(lines) // 2),
    "bad lines first": lambda lines: _bad(lines, 0),
    "reversed": lambda lines: lines[::-1],
    "two lines swapped": lambda lines: [lines[1], lines[0], *lines[2:]],
    "reversed, one line untimed": lambda lines: _untimed(lines[::-1]),
}
LOGS = {"openai": openai_log, "anthropic": lambda: exact_log(8)}


def _read(path, monkeypatch, hold: int) -> tuple[list, str, list[str]]:
    """(the records, the replay's JSON document, the skipped lines) with `hold` bytes held."""
    monkeypatch.setattr(timeorder, "HOLD", hold)
    with collecting() as found:
        records = list(sources.open_many([path], errors=[]))
    doc = json.dumps(to_json(replay(records)), sort_keys=True)
    return records, doc, [str(p) for p in [*found.skipped, *found.notes]]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("log", LOGS)
def test_holding_the_first_pass_values_changes_nothing(tmp_path, monkeypatch, log, shape):
    lines = SHAPES[shape](LOGS[log]())
    path = tmp_path / "log.jsonl"
    path.write_text("".join(lines))
    size = path.stat().st_size
    twice = _read(path, monkeypatch, 0)   # every line read again: the two passes as before
    assert len(twice[0]) >= 8
    if shape.startswith("bad"):
        assert len(twice[2]) >= 3
    for hold in (size // 3, size // 2 + 7, size):   # some of the lines held, then all of them
        assert _read(path, monkeypatch, hold) == twice


def _counted(monkeypatch) -> list[int]:
    calls = [0]
    loads = linejson.LineParser.loads

    def counting(self, s):
        calls[0] += 1
        return loads(self, s)

    monkeypatch.setattr(linejson.LineParser, "loads", counting)
    return calls


@pytest.mark.parametrize("log", LOGS)
def test_a_log_in_time_order_is_parsed_once(tmp_path, monkeypatch, log):
    # Work counts, not time: before, every line was parsed by the order pass and again by the reader.
    lines = LOGS[log]()
    path = tmp_path / "log.jsonl"
    path.write_text("".join(lines))
    calls = _counted(monkeypatch)
    assert len(sources.open_many([path], errors=[])) == len(lines)
    assert calls[0] == len(lines)
    # Out of order, the order is known only once every line is read: each line is read again.
    path.write_text("".join(lines[::-1]))
    calls[0] = 0
    assert len(sources.open_many([path], errors=[])) == len(lines)
    assert calls[0] == 2 * len(lines)
    # Past the room held, the lines are read again, the first pass's parser going on from the last held.
    path.write_text("".join(lines))
    monkeypatch.setattr(timeorder, "HOLD", sum(_fresh(lines)[:3]))
    calls[0] = 0
    assert len(sources.open_many([path], errors=[])) == len(lines)
    assert calls[0] == 2 * len(lines) - 3


def _fresh(lines: list[str]) -> list[int]:
    """What holding each line's value costs after the lines before it (`LineParser.fresh`)."""
    parser = linejson.LineParser()
    out = []
    for line in lines:
        parser.loads(line)
        out.append(parser.fresh)
    return out


@pytest.mark.parametrize("log", LOGS)
def test_a_line_costs_what_it_does_not_share_with_the_lines_before(log):
    # A log that repeats its history: each line costs its new messages, not its bytes, so a log far
    # larger than the room held is parsed once (the 110 MB log of bench/jsonl_throughput.py was
    # parsed again past its first 64 MB).
    lines = LOGS[log]()
    fresh = _fresh(lines)
    assert fresh[0] == len(lines[0])   # the first line shares nothing
    assert sum(fresh) < sum(map(len, lines)) / 2
    assert all(f < len(x) for f, x in zip(fresh[1:], lines[1:]))
    parser = linejson.LineParser()
    parser.loads(lines[0])
    parser.loads("[1, 2]")   # not an object: json.loads parses it, and it is all new
    assert parser.fresh == len("[1, 2]")


def test_a_log_larger_than_the_room_is_parsed_once_when_it_repeats_itself(tmp_path, monkeypatch):
    lines = openai_log(3, 6)
    path = tmp_path / "log.jsonl"
    path.write_text("".join(lines))
    monkeypatch.setattr(timeorder, "HOLD", sum(_fresh(lines)) + 1)
    assert timeorder.HOLD < path.stat().st_size / 2
    calls = _counted(monkeypatch)
    assert len(sources.open_many([path], errors=[])) == len(lines)
    assert calls[0] == len(lines)
