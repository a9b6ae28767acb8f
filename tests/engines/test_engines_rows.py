"""A fast replay's rows kept as columns (`engines.rows.Rows`) read exactly as the list of row objects
the block pool returns: item by item, sliced, iterated, compared, and as output rows."""
import json
import random

import pytest
from conftest import data_file
from test_engines_lru import capacities, chained, make_trace, scattered

from prefixsim.engines.rows import Replayed, Rows
from prefixsim.engines.trace import load_trace, replay, replay_pool, replay_trace


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", [chained, scattered])
def test_columns_read_as_the_pools_row_objects(seed, kind):
    trace = make_trace(kind(random.Random(seed), 60))
    for cap in capacities(trace):
        rows, _ = replay(trace, cap)
        ref, _ = replay_pool(trace, cap)
        assert isinstance(rows, Rows) or cap is None
        assert len(rows) == len(ref) == 60
        assert list(rows) == ref and rows == ref and ref == rows and rows == Rows(*_columns(ref))
        assert [rows[i] for i in range(-60, 60)] == ref + ref
        assert all(type(r) is Replayed for r in rows) and type(rows[-1]) is Replayed
        assert rows[3:17:2] == ref[3:17:2] and rows[::-1] == ref[::-1]
        assert rows.dicts() == [r.row() for r in ref]
        assert rows.index(ref[5]) == ref.index(ref[5]) and rows.count(ref[0]) == ref.count(ref[0])
        assert ref[7] in rows and list(reversed(rows)) == ref[::-1]


def _columns(rows):
    return ([r.request for r in rows], [r.hit_blocks for r in rows], [r.hit_tokens for r in rows],
            [r.cause for r in rows])


def test_rows_differ_where_a_column_differs():
    trace = make_trace(chained(random.Random(1), 20))
    rows, _ = replay(trace, 3 * 4)
    reqs, runs, tokens, causes = _columns(list(rows))
    assert rows == Rows(reqs, runs, tokens, causes)
    assert rows != Rows(reqs, runs, tokens[:-1] + [tokens[-1] + 1], causes)
    assert rows != Rows(reqs, runs, tokens, causes[:-1] + ["x"])
    assert rows != list(rows)[:-1] and rows != tuple(rows) and rows != None   # noqa: E711
    with pytest.raises(IndexError):
        rows[20]
    with pytest.raises(TypeError):
        hash(rows)
    assert repr(rows) == f"Rows({list(rows)!r})"


@pytest.mark.no_mutation
@pytest.mark.slow
def test_mooncake_json_rows_from_the_columns_equal_the_pools():
    path = data_file("mooncake", "conversation_trace.jsonl")
    out = replay_trace(path, capacities=[3_000_000], fmt="json")
    ref, _ = replay_pool(load_trace(path), 3_000_000)
    assert json.dumps(out["requests"]) == json.dumps([r.row() for r in ref])
