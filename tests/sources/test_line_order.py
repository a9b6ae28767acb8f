"""The same traffic in any file order gives the same numbers (issue 33, class 3).

A reader fixes a block's size the first time it sizes it, anchors later counts on earlier ones and
keeps the first of two lines with one id, all in the order it reads; the replay runs in time order.
Before, lines were read in file order: two lines swapped (their timestamps unchanged) dropped the
exact reads of a log from 8/8 to 7/8 and a reversed log gave 1/8. Lines are now read in time order,
ties by what they hold (prefixsim/sources/timeorder.py)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_fixtures import exact_log, timed_logs

from prefixsim import sources
from prefixsim.cli import main
from prefixsim.replay import replay
from prefixsim.replay.output import to_json

DATA = Path(__file__).resolve().parents[1] / "data"
SHIPPED = [(folder.name, fmt) for folder in sorted(DATA.glob("*-api")) for fmt in timed_logs(folder)]


def _replayed(path: Path, source: str | None = None) -> str:
    return json.dumps(to_json(replay(sources.open_many([path], source))), sort_keys=True)


def _stdout(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(["replay", *args])
    assert e.value.code == 0
    return capsys.readouterr().out


def _orders(lines: list[str]) -> list[list[str]]:
    shuffled = []
    for seed in range(3):
        s = lines[:]
        random.Random(seed).shuffle(s)
        shuffled.append(s)
    return [lines[::-1], *shuffled]


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "fmt"), SHIPPED, ids=[f"{f}-{k}" for f, k in SHIPPED])
def test_every_shipped_recording_as_a_log_replays_byte_identically_in_any_line_order(tmp_path, capsys, folder, fmt):
    # The shipped cassettes of each provider as timestamped JSONL logs (a pair of calls per
    # timestamp), then the same lines reversed and shuffled: the JSON document and the table are the
    # same bytes. Before, every one of them but the one-line log changed.
    lines = timed_logs(DATA / folder)[fmt]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(lines))
    want = [_stdout(capsys, str(path), "--source", fmt, "--format", f) for f in ("json", "table")]
    assert json.loads(want[0])["requests"]
    for order in _orders(lines):
        path.write_text("".join(order))
        assert [_stdout(capsys, str(path), "--source", fmt, "--format", f) for f in ("json", "table")] == want


@pytest.mark.parametrize("stream", [False, True], ids=["in memory", "streamed"])
@pytest.mark.parametrize("order", ["two lines swapped", "reversed"])
def test_a_log_out_of_file_order_keeps_every_exact_read(tmp_path, monkeypatch, stream, order):
    # The log: 8 requests whose observed reads the rules give exactly. Swapped, 7 of 8 were
    # exact before; reversed, 1 of 8, and the predicted cost moved.
    if stream:   # a log over STREAM_LOGS_OVER is re-read at its offsets: the same order
        monkeypatch.setattr(sources, "STREAM_LOGS_OVER", 0)
    lines = exact_log(8)
    path = tmp_path / "log.jsonl"
    path.write_text("".join(lines))
    base = replay(sources.open_many([path]))
    assert base.summary.prefixsim.exact == base.summary.prefixsim.compared == 8
    moved = lines[:2] + [lines[3], lines[2]] + lines[4:] if order == "two lines swapped" else lines[::-1]
    path.write_text("".join(moved))
    again = replay(sources.open_many([path]))
    assert again.summary.prefixsim.exact == 8
    assert again.summary.cost_predicted_usd == base.summary.cost_predicted_usd
    assert to_json(again) == to_json(base)


def test_lines_with_one_timestamp_are_ordered_by_what_they_hold(tmp_path):
    # Two requests of a conversation logged within one second: either file order is the same traffic.
    lines = exact_log(4, ids=False)
    stamped = [json.dumps({**json.loads(x), "timestamp": "2026-11-01T10:00:00Z"}) + "\n" for x in lines]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(stamped))
    want = _replayed(path)
    path.write_text("".join(stamped[::-1]))
    assert _replayed(path) == want
    # ... and ids made up for lines without one follow that order, not the file's
    assert [r["request_id"] for r in json.loads(want)["requests"]] == [f"{path}#{i}" for i in range(4)]


def test_a_log_with_a_line_without_time_keeps_its_file_order(tmp_path):
    # A line without a timestamp has its place in the log for a time: the file's order is all there
    # is, so such a log is read as written (and its out-of-order note says nothing new).
    lines = exact_log(3, ids=False)
    bare = [json.dumps({k: v for k, v in json.loads(x).items() if k != "timestamp"}) + "\n" for x in lines]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(bare))
    assert [r.line for r in sources.load(path)] == [1, 2, 3]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.permutations(list(range(6))))
def test_any_permutation_of_a_log_replays_the_same(tmp_path_factory, order):
    lines = exact_log(6)
    path = tmp_path_factory.mktemp("perm") / "log.jsonl"
    path.write_text("".join(lines))
    want = _replayed(path)
    path.write_text("".join(lines[i] for i in order))
    assert _replayed(path) == want
