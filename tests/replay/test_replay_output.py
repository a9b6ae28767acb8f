"""`replay --format json` streamed one request per line through json's C encoder: the text parses to
exactly the library's document; the default variant costs no per-block work."""
import json

import pytest
from cc_fixtures import session
from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.replay import WhatIf, apply_variant, compare, replay, to_json
from prefixsim.replay import output as replay_output
from prefixsim.sources import load_many

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
