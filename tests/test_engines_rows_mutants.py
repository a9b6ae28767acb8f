"""`engines.rows` on a hand-made replay: each column read back in its place, exact output rows."""
from prefixsim.engines.rows import Replayed, Rows
from prefixsim.engines.trace import replay

from test_engines_lru import BS, make_trace


def test_rows_hand_counted():
    # r0 = [a, b] (8 tokens) misses both; r1 = [a, b, c] (11 tokens) reads a and b (8 tokens).
    trace = make_trace([(["a", "b"], 8), (["a", "b", "c"], 11)])
    rows, _ = replay(trace, None)
    r0, r1 = trace.requests
    assert list(rows) == [Replayed(r0, 2, 0, 0, rows[0].cause), Replayed(r1, 3, 2, 8, rows[1].cause)]
    assert rows[1].row()["predicted"] == {"input_tokens": 3, "cache_creation_input_tokens": 0,
                                          "cache_read_input_tokens": 8}
