"""Big logs are streamed: reading one keeps memory far below its size (tracemalloc's peak).

CI reads a few MB of each kind and asserts the bound; PREFIXSIM_STREAM_MB=300 reads a
multi-hundred-MB file of each kind the same way and prints the peak next to the file size (see
README, Reliability: a transcript's peak grows with requests squared, not with the file).
"""
import json
import os
import tracemalloc

import pytest

from prefixsim.sources import load
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
