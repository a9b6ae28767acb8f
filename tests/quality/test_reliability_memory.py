"""Big logs are streamed: reading one keeps memory far below its size (tracemalloc's peak), and a
replay's memory grows with its requests, not with requests x history.

CI reads a few MB of each kind and asserts the bound; PREFIXSIM_STREAM_MB=300 reads a
multi-hundred-MB file of each kind the same way and prints the peak next to the file size (see
README, Reliability: `load` holds every request with its history; `prefixsim replay` walks them).
"""
import json
import os
import tracemalloc

import pytest

from prefixsim.replay import replay
from prefixsim.sources import load, open_many
from prefixsim.sources.problems import collecting

MB = float(os.environ.get("PREFIXSIM_STREAM_MB", "6"))
#: Peak traced memory while reading, as a share of the file's size (a reader that held the file would
#: need more than the file itself: parsed JSON is several times larger than its text).
MAX_SHARE = 0.5


def _anthropic_log(path, size):
    """A conversation that grows one turn per request: every line repeats the whole history, as
    request logs do, so the file grows quadratically while its distinct content grows linearly."""
    turn = 4000
    history, written, i, lines = [], 0, 0, 0
    with path.open("w") as fh:
        while written < size:
            history.append({"role": "user" if i % 2 == 0 else "assistant",
                            "content": f"turn {i}: " + ("lorem ipsum dolor sit amet " * (turn // 27))})
            i += 1
            if history[-1]["role"] != "user":
                continue
            line = json.dumps({"id": f"r{i}", "timestamp": 1_790_000_000 + i,
                               "request": {"model": "claude-sonnet-4-5", "max_tokens": 10,
                                           "system": [{"type": "text", "text": "terse",
                                                       "cache_control": {"type": "ephemeral"}}],
                                           "messages": history},
                               "usage": {"input_tokens": 10, "cache_read_input_tokens": 0,
                                         "cache_creation_input_tokens": 0, "output_tokens": 5}}) + "\n"
            fh.write(line)
            written += len(line)
            lines += 1
    return lines


def _transcript(path, size):
    """A Claude Code session whose tool results are large (the usual reason a transcript is big)."""
    written, n, parent = 0, 0, None
    with path.open("w") as fh:
        while written < size:
            stamp = f"2026-11-30T{10 + n // 3600 % 10:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
            user = {"type": "user", "sessionId": "s", "uuid": f"u{n}", "parentUuid": parent, "timestamp": stamp,
                    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                                             "content": "x" * 50_000}]}}
            asst = {"type": "assistant", "sessionId": "s", "uuid": f"a{n}", "parentUuid": f"u{n}",
                    "timestamp": stamp, "requestId": f"req{n}",
                    "message": {"id": f"m{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                                "content": [{"type": "text", "text": "ok"}],
                                "usage": {"input_tokens": 5, "cache_read_input_tokens": 1000 * n,
                                          "cache_creation_input_tokens": 1000, "output_tokens": 2}}}
            for o in (user, asst):
                line = json.dumps(o) + "\n"
                fh.write(line)
                written += len(line)
            parent, n = f"a{n}", n + 1
    return n


@pytest.mark.parametrize("make,source", [(_anthropic_log, "anthropic"), (_transcript, "claude-code")])
def test_reading_a_big_log_keeps_memory_bounded(tmp_path, make, source):
    path = tmp_path / "big.jsonl"
    requests = make(path, int(MB * 1e6))
    size = path.stat().st_size
    load(path, source)   # warm up: imports and tokenizer tables are not the reading
    tracemalloc.start()
    try:
        with collecting(strict=True):
            records = load(path, source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(records) == requests
    print(f"{source}: {size / 1e6:.0f} MB file, {requests} requests, peak {peak / 1e6:.1f} MB traced")
    if "PREFIXSIM_STREAM_MB" not in os.environ:
        assert peak < MAX_SHARE * size, (peak, size)


def _conversation(path, requests):
    """One Claude Code conversation that never compacts: request i carries i history blocks."""
    with path.open("w") as fh:
        for n in range(requests):
            stamp = f"2026-11-30T{10 + n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
            fh.write(json.dumps({"type": "user", "sessionId": "s", "uuid": f"u{n}", "parentUuid": f"a{n - 1}",
                                 "timestamp": stamp, "message": {"role": "user", "content": "go on"}}) + "\n")
            fh.write(json.dumps({"type": "assistant", "sessionId": "s", "uuid": f"a{n}", "parentUuid": f"u{n}",
                                 "timestamp": stamp, "requestId": f"req{n}",
                                 "message": {"id": f"m{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                                             "content": [{"type": "text", "text": "ok"}],
                                             "usage": {"input_tokens": 5, "cache_read_input_tokens": 1000 * n,
                                                       "cache_creation_input_tokens": 1000,
                                                       "output_tokens": 2}}}) + "\n")


def _replay_peak(path):
    tracemalloc.start()
    try:
        rows = replay(open_many([path])).rows
        return tracemalloc.get_traced_memory()[1], len(rows)
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_replay_memory_grows_with_requests_not_history(tmp_path):
    """4x the requests of one long conversation: a replay that held every request (8 bytes per
    history block each, and a digest list per request in the store's read log) would need ~10x the
    memory here and 16x in the limit; walking them keeps it near 4x (rows and per-stream state)."""
    n = 250
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    _conversation(small, n)
    _conversation(big, 4 * n)
    replay(open_many([small]))   # warm up, untraced: imports and tokenizer tables are not the replay
    a, rows_a = _replay_peak(small)
    b, rows_b = _replay_peak(big)
    assert (rows_a, rows_b) == (n, 4 * n)
    assert b < 5.5 * a, (a, b, b / a)
