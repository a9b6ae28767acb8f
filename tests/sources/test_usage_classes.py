"""Observed usage is checked as it is read, by one rule every reader shares (issue 33, class 5;
docs/rules.md#observed-usage-as-read).

Before, a transcript usage with `cache_creation.ephemeral_1h_input_tokens` 1,040 and no
`cache_creation_input_tokens` became 5m = -1,040 and 1h = +1,040: "write obs 0", priced with a
negative class, and the next request sized 1,040 short. The total is now the sum of its classes;
classes that contradict their total skip the line, named."""
from __future__ import annotations

import re

import pytest
from cc_fixtures import Transcript

from prefixsim import sources
from prefixsim.errors import UserError
from prefixsim.model import Usage
from prefixsim.replay import replay
from prefixsim.sources import anthropic_log, bedrock_log
from prefixsim.sources.claude_code.message import usage_of
from prefixsim.sources.problems import collecting
from prefixsim.sources.usage import cache_writes

NAMES = ("total", "5m", "1h")


@pytest.mark.parametrize(("total", "w5m", "w1h", "want"), [
    (None, None, None, (0, 0)),
    (900, None, None, (900, 0)),       # no split: every write at 5m (older logs)
    (None, None, 1040, (0, 1040)),     # the line: the total is the sum of its classes
    (None, 300, 1040, (300, 1040)),
    (900, None, 200, (700, 200)),      # one class: the other is the rest of the total
    (900, 200, None, (200, 700)),
    (900, 400, 500, (400, 500)),
    (900, 0, 0, (900, 0)),             # a split left at zero: as no split
])
def test_the_writes_by_ttl_from_a_total_and_its_classes(total, w5m, w1h, want):
    assert cache_writes(total, w5m, w1h, NAMES) == want


@pytest.mark.parametrize(("total", "w5m", "w1h", "said"), [
    (100, None, 200, "1h is 200, more than total 100"),
    (100, 300, None, "5m is 300, more than total 100"),
    (500, 300, 400, "total is 500 but 5m 300 + 1h 400 = 700"),
    (None, -5, 10, "5m is negative"),
])
def test_classes_that_contradict_their_total_are_refused(total, w5m, w1h, said):
    with pytest.raises(UserError, match=re.escape(said)):
        cache_writes(total, w5m, w1h, NAMES)


def test_a_transcript_write_given_only_by_its_1h_class_is_that_write(tmp_path):
    t = Transcript()
    t.user(0, "start")
    t.call(1, "r1", read=0, write=5000)
    t.user(10, "next")
    t.call(11, "r2", read=5000, write=1040, ttl="1h")
    t.user(20, "again")
    t.call(21, "r3", read=6040, write=80, ttl="1h")
    for line in t.lines:   # r2 as the line: the classes, not their total
        if line.get("requestId") == "r2":
            u = line["message"]["usage"]
            u.pop("cache_creation_input_tokens", None)
            u["cache_creation"].pop("ephemeral_5m_input_tokens", None)
    path = tmp_path / "s.jsonl"
    t.write(path)
    with collecting() as found:
        rows = replay(sources.load(path)).rows
    assert not found.skipped
    assert [(r.observed.cache_write_5m, r.observed.cache_write_1h) for r in rows] == [(5000, 0), (0, 1040), (0, 80)]
    # the next request is sized from it: not 1,040 short
    assert rows[2].predicted.cache_read == rows[2].observed.cache_read == 6040


def test_every_reader_takes_the_same_rule():
    # The Messages API's usage in an API log and in a transcript, and Converse's cacheDetails.
    u = {"input_tokens": 3, "cache_creation": {"ephemeral_1h_input_tokens": 1040}, "cache_read_input_tokens": 7,
         "output_tokens": 2}
    want = Usage(input_tokens=3, cache_write_1h=1040, cache_read=7, output_tokens=2)
    assert anthropic_log.observed_usage(u) == usage_of(u) == want
    converse = {"inputTokens": 3, "cacheReadInputTokens": 7, "outputTokens": 2,
                "cacheDetails": [{"inputTokens": 1040, "ttl": "1h"}]}   # no cacheWriteInputTokens
    assert bedrock_log.observed_usage(converse) == want                     # was refused: 1,040 > 0
    bad = {**u, "cache_creation_input_tokens": 100}
    for read in (anthropic_log.observed_usage, usage_of):
        with pytest.raises(UserError, match="contradict each other"):
            read(bad)
