"""A block size is the unit of a trace's hash ids: one they cannot have been made with is refused, not
replayed (issue 33, class 6: `--block-size 100000` on Mooncake's 512-token ids printed a 99.8 % hit
rate for "5,340 blocks of 100000 tokens", and `--block-size 0` silently meant the trace's)."""
import json
import time

import pytest
from conftest import data_file
from hypothesis import example, given, settings
from hypothesis import strategies as st

from prefixsim.cli import main
from prefixsim.engines.cluster import replay_cluster
from prefixsim.engines.trace import replay_trace
from prefixsim.engines.trace_blocks import first_misfit, fitting_range
from prefixsim.errors import UserError

MOONCAKE = str(data_file("mooncake", "conversation_trace.jsonl"))


def _cli(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.mark.parametrize("given_size,made", [("100000", "1"), ("16", "423"), ("1k", "7")])
def test_a_block_size_the_ids_were_not_made_with_is_refused_naming_the_traces(capsys, given_size, made):
    began = time.monotonic()
    code, out, err = _cli(["replay", MOONCAKE, "--block-size", given_size], capsys)
    assert time.monotonic() - began < 5
    assert code == 2 and out == ""
    shown = str(1000 if given_size == "1k" else given_size)
    assert err == (f"prefixsim: --block-size {shown} does not fit this trace: conversation_trace.jsonl:1 has 6,758 "
                   f"input tokens in 14 hash ids, which {shown}-token blocks would make {made}; this mooncake "
                   "trace's hash ids are 512-token blocks (that size fits every request); leave --block-size out\n")


@pytest.mark.parametrize("bad", ["0", "-1", "x", "0.5"])
def test_no_block_size_but_a_positive_number_of_tokens(capsys, bad):
    code, _, err = _cli(["replay", MOONCAKE, f"--block-size={bad}"], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "--block-size" in err


@pytest.mark.slow
def test_the_traces_own_block_size_given_is_the_default(capsys):
    code, out, _ = _cli(["replay", MOONCAKE, "--block-size", "512", "--format", "json"], capsys)
    assert code in (0, None)
    given_512 = json.loads(out)["summary"]
    code, out, _ = _cli(["replay", MOONCAKE, "--format", "json"], capsys)
    assert json.loads(out)["summary"] == given_512


def _trace(tmp_path, lengths, block, full_only=False):
    p = tmp_path / "t.jsonl"
    ids = iter(range(10**9))
    p.write_text("".join(json.dumps({"timestamp": i * 1000, "input_length": n, "hash_ids": [
        next(ids) for _ in range(n // block if full_only else -(-n // block))]}) + "\n" for i, n in enumerate(lengths)))
    return p


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(block=st.integers(2, 4096), lengths=st.lists(st.integers(1, 200_000), min_size=1, max_size=30),
       full_only=st.booleans())
@example(block=3, lengths=[3], full_only=False)   # 2-token blocks also fit: full blocks only (Hypothesis found it)
def test_property_the_block_size_a_trace_was_made_with_is_accepted(tmp_path_factory, block, lengths, full_only):
    # Ids made from `block`-token blocks (the last partial, or full blocks only) replay at `block`; a
    # size outside the range every request fits is refused before anything is replayed.
    p = _trace(tmp_path_factory.mktemp("t"), lengths, block, full_only)
    assert replay_trace(p, block_size=block)["summary"]["block_size"] == block
    if not full_only:
        from prefixsim.engines.trace import load_trace
        low, high = fitting_range(load_trace(p).requests)
        assert low <= block and (high is None or block <= high)
        # just outside the range a size is refused, unless the ids also read as full blocks only of it
        # (3 tokens in 1 id: 2-token blocks, the partial one left out): first_misfit takes either count
        reqs = load_trace(p).requests
        if high is not None and first_misfit(reqs, high + 1) is not None:
            with pytest.raises(UserError, match=rf"^--block-size {high + 1} does not fit this trace: "):
                replay_trace(p, block_size=high + 1)
        if low > 1 and first_misfit(reqs, low - 1) is not None:
            with pytest.raises(UserError, match=rf"^--block-size {low - 1} does not fit this trace: "):
                replay_cluster(p, 1, None, block_size=low - 1)


def test_a_trace_no_block_size_fits_says_so(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"timestamp": 0, "input_length": 100, "hash_ids": [1, 2, 3]}\n'
                 '{"timestamp": 1, "input_length": 100, "hash_ids": [1]}\n')
    with pytest.raises(UserError) as e:
        replay_trace(p, block_size=40)
    assert e.value.message.endswith("the mooncake block size, 512, does not fit it either; no block size fits every "
                                    "request")
