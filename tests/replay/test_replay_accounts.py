"""Caches are an account's (sources/claude_code/accounts.py, issue 30): transcripts of several people's
machines gathered in one folder are several accounts, and one person's session never reads the prefix
another's wrote, however equal the bytes. Shaped on entireio/cli, eight people's Claude Code sessions in
one repository: a first request within the TTL of only another person's session read nothing in 9 of
13, and never what that session had written."""
from cc_fixtures import sessions_folder

from prefixsim.replay import replay
from prefixsim.sources import load

# (session, working directory, [(t, request id, read, write)]): every first request sends 20,000 tokens
# before its last breakpoint, 5,000 of them the prefix every session of this version shares.
PLAN = [
    ("a", "/Users/alice/work/cli", [(0, "a0", 5000, 15000), (30, "a1", 20000, 300)]),
    ("e", "/Users/alice/work/cli", [(40, "e0", 5000, 15000)]),                          # alice writes the prefix
    ("b", "/Users/bob/src/cli", [(60, "b0", 0, 20000), (90, "b1", 20000, 300)]),      # bob's account: cold
    ("c", "/Users/alice/work/cli", [(120, "c0", 5000, 15000)]),                        # alice's: e's prefix
    ("d", "/home/bob/cli", [(150, "d0", 5000, 15000)]),                                # bob again: b's prefix
]


def _rows(tmp_path, plan=PLAN):
    return {r.request_id: r for r in replay(load(sessions_folder(tmp_path, plan, "2.1.20"), False)).rows}


def test_one_persons_session_does_not_read_anothers_prefix(tmp_path):
    rows = _rows(tmp_path)
    assert rows["b0"].observed.cache_read == 0
    assert rows["b0"].predicted.cache_read == 0          # the old code read alice's 5,000 here
    assert rows["c0"].predicted.cache_read == 5000       # alice's own prefix, written by e
    assert rows["d0"].predicted.cache_read == 5000       # bob's, written by b (a Linux home: the same person)
    assert rows["b0"].cause.kind == "cold"


def test_one_person_in_many_folders_is_one_account(tmp_path):
    plan = [(n, cwd.replace("/Users/bob/", "/Users/alice/").replace("/home/bob/", "/Users/alice/"), calls)
            for n, cwd, calls in PLAN]
    rows = _rows(tmp_path, plan)
    assert rows["b0"].predicted.cache_read == 5000       # a's prefix: one account, as before
    assert {r.request_id: r.predicted.cache_read for r in rows.values()} == \
        {"a0": 0, "a1": 20000, "e0": 0, "b0": 5000, "b1": 20000, "c0": 5000, "d0": 5000}


def test_calls_that_name_no_home_leave_the_folder_one_account(tmp_path):
    """A Windows drive or a container's /workspaces names nobody: such a call may be anyone's, so the
    folder is not split (Eduardodmb/ClaudeWork's drive-letter sessions read what sessions under two
    home directories wrote)."""
    plan = [(n, "S:\\Repos\\cli" if n == "d" else cwd, calls) for n, cwd, calls in PLAN]
    rows = _rows(tmp_path, plan)
    assert rows["b0"].predicted.cache_read == 5000   # alice's and bob's sessions share one cache again
    assert rows["d0"].predicted.cache_read == 5000


def test_a_folder_without_home_directories_is_one_account(tmp_path):
    plan = [(n, "/workspace/cli", calls) for n, _, calls in PLAN]
    assert _rows(tmp_path, plan)["b0"].predicted.cache_read == 5000


def test_accounts_are_separate_namespaces_a_replay_can_shard(tmp_path, monkeypatch):
    from prefixsim.commands.common import read_traffic
    from prefixsim.replay import WhatIf, shard

    _rows(tmp_path)
    traffic = read_traffic([str(tmp_path / "proj")], None, False, partial=True)[0]
    assert {h.ns[2] for pt in traffic.parts for h in pt.heads} == {"alice", "bob"}
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    p = shard.sharding(traffic, [WhatIf()], workers=2)
    assert p is not None and p.parts == 2


def _cli(tmp_path, plan, *extra):
    from click.testing import CliRunner

    from prefixsim.cli import cli

    folder = sessions_folder(tmp_path, plan, "2.1.20")
    out = CliRunner().invoke(cli, ["replay", str(folder), "--width", "400", *extra])
    assert out.exit_code == 0, out.output
    return out.output


def test_the_output_says_the_folder_was_replayed_as_several_accounts(tmp_path):
    """A folder split by person is said so, naming them: the user sees why one session did not read
    another's prefix, and that people sharing one API account would read it (the split is inferred)."""
    text = _cli(tmp_path / "t", PLAN)
    assert "The sessions name 2 people's home directories (alice, bob): replayed as 2 accounts" in text
    assert "people sharing one API account would share it" in text
    import json
    doc = json.loads(_cli(tmp_path / "j", PLAN, "--format", "json"))
    assert doc["summary"]["accounts"] == ["alice", "bob"]


def test_sharded_by_account_the_output_still_names_every_account(tmp_path, monkeypatch):
    """Each shard holds one account: the merged result names both, as the serial one does."""
    import json

    from prefixsim.replay import shard
    monkeypatch.setattr(shard, "MIN_SHARDED", 0)
    serial = json.loads(_cli(tmp_path / "s", PLAN, "--format", "json"))
    sharded = json.loads(_cli(tmp_path / "p", PLAN, "--format", "json", "--workers", "2"))
    assert sharded["summary"]["accounts"] == serial["summary"]["accounts"] == ["alice", "bob"]


def test_one_account_names_none(tmp_path):
    plan = [(n, "/workspace/cli", calls) for n, _, calls in PLAN]
    assert "home directories" not in _cli(tmp_path / "t", plan)
    import json
    assert json.loads(_cli(tmp_path / "j", plan, "--format", "json"))["summary"]["accounts"] == []
