"""`replay --workers N` / `--executor dask`: traffic split by cache namespace (and the streams that
join namespaces), replayed in shards and merged into exactly the serial output."""
import os

import pytest
from click.testing import CliRunner
from conftest import data_file
from walk_counting import Counting, count_command_walks

from prefixsim.cli import cli
from prefixsim.model import Block, Call, Layer, Request, Usage
from prefixsim.replay import WhatIf, shard
from prefixsim.sources.record import Record
from prefixsim.sources.traffic import Traffic

# Runs the command in a child interpreter, which a mutation run's switch does not reach.
pytestmark = pytest.mark.no_mutation

FOLDER = str(data_file("claude-code", "spotter", "short.jsonl").parent.parent)   # every Claude Code folder of tests/data: 546 requests


def _rec(i, stream, model, parent=None, workspace=""):
    req = Request(model=model, blocks=(Block(Layer.SYSTEM, b"system"),), workspace=workspace)
    return Record(Call(t=float(i), request=req, stream=stream, parent=parent), f"r{i}", "", Usage(0, 0, 0, 0, 0),
                  "log", i + 1)


def test_parts_follow_namespaces_and_the_streams_that_join_them():
    recs = [_rec(0, "a", "claude-sonnet-4-5"), _rec(1, "b", "claude-sonnet-4-5"),   # one namespace: together
            _rec(2, "c", "claude-opus-4-1"), _rec(3, "d", "claude-haiku-4-5"),
            _rec(4, "d", "claude-opus-4-1"),                                     # d switches model: joins c
            _rec(5, "e", "claude-haiku-3-5"), _rec(6, "f", "claude-sonnet-4", parent="e"),   # a fork joins its parent
            _rec(7, "g", "claude-sonnet-4-5", workspace="other")]                # another workspace: apart
    p = shard.plan(Traffic.of(recs), 8)
    assert p.parts == 4 and len(p.shards) == 4
    s = p.shard
    assert s[0] == s[1] and s[2] == s[3] == s[4] and s[5] == s[6]
    assert len({s[0], s[2], s[5], s[7]}) == 4
    # a what-if on one model puts every namespace of a workspace together
    both = shard.plan(Traffic.of(recs), 8, (WhatIf(), WhatIf(model="claude-sonnet-4-5")))
    assert both.parts == 2 and both.shard[:7] == (both.shard[0],) * 7 != both.shard[7:]


def test_largest_parts_first_to_the_least_loaded_shard():
    recs = [_rec(i, s, m) for i, (s, m) in enumerate(
        [("a", "claude-sonnet-4-5")] * 3 + [("b", "claude-opus-4-1")] * 2 + [("c", "claude-haiku-4-5")] * 2)]
    p = shard.plan(Traffic.of(recs), 2)
    assert p.shard == (0, 0, 0, 1, 1, 1, 1)


def _replay(*args):
    out = CliRunner().invoke(cli, ["replay", FOLDER, *args])
    assert out.exit_code == 0, out.output
    return out.output


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "table"])
def test_sharded_replay_is_byte_identical_to_serial(monkeypatch, fmt):
    serial = _replay("--format", fmt, "--ttl", "1h")
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    shards = []

    def mapper(workers, executor, scheduler, fn=None):
        run = fn or shard._replay_shard
        return lambda jobs: [shards.append(len(j[0])) or run(*j) for j in jobs]

    monkeypatch.setattr(shard, "_mapper", mapper)
    assert _replay("--format", fmt, "--ttl", "1h", "--workers", "2") == serial
    # JSON: a job per design (recorded, what-if) per shard; the text's money walks each shard once, the
    # two designs and the oracle its losses are measured against together (advise/one_pass.py)
    runs = 1 if fmt == "table" else 2
    assert len(shards) == 2 * runs and all(shards[k:k + 2] == shards[:2] for k in range(0, 2 * runs, 2))
    assert sum(shards[:2]) == 546


@pytest.mark.slow
def test_sharded_replay_in_worker_processes(monkeypatch):
    serial = _replay("--format", "json")
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    assert _replay("--format", "json", "--workers", "2") == serial


@pytest.mark.slow
def test_dask_cluster_gives_the_serial_output(monkeypatch):
    distributed = pytest.importorskip("distributed")
    serial = _replay("--format", "json")
    # two worker processes on loopback, as a cluster's are: the shards are pickled to them and back
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        assert _replay("--format", "json", "--executor", "dask", "--scheduler", cluster.scheduler_address,
                       "--workers", "3") == serial
        # the shards ran in the two processes, not in this one
        ran = client.run(lambda dask_worker: dask_worker.state.executed_count)
        assert sum(ran.values()) == 3   # three shards, each replayed in a worker process
        # the text's money: each shard walked once by a worker for both designs and the oracle
        assert _replay("--ttl", "1h", "--width", "100", "--executor", "dask", "--scheduler",
                       cluster.scheduler_address, "--workers", "3") == _replay("--ttl", "1h", "--width", "100")
        ran = client.run(lambda dask_worker: dask_worker.state.executed_count)
        assert sum(ran.values()) == 6


def test_one_namespace_is_replayed_in_this_process(monkeypatch):
    recs = [_rec(i, f"s{i}", "claude-sonnet-4-5") for i in range(5)]
    assert len(shard.plan(Traffic.of(recs), 4).shards) == 1
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    called = []
    monkeypatch.setattr(shard, "_mapper", lambda *a: called.append(a) or (lambda jobs: pytest.fail("sharded")))
    out = shard.replay_sharded(Traffic.of(recs), [WhatIf()], workers=2)
    assert len(out[0].rows) == 5


@pytest.mark.parametrize("args, needle", [(["--executor", "dask"], "needs --scheduler"),
                                          (["--scheduler", "tcp://127.0.0.1:1"], "applies to --executor dask"),
                                          (["--workers", "-3"], "--workers must be")])
def test_option_mistakes_exit_2(args, needle, capsys):
    from prefixsim.cli import main
    with pytest.raises(SystemExit) as e:
        main(["replay", FOLDER, *args])
    assert e.value.code == 2 and needle in capsys.readouterr().err


def _in_process(monkeypatch, jobs=None):
    """Shards replayed in this process, one after another (each job kept in `jobs` when given)."""
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)

    def mapper(workers, executor, scheduler, fn=None):
        run = fn or shard._replay_shard
        return lambda js: [(jobs.append(j) if jobs is not None else None) or run(*j) for j in js]

    monkeypatch.setattr(shard, "_mapper", mapper)


def test_what_the_whole_traffic_decides_reaches_every_shard(monkeypatch):
    """Output is priced only if every request's output count is final; the clock is the first request's."""
    from dataclasses import replace

    from prefixsim.replay import replay, to_json
    recs = [replace(_rec(i, s, m), output_final=i != 3, timestamp=f"2026-03-0{1 + i}T10:00:00Z")
            for i, (s, m) in enumerate([("a", "claude-sonnet-4-5"), ("b", "claude-opus-4-1")] * 2)]
    recs = [replace(r, call=replace(r.call, output_tokens=1000)) for r in recs]
    _in_process(monkeypatch)
    got = shard.replay_sharded(Traffic.of(recs), [WhatIf()], workers=2)[0]
    want = replay(Traffic.of(recs))
    assert not want.summary.output_in_cost and to_json(got) == to_json(want)


def test_a_failing_request_is_reported_as_serially(monkeypatch):
    from prefixsim.errors import UserError
    from prefixsim.replay import replay
    recs = [_rec(i, s, m) for i, (s, m) in enumerate([("a", "claude-sonnet-4-5"), ("b", "claude-opus-4-1")] * 2)]
    bad = WhatIf(model="no-such-model")
    with pytest.raises(UserError) as serial:
        replay(Traffic.of(recs), bad)
    _in_process(monkeypatch)
    with pytest.raises(UserError) as sharded:
        shard.replay_sharded(Traffic.of(recs), [WhatIf(), bad], workers=2)
    assert str(sharded.value) == str(serial.value)


def test_one_namespace_named_by_every_head_is_not_planned(monkeypatch):
    """Heads that all name one namespace make one part: no planning walk (it cost a whole replay's
    reading and calibration of a one-model transcript folder before the serial replay walked it again)."""
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    monkeypatch.setattr(shard, "plan", lambda *a: pytest.fail("planned"))
    one = Counting(Traffic.of([_rec(i, f"s{i}", "claude-sonnet-4-5") for i in range(6)]).parts)
    Counting.walks = 0
    assert shard.sharding(one, [WhatIf(), WhatIf(ttl="1h")], workers=2) is None
    assert Counting.walks == 0


def test_heads_that_differ_or_are_unknown_are_planned(monkeypatch):
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    two = Traffic.of([_rec(0, "a", "claude-sonnet-4-5"), _rec(1, "b", "claude-sonnet-4-5", workspace="w2")])
    p = shard.sharding(two, [WhatIf()], workers=2)
    assert p is not None and p.parts == 2
    # a head whose namespace is not known until walked (None) is planned too: here one part
    from dataclasses import replace
    unknown = Traffic.of([_rec(i, f"s{i}", "claude-sonnet-4-5") for i in range(3)])
    unknown.parts = [replace(pt, heads=[replace(h, ns=None) for h in pt.heads]) for pt in unknown.parts]
    assert shard.sharding(unknown, [WhatIf()], workers=2) is None   # planned: one part found by the walk


def test_a_transcript_head_names_its_model(monkeypatch):
    from prefixsim.commands.common import read_traffic

    traffic = read_traffic([str(data_file("claude-code", "spotter", "short.jsonl"))], None, False, partial=True)[0]
    names = {h.ns for pt in traffic.parts for h in pt.heads}
    # one person (its cwd: /home/marco/...): one account, named by none
    assert names == {("claude-code", r.call.request.model, "") for r in traffic}


def _counting(monkeypatch, make=None):
    """`prefixsim replay` with its traffic counted per walk, sharding forbidden (`make`: the test's own traffic)."""
    count_command_walks(monkeypatch, make)
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    monkeypatch.setattr(shard, "_mapper", lambda *a: pytest.fail("sharded"))


@pytest.mark.slow
def test_workers_on_one_model_replay_in_one_pass(monkeypatch):
    """`--workers 2` on a one-model transcript: no planning walk, and the recorded design, the
    what-if and the oracle in one pass, as serially (it walked four times before: plan, recorded,
    what-if, oracle)."""
    path = str(data_file("claude-code", "spotter", "short.jsonl"))
    serial = _replay_at(path, "--ttl", "1h")
    _counting(monkeypatch)
    assert _replay_at(path, "--ttl", "1h", "--workers", "2") == serial
    assert Counting.walks == 1


def test_workers_on_one_part_replay_in_one_pass_after_planning(monkeypatch):
    """Two models in one stream (a switch) are one part, found by the planning walk: then the three
    replays share one more pass."""
    recs = [_rec(i, "main", m) for i, m in enumerate(["claude-sonnet-4-5", "claude-opus-4-1"] * 3)]
    path = str(data_file("claude-code", "spotter", "short.jsonl"))
    _counting(monkeypatch, lambda: Traffic.of(recs))
    _replay_at(path, "--workers", "2")
    assert Counting.walks == 2


def _replay_at(path, *args):
    out = CliRunner().invoke(cli, ["replay", path, "--width", "100", *args])
    assert out.exit_code == 0, out.output
    return out.output


@pytest.mark.parametrize("cores, load, free", [(2, 0.0, 2), (2, 1.0, 2), (2, 1.6, 1), (2, 2.0, 1), (2, 7.5, 1),
                                               (8, 3.2, 5), (8, 0.0, 8), (1, 0.0, 1)])
def test_workers_zero_takes_the_cores_no_other_process_keeps_busy(monkeypatch, cores, load, free):
    """This process counts in the load while it reads: one core's worth of load is its own."""
    from prefixsim._perf import cores as module
    from prefixsim.scenario.parallel import local_workers

    monkeypatch.setattr(module.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(module.os, "getloadavg", lambda: (load, load, load))
    assert module.free_cores() == free
    assert local_workers(0, 100) == free and local_workers(-1, 1) == 1   # `run --workers 0` alike
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    assert shard.shard_count(0, "local", 10) == free
    assert shard.shard_count(2, "local", 10) == min(2, cores)   # a count asked for is taken, up to the cores


@pytest.mark.slow
def test_a_sharded_money_replay_walks_the_traffic_once_here(monkeypatch):
    """The text's money with --workers: this process walks the traffic once, for the plan, and each
    worker walks its shard once for the designs, the oracle and the losses (before: the plan, the
    oracle's shards again, and the attribution beside the rows, three walks here)."""
    serial = _replay_at(FOLDER, "--ttl", "1h")
    count_command_walks(monkeypatch)
    jobs = []
    _in_process(monkeypatch, jobs)
    assert _replay_at(FOLDER, "--ttl", "1h", "--workers", "2") == serial
    assert Counting.walks == 1
    assert len(jobs) == 2 and sum(len(j[0]) for j in jobs) == 546   # one job per shard, every request once


def test_a_sharded_money_replay_fails_as_the_serial_one(monkeypatch, capsys):
    from prefixsim.cli import main

    def code(*args):
        with pytest.raises(SystemExit) as e:
            main(["replay", FOLDER, "--model", "claude-nonexistent-9", *args])
        return e.value.code, capsys.readouterr().err.strip().splitlines()[-1]

    serial = code()
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    _in_process(monkeypatch)
    assert code("--workers", "2") == serial and serial[0] == 2
