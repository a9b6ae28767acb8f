"""`replay --format json` streamed one request per line through json's C encoder: the text parses to
exactly the library's document; the default variant costs no per-block work."""
import json
from pathlib import Path

import pytest
from cc_fixtures import session
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.replay import WhatIf, apply_variant, compare, replay, to_json
from prefixsim.replay import output as replay_output
from prefixsim.sources import load_many

MALFORMED = Path(__file__).resolve().parents[1] / "malformed" / "logs"

# Runs the command in a child interpreter, which a mutation run's switch does not reach.
pytestmark = pytest.mark.no_mutation


def _doc(path, variant=None):
    base = replay(load_many([path]))
    return to_json(base, None if variant is None else compare(base, replay(load_many([path]), variant)))


def test_streamed_json_is_the_document_one_request_per_line(tmp_path, monkeypatch):
    path = session(tmp_path, True).with_suffix("")
    monkeypatch.setattr(replay_output, "JSON_CHUNK", 10)   # a write per request: chunk edges are invisible
    for args, variant in (([], None), (["--ttl", "1h"], WhatIf(ttl="1h"))):
        out = CliRunner().invoke(cli, ["replay", str(path), "--format", "json", *args])
        assert out.exit_code == 0, out.output
        want = _doc(path, variant)
        assert json.loads(out.output) == json.loads(json.dumps(want))
        lines = out.output.splitlines()
        assert lines[:2] == ["{", '  "requests": [']
        rows = lines[2:2 + len(want["requests"])]
        assert [json.loads(x.strip().rstrip(",")) for x in rows] == json.loads(json.dumps(want["requests"]))
        assert lines[2 + len(rows)] == "  ],"
        # the small parts keep json.dumps(indent=2)'s layout
        rest = json.dumps({k: v for k, v in want.items() if k != "requests"}, indent=2, ensure_ascii=False)
        assert "\n".join(lines[3 + len(rows):]) == rest[2:]


def test_default_variant_returns_the_call_itself(tmp_path):
    """The recorded design needs no copy of the request (it was a loop over every block)."""
    rec = load_many([session(tmp_path, False)])[-1]
    assert apply_variant(rec.call, WhatIf(), rec.main) is rec.call
    assert apply_variant(rec.call, WhatIf(provider="openai"), rec.main) is rec.call
    moved = apply_variant(rec.call, WhatIf(ttl="1h"), rec.main)
    assert moved is not rec.call and any(b.breakpoint == "1h" for b in moved.request.blocks)


def test_the_replay_command_leaves_the_collector_as_it_found_it(tmp_path):
    """The command freezes the loaded traffic and makes young collections rarer while it replays,
    then restores both (a process running many commands keeps its settings)."""
    import gc

    before = gc.get_threshold()
    out = CliRunner().invoke(cli, ["replay", str(session(tmp_path, False)), "--format", "json"])
    assert out.exit_code == 0, out.output
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_few_collections_restores_on_error():
    import gc

    import pytest

    from prefixsim._perf.gc import YOUNG_THRESHOLD, few_collections
    before = gc.get_threshold()
    with pytest.raises(KeyError):
        with few_collections():
            assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD) and gc.get_freeze_count() > 0
            raise KeyError
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_table_of_ranged_and_unranged_providers_gives_the_range_of_both(tmp_path):
    # OpenRouter's Gemini (a retention range) before Claude (no range) in one log: the table's note
    # summed the rows' optimistic figures and met a row without one (exit 70). Now a row without a
    # range counts with its one figure, as the JSON summary counts it.
    from log_fixtures import timed_logs

    path = tmp_path / "router.jsonl"
    path.write_text("".join(timed_logs(Path(__file__).resolve().parents[1] / "data" / "router-api")["openai"]))
    rows = replay(load_many([path], "openai")).rows
    assert rows[0].predicted_optimistic is not None and any(r.predicted_optimistic is None for r in rows)
    out = CliRunner().invoke(cli, ["replay", str(path), "--source", "openai"])
    assert out.exit_code == 0, out.output
    doc = json.loads(CliRunner().invoke(cli, ["replay", str(path), "--source", "openai", "--format", "json"]).output)
    share = doc["summary"]["read_share_predicted_optimistic"]
    assert f"at its optimistic end read share {100 * share:.2f}%" in " ".join(out.output.split())


def test_the_json_names_every_skipped_line_with_its_reason(tmp_path):
    # Every request is replayed or named: the document lists the lines its reading skipped (stderr
    # names them for every format), and requests + skipped account for every line of the logs.
    good = tmp_path / "a.jsonl"
    good.write_text((MALFORMED / "duplicate-ids.jsonl").read_text())
    bad = tmp_path / "b.jsonl"
    bad.write_text((MALFORMED / "negative-usage.jsonl").read_text())
    out = CliRunner().invoke(cli, ["replay", str(good), str(bad), "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["skipped"] == [
        {"path": str(good), "line": 2, "reason": "duplicate request id 'a' (first at line 1)"},
        {"path": str(bad), "line": 2, "reason": "usage field input_tokens is negative: -4 (a count is from 0 to "
                                                "1,000,000,000)"}]
    lines = sum(1 for p in (good, bad) for x in p.read_text().splitlines() if x.strip())
    assert len(doc["requests"]) + len(doc["skipped"]) == lines
    # nothing skipped, no key: the document of a clean log is as before
    assert "skipped" not in _doc(session(tmp_path, True).with_suffix(""))
