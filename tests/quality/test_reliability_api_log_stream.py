"""Large request logs are walked by re-reading each line at its offset: the same replay, byte for
byte, with memory that follows the number of requests instead of the bytes of the bodies."""
import json
import random
import tracemalloc

import pytest

from prefixsim import sources
from prefixsim.replay import replay, to_json

WORDS = "cache prefix token block digest entry store chain request session fork agent tool result".split()


def write_log(path, requests, seed=3):
    """Independent sessions, each line a ~24 KB body of its own (nothing to share between lines)."""
    rng = random.Random(seed)
    with path.open("w") as fh:
        for i in range(requests):
            text = " ".join(rng.choice(WORDS) for _ in range(4000))
            body = {"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": f"agent {i}. {text}"}],
                    "messages": [{"role": "user", "content": [{"type": "text", "text": f"task {i}",
                                                               "cache_control": {"type": "ephemeral"}}]}]}
            fh.write(json.dumps({"timestamp": f"2026-11-30T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
                                 "request_id": f"req-{i}", "request": body,
                                 "usage": {"input_tokens": 3, "cache_creation_input_tokens": 5000,
                                           "cache_read_input_tokens": 0, "output_tokens": 10}}) + "\n")


def run(path):
    return json.dumps(to_json(replay(sources.open_many([path]))), sort_keys=True)


def test_streamed_and_in_memory_replays_are_identical(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    write_log(log, 40)
    in_memory = run(log)
    monkeypatch.setattr(sources, "STREAM_LOGS_OVER", 0)
    assert run(log) == in_memory


@pytest.mark.slow
@pytest.mark.parametrize("stream", [True])
def test_streamed_memory_follows_requests_not_bytes(tmp_path, monkeypatch, stream):
    monkeypatch.setattr(sources, "STREAM_LOGS_OVER", 0)
    peaks = {}
    for n in (60, 240):
        log = tmp_path / f"log{n}.jsonl"
        write_log(log, n)
        size = log.stat().st_size
        tracemalloc.start()
        traffic = sources.open_many([log])
        replay(traffic)
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # far below the bodies' bytes: nothing holds the parsed requests
        assert peaks[n] < 0.35 * size, (n, peaks[n], size)
    assert peaks[240] < 0.6 * 4 * peaks[60] + 2_000_000
