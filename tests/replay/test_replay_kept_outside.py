"""A prefix kept warm outside the data (docs/rules.md#a-prefix-kept-warm-outside-the-data).

Claude Code marks the cross-session part of its system prompt with a global cache scope, so other
users' traffic can keep it cached while nothing in a user's own data does. Whether it is warm is
learned from the data: a session that started when nothing in the data kept it either read it or
read nothing."""

from cc_fixtures import Transcript
from conftest import replay_says

from prefixsim.replay import replay
from prefixsim.sources import load


def _folder(tmp_path, reads, model="claude-sonnet-4-6"):
    """One session an hour apart per entry of `reads`: its first request's read of a 20,000-token
    prompt (11,000: the cross-session prefix, 0: nothing), then a second request a minute later."""
    for i, read in enumerate(reads):
        s = Transcript(session=f"s{i}")
        s.user(3600 * i, "hello")
        s.call(3600 * i, f"s{i}a", read, 20000 - read, model=model)
        s.user(3600 * i + 60, "more")
        s.call(3600 * i + 60, f"s{i}b", 20000, 500, model=model)
        for line in s.lines:
            line["version"] = "2.1.90"
        s.write(tmp_path / "proj" / f"s{i}.jsonl")
    return tmp_path / "proj"


def _first_reads(folder):
    return [r.predicted.cache_read for r in replay(load(folder, False)).rows if r.request_id.endswith("a")]


def test_a_prefix_read_cold_again_and_again_is_taken_as_kept_warm(tmp_path):
    # s0 shows the prefix (11,000) read with nothing in the data keeping it; s1 shows it again; from
    # s2 on, the replay takes others' traffic to keep it: each first request reads it (before: 0)
    assert _first_reads(_folder(tmp_path, [11000] * 5)) == [0, 0, 11000, 11000, 11000]


def test_reads_of_nothing_outweigh_it(tmp_path):
    # as many cold first requests read nothing as read it: nothing is assumed warm
    assert _first_reads(_folder(tmp_path, [11000, 0, 11000, 0, 11000, 0])) == [0] * 6


def test_the_output_says_how_many_requests_it_moved(tmp_path):
    summary, text, with_requests = replay_says(_folder(tmp_path, [11000] * 4))
    assert summary["kept_outside_requests"] == 2
    assert "2 requests read a prefix kept warm outside the data" in text
    assert "global cache scope" in with_requests


def test_only_the_latest_outcomes_decide(tmp_path):
    # how many others run a version and model changes as they upgrade: once the latest cold requests
    # read nothing, the prefix is no longer taken as kept (all of them counted, 8 reads outweighed 3)
    reads = _first_reads(_folder(tmp_path, [11000] * 8 + [0] * 4))
    assert reads[2:10] == [11000] * 8 and reads[10:] == [0, 0]
