"""`engines.rows` on a hand-counted replay: each column read back in its place, and the output rows
exactly as transcript replays shape them (engines bill no write premium: cache creation stays 0)."""
from test_engines_lru import make_trace

from prefixsim.engines.rows import Replayed, Rows
from prefixsim.engines.trace import replay
from prefixsim.model import CauseKind


def _row(rid, ts, inp, read, cause):
    return {"request_id": rid, "timestamp": ts, "stream": "s", "model": None, "observed": None,
            "predicted": {"input_tokens": inp, "cache_creation_input_tokens": 0, "cache_read_input_tokens": read},
            "cause": cause}


def _hand_counted():
    # Unlimited pool. r0 = [a, b] (8 tokens) misses both (cold). r1 = [a, b, c] (11 tokens) reads a
    # and b (8 tokens, 3 uncached). r2 = [c, d] (6 tokens) reads c (4 tokens, 2 uncached).
    trace = make_trace([(["a", "b"], 8), (["a", "b", "c"], 11), (["c", "d"], 6)])
    return trace, [_row("r0", 0.0, 8, 0, CauseKind.COLD), _row("r1", 1.0, 3, 8, CauseKind.HIT),
                   _row("r2", 2.0, 2, 4, CauseKind.HIT)]


def test_rows_hand_counted():
    trace, expected = _hand_counted()
    rows, _ = replay(trace, None)
    r0, r1, r2 = trace.requests
    assert type(rows) is Rows
    want = [Replayed(r0, 2, 0, 0, CauseKind.COLD), Replayed(r1, 3, 2, 8, CauseKind.HIT),
            Replayed(r2, 2, 1, 4, CauseKind.HIT)]
    assert list(rows) == want and [rows[i] for i in range(3)] == want and rows[1:] == want[1:]
    assert rows == want and rows != want[:2] and rows != Rows(trace.requests, [0, 2, 0], [0, 8, 4], rows.causes)
    assert (rows == "x") is False and rows.__eq__(tuple(want)) is NotImplemented
    assert rows.dicts() == expected
    assert [r.row() for r in rows] == expected and rows[2].row() == expected[2]
    assert repr(rows) == f"Rows({want!r})"
