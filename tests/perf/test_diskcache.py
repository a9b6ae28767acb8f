"""The start-up memo (prefixsim/_perf/diskcache.py): a replay that finds its genai-prices rates and
first-message counts remembered imports neither genai-prices nor tiktoken, and prints the same
bytes; a memo computed from other package files, or damaged, is not used."""
import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest
from conftest import data_file
from fresh_replay import replay_fresh

from prefixsim._perf import diskcache, price_memo
from prefixsim.core import pricing
from prefixsim.core import tokens as tokenize



def _replay(cache: Path, *extra: str) -> tuple[str, list[str]]:
    return replay_fresh(cache, [str(data_file("claude-code")), *extra], ("genai_prices", "tiktoken"))


@pytest.mark.no_mutation
@pytest.mark.slow
def test_second_replay_reads_rates_and_counts_from_the_memo_and_prints_the_same(tmp_path):
    cache = tmp_path / "memo"
    first, first_mods = _replay(cache, "--requests")   # --requests: the price sources in full
    assert "genai_prices" in first_mods and "tiktoken" in first_mods
    assert {p.name for p in cache.iterdir()} == {"genai-prices-raw.json", "counts-cl100k_base.json"}
    second, second_mods = _replay(cache, "--requests")
    assert second_mods == []
    assert second == first
    fresh, _ = _replay(tmp_path / "fresh", "--requests")
    assert fresh == first
    # the price source genai-prices gave is printed from the memo as it was
    assert re.search(r"genai-prices [0-9.]+ bundled data: .*anthropic/claude-opus-4-6, prices at each request.s date \(2026-02-10 to",
                     " ".join(second.split()))   # the line is wrapped at the terminal width


def test_memo_of_other_package_files_or_damaged_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(tmp_path))
    a = diskcache.DiskMemo("m", "stamp-a")
    a.put("k", 7)
    a.flush()
    assert diskcache.DiskMemo("m", "stamp-a").get("k") == 7
    assert diskcache.DiskMemo("m", "stamp-b").get("k") is None   # e.g. genai-prices upgraded
    (tmp_path / "m.json").write_text("{not json")
    assert diskcache.DiskMemo("m", "stamp-a").get("k") is None
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", "off")
    off = diskcache.DiskMemo("m", "stamp-a")
    off.put("k", 8)
    off.flush()
    assert off.get("k") is None
    assert (tmp_path / "m.json").read_text() == "{not json"


def test_an_unwritable_memo_folder_only_costs_the_work_again(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(blocker / "memo"))
    memo = diskcache.DiskMemo("m", "stamp")
    memo.put("k", 1)
    assert memo.get("k") == 1   # kept for this process
    memo.flush()                # cannot write: no error, nothing left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    assert diskcache.DiskMemo("m", "stamp").get("k") is None


def test_a_memo_kept_behind_a_symlink_stays_a_symlink(tmp_path, monkeypatch):
    """The memo goes through the writer every output does: a symlinked memo (dotfiles) has its target
    written, the link left in place (it was replaced by a plain file)."""
    (tmp_path / "store").mkdir()
    (tmp_path / "memo").mkdir()
    os.symlink(tmp_path / "store" / "m.json", tmp_path / "memo" / "m.json")
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(tmp_path / "memo"))
    memo = diskcache.DiskMemo("m", "stamp")
    memo.put("k", 3)
    memo.flush()
    assert os.path.islink(tmp_path / "memo" / "m.json")
    assert json.loads((tmp_path / "store" / "m.json").read_text())["items"] == {"k": 3}


def test_an_upgrade_changes_the_stamp(tmp_path, monkeypatch):
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "data.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = diskcache.package_stamp("fakepkg", ("__init__.py", "data.py"))
    (pkg / "data.py").write_text("X = 12\n")
    assert before is not None and diskcache.package_stamp("fakepkg", ("__init__.py", "data.py")) != before
    assert diskcache.package_stamp("no_such_package_here", ("x.py",)) is None


def test_remembered_rates_equal_genai_prices_own(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(price_memo, "_MEMO", None)
    at = dt.datetime(2026, 2, 10, 12, tzinfo=dt.UTC)
    direct = pricing._from_genai_prices("claude-opus-4-6", "anthropic", at, "claude-opus-4-6")
    assert pricing._remembered("claude-opus-4-6", "anthropic", at, "claude-opus-4-6") == direct
    price_memo._memo().flush()
    monkeypatch.setattr(price_memo, "_MEMO", None)   # a new process
    monkeypatch.setattr(pricing, "_from_genai_prices", lambda *a: 1 / 0)   # never asked again
    again = pricing._remembered("claude-opus-4-6", "anthropic", at, "claude-opus-4-6")
    assert again == direct
    assert again.input.tiers == ((200000, pricing.Decimal("10")),)   # the long-context tier survives


def test_time_of_day_prices_are_looked_up_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(price_memo, "_MEMO", None)
    at = dt.datetime(2026, 2, 10, 7, tzinfo=dt.UTC)
    r = pricing._remembered("deepseek-chat", "deepseek", at, "deepseek-chat")
    assert r.cuts and "07:00 UTC" in r.source
    assert price_memo.lookup("deepseek-chat", "deepseek", at, "deepseek-chat") is None


def test_a_custom_genai_prices_snapshot_bypasses_the_memo(tmp_path, monkeypatch):
    from genai_prices import data_snapshot

    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(price_memo, "_MEMO", None)
    at = dt.datetime(2026, 2, 10, 12, tzinfo=dt.UTC)
    pricing._remembered("claude-opus-4-6", "anthropic", at, "claude-opus-4-6")
    assert price_memo.lookup("claude-opus-4-6", "anthropic", at, "claude-opus-4-6") is not None
    monkeypatch.setattr(data_snapshot, "_custom_snapshot", data_snapshot.get_snapshot())
    assert price_memo.lookup("claude-opus-4-6", "anthropic", at, "claude-opus-4-6") is None


def test_remembered_counts_are_tiktokens(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFIXSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokenize, "_COUNT_MEMOS", {})
    texts = ["hello world", "Ünïcödé — and 12345 digits", ""]
    want = [len(tokenize.load_encoding("cl100k_base").encode_ordinary(t)) for t in texts]
    assert [tokenize.remembered_count("cl100k_base")(t) for t in texts] == want
    tokenize._COUNT_MEMOS["cl100k_base"].flush()
    monkeypatch.setattr(tokenize, "_COUNT_MEMOS", {})
    monkeypatch.setattr(tokenize.TiktokenTokenizer, "count_text", lambda self, t: 1 / 0)   # never asked again
    assert [tokenize.remembered_count("cl100k_base")(t) for t in texts] == want
    assert tokenize.remembered_count("approx")("abcdefgh") == 2
