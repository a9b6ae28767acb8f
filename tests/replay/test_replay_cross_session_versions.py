"""Versions of Claude Code's cross-session prefix (sources/claude_code/generations.py, issue 30): a
session whose first request read nothing of the prefix another session kept cached carries other bytes
(its folder's MCP servers, its launch settings), and so do the sessions launched after it in the same
folder; a later first request there that reads the old prefix, where nobody wrote the new one, undoes it.
Shaped on njdamstra/claude-code-config (2.0.x), where sessions started in one folder read nothing of
a prefix sessions in the others kept warm."""
from cc_fixtures import sessions_folder
from prefixsim.replay import replay
from prefixsim.sources import load

# (session, launch folder, [(t, request id, read, write)]): every first request sends 20,000 tokens
# before its last breakpoint; 5,000 of them are the cross-session prefix (what a0 reads). a's read
# teaches that size; w, started after, writes it as an entry of its own and keeps it cached.
PLAN = [
    ("a", "/work/alpha", [(0, "a0", 5000, 15000)]),
    ("w", "/work/alpha", [(20, "w0", 5000, 15000), (30, "w1", 20000, 300), (200, "w2", 20300, 300),
                          (400, "w3", 20600, 300), (590, "w4", 20900, 300), (690, "w5", 21200, 300)]),
    ("b", "/work/alpha", [(100, "b0", 0, 20000)]),     # w's prefix cached, yet nothing read: other bytes
    ("c", "/work/alpha", [(250, "c0", 0, 20000)]),     # launched after b in b's folder: b's bytes
    ("d", "/work/beta", [(260, "d0", 5000, 15000)]),   # another folder keeps w's version
    ("e", "/work/alpha", [(600, "e0", 5000, 15000)]),  # b's and c's version cold: it read w's
    ("f", "/work/alpha", [(700, "f0", 5000, 15000)]),  # after e0 is logged: w's version again
]


def _folder(tmp_path, plan=PLAN):
    return sessions_folder(tmp_path, plan, "2.0.27")


def _rows(tmp_path, plan=PLAN):
    return {r.request_id: r for r in replay(load(_folder(tmp_path, plan), False)).rows}


def test_a_session_launched_after_one_that_read_nothing_carries_its_bytes(tmp_path):
    rows = _rows(tmp_path)
    assert rows["b0"].predicted.cache_read == 5000      # nothing could tell b's bytes before its reply
    assert rows["c0"].predicted.cache_read == 0         # the old code read a's 5,000 here
    assert rows["c0"].observed.cache_read == 0
    assert rows["d0"].predicted.cache_read == 5000      # the other folder is untouched


def test_reading_the_old_prefix_again_undoes_the_version(tmp_path):
    rows = _rows(tmp_path)
    # e itself is predicted with its folder's new version (cold): its own read is what shows the old one
    assert (rows["e0"].predicted.cache_read, rows["e0"].observed.cache_read) == (0, 5000)
    assert rows["f0"].predicted.cache_read == rows["f0"].observed.cache_read == 5000


def test_without_a_warm_prefix_a_miss_says_nothing_about_the_bytes(tmp_path):
    # b starts after w's entries expired: reading nothing is the TTL, not other bytes, so c (same
    # folder, w's prefix written again) still reads w's version
    plan = [PLAN[0], ("w", "/work/alpha", [(20, "w0", 5000, 15000), (30, "w1", 20000, 300),
                                            (1000, "w2", 0, 20300)]),
            ("b", "/work/alpha", [(600, "b0", 0, 20000)]),
            ("c", "/work/alpha", [(1020, "c0", 5000, 15000)])]
    rows = _rows(tmp_path, plan)
    assert rows["c0"].predicted.cache_read == 5000
