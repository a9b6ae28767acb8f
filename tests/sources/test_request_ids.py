"""Every request is replayed or named as skipped, with its reason (issue 33, class 4).

Before, two logs whose lines carry the same ids (0..4 each) replayed 6 of 10 requests, exit 0 and
nothing said: ids were deduplicated across paths, and an id 0 survived only because `0 or None`
read it as no id at all. A log's ids are now its own (a log is deduplicated as a file); a
transcript's ids are the provider's, and a call another path or transcript gave is named. A
projects folder whose sub-agent folder has no main transcript beside it replayed 3 of 7 requests:
those sub-agents are now read on their own, and said so."""
from __future__ import annotations

import json

import pytest
from cc_fixtures import Transcript
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_fixtures import exact_log

from prefixsim import sources
from prefixsim.sources.problems import collecting


def _with_ids(lines: list[str], ids: list[object]) -> list[str]:
    return [json.dumps({**json.loads(x), "id": i}) + "\n" for x, i in zip(lines, ids)]


def _write(path, lines):
    path.write_text("".join(lines))
    return path


def test_two_logs_numbering_their_lines_alike_replay_every_request(tmp_path):
    a = _write(tmp_path / "a.jsonl", _with_ids(exact_log(5), list(range(5))))
    b = _write(tmp_path / "b.jsonl", _with_ids(exact_log(10)[5:], list(range(5))))
    with collecting() as found:
        recs = sources.load_many([a, b])
    assert len(recs) == 10                      # was 6: b's 1..4 taken for a's
    assert not found.skipped and not found.notes
    assert sorted(r.request_id for r in recs) == sorted(["0", "1", "2", "3", "4"] * 2)   # 0 is an id
    assert {r.call.stream for r in recs if r.path == str(b)} == {f"{b.as_posix()}/main"}


def test_an_id_0_is_an_id_and_a_second_0_in_one_log_a_duplicate(tmp_path):
    path = _write(tmp_path / "a.jsonl", _with_ids(exact_log(3), [0, 0, 1]))
    with collecting() as found:
        recs = sources.load(path)
    assert [r.request_id for r in recs] == ["0", "1"]   # was three requests, two named by the file
    assert [str(p) for p in found.skipped] == [f"{path}:2: skipped: duplicate request id '0' (first at line 1)"]


def test_the_same_log_given_twice_is_read_once_and_said(tmp_path):
    path = _write(tmp_path / "a.jsonl", exact_log(3))
    with collecting() as found:
        recs = sources.load_many([path, tmp_path / "." / "a.jsonl"])
    assert len(recs) == 3
    assert [str(p) for p in found.notes] == [f"{tmp_path}/a.jsonl: the same file as {path}: read once"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["", "x", "0"])),
                         min_size=1, max_size=4), min_size=1, max_size=3))
def test_ids_colliding_across_logs_lose_no_request(tmp_path_factory, ids):
    # Any ids, any collisions between the logs: each log's requests are replayed but for the lines
    # it repeats an id of its own, and each of those is named.
    folder = tmp_path_factory.mktemp("ids")
    lines = exact_log(sum(map(len, ids)))
    paths, at = [], 0
    for k, own in enumerate(ids):
        paths.append(_write(folder / f"log{k}.jsonl", _with_ids(lines[at:at + len(own)], own)))
        at += len(own)
    with collecting() as found:
        recs = sources.load_many(paths)
    named = [[str(i) for i in own if i not in (None, "")] for own in ids]   # 0 and "0" are one id
    repeats = sum(len(n) - len(set(n)) for n in named)
    assert len(recs) == at - repeats
    assert len(found.skipped) == repeats and all("duplicate request id" in str(p) for p in found.skipped)


def _session(path, rids, t0=0):
    t = Transcript(session=path.stem)
    for k, rid in enumerate(rids):
        t.user(t0 + 10 * k, f"step {k}")
        t.call(t0 + 10 * k + 1, rid, read=0 if k == 0 else 4000, write=4000 if k == 0 else 100)
    t.write(path)


def test_sub_agents_without_their_main_transcript_are_replayed_and_named(tmp_path):
    proj = tmp_path / "proj"
    _session(proj / "s1.jsonl", ["r1", "r2", "r3"])
    _session(proj / "s2" / "subagents" / "agent-a1.jsonl", ["a1", "a2"], t0=100)
    _session(proj / "s2" / "subagents" / "agent-a2.jsonl", ["b1", "b2"], t0=200)
    with collecting() as found:
        recs = sources.load(proj)
    assert len(recs) == 7                       # was 3: s2's sub-agents were never read
    assert {r.call.stream for r in recs} == {"s1/main", "s2/agent-a1", "s2/agent-a2"}
    assert [str(p) for p in found.notes] == [
        f"{proj}/s2/subagents: sub-agent transcripts without their session's main transcript (s2.jsonl): "
        "replayed on their own"]


@pytest.mark.parametrize("how", ["one folder", "two paths"])
def test_a_call_two_transcripts_log_counts_once_and_is_named(tmp_path, how):
    # A resumed session repeats the calls before it under their requestId: one call, counted once.
    proj = tmp_path / "proj"
    _session(proj / "s1.jsonl", ["r1", "r2"])
    _session(proj / "s2.jsonl", ["r1", "r2", "r3"])
    with collecting() as found:
        recs = sources.load(proj) if how == "one folder" else sources.load_many([proj / "s1.jsonl", proj / "s2.jsonl"])
    assert sorted(r.request_id for r in recs) == ["r1", "r2", "r3"]
    said = [str(p) for p in found.notes]
    assert len(said) == 1 and said[0].startswith(f"{proj}/s2.jsonl:") and "2 requests already read from" in said[0]
