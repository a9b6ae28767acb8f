"""One long Claude Code stream costs per request what the request adds, not its history (issue 16):
its requests refer to the stream's blocks instead of copying them, and the runner cuts and extends
the stream's running totals and known positions instead of copying them. No timing: what is held
and shared is counted, and the outcomes are compared with flat copies."""
from __future__ import annotations

import dataclasses
import json

import pytest
from cc_fixtures import Transcript

from prefixsim import sources
from prefixsim.core import sharedseq
from prefixsim.core import simulator as runner
from prefixsim.replay import replay, to_json
from prefixsim.sources.claude_code import calibrate, stream


def long_session(tmp_path, requests=150):
    """A session that never compacts, with a TTL switch halfway and a pause past the 5-minute TTL."""
    t = Transcript()
    size, now = 20_000, 0.0
    for i in range(requests):
        t.user(now, f"step {i}")
        ttl = "1h" if i >= requests // 2 else "5m"
        t.call(now, f"r{i}", size if i else 0, 300 if i else size, uncached=2, ttl=ttl)
        size += 300 if i else 0
        now += 30 if i != requests // 3 else 400
    return t.write(tmp_path / "p" / "-home-u" / "s1.jsonl").parent.parent


def records(root):
    return list(sources.open_many([root], None, errors=[]))


def test_a_long_streams_requests_share_its_blocks_by_reference(tmp_path):
    recs = records(long_session(tmp_path))
    blocks = [r.call.request.blocks for r in recs]
    long_ = [b for b in blocks if len(b) > sharedseq.MIN_SHARED + 2]
    assert len(long_) > 50
    assert all(isinstance(b, sharedseq.PrefixTuple) and len(b.tail) <= 2 for b in long_)
    # one base per stretch marked with one TTL (the switch to 1h marks the static entries anew)
    assert len({id(b.base) for b in long_}) == 2
    # each request is its marked static entries, the history, its last history block marked, its tail
    for b in long_:
        flat = tuple(b)
        assert [i for i, x in enumerate(flat) if x.breakpoint] == [0, 1, len(flat) - 2]
        assert flat[-1].path == "tail after the last breakpoint"


def test_sharing_and_cutting_in_place_change_no_outcome(tmp_path, monkeypatch):
    root = long_session(tmp_path)
    result = replay(sources.open_many([root], None, errors=[]))
    assert sum(r.predicted.cache_read for r in result.rows) > 0
    shared = json.dumps(to_json(result), sort_keys=True)
    # flat tuples per request, and a runner whose views copy the stream's lists before cutting them
    monkeypatch.setattr(stream, "MIN_SHARED", 10**9)
    real = runner.view

    def copying(req, d0, ref, own, *a, **k):
        if ref is not None:
            ref = dataclasses.replace(ref, cum=list(ref.cum), known=list(ref.known))
        return real(req, d0, ref, own, *a, **k)

    monkeypatch.setattr(runner, "view", copying)
    flat = json.dumps(to_json(replay(sources.open_many([root], None, errors=[]))), sort_keys=True)
    assert shared == flat


@pytest.mark.parametrize("which", ["cum", "known"])
def test_a_streams_next_view_extends_its_lists_in_place(tmp_path, which):
    recs = records(long_session(tmp_path, 40))
    sim = runner.Simulator("anthropic", tokenizer="approx")
    held = []   # held, so no list's id is reused by the next
    for r in recs[1:]:
        sim.step(r.call)
        held.append(getattr(sim._last["main"], which))
    assert len({id(x) for x in held}) == 1   # before: a new list per request, a copy of the whole history


@pytest.mark.parametrize("folder", ["spotter", "claude-code-viewer", "scripts-and-tools", "claude-code-sidekick",
                                    "claude-reliability", "entire-cli"])
def test_real_sessions_give_the_same_outcome_as_requests_built_afresh(folder, monkeypatch):
    """Rewinds, compactions, sub-agents and re-measured static entries replace a stream's list rather
    than cut it, and reset its shared base: every request equals one built afresh from the stream's
    blocks (a flat copy, breakpoints marked on it), so the JSON is the same."""
    from conftest import data_file

    root = data_file("claude-code", folder)
    shared = json.dumps(to_json(replay(sources.open_many([root], None, errors=[]))), sort_keys=True)

    def afresh(st, ttl, tail):
        return (*stream._mark(st.blocks, ttl), *tail)

    monkeypatch.setattr(calibrate, "_request_blocks", afresh)
    flat = json.dumps(to_json(replay(sources.open_many([root], None, errors=[]))), sort_keys=True)
    assert shared == flat
