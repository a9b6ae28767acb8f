"""Sizes read exactly (core/sizes.py), wherever one is written: a scenario's token fields, a study's
-p sizes, --capacity and engine.capacity, --block-size. Decimal digits through binary floats made
1.001M 1,000,999 tokens and refused 1,472 of the 99,999 values N.NNNk as "not a whole number"
(issue 33, class 6)."""
from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from prefixsim.core.sizes import HUGE, capacity_amount, token_amount, whole_tokens
from prefixsim.engines.kvsize import parse_capacity, split_capacity
from prefixsim.errors import UserError
from prefixsim.scenario.fields import Tokens, size_value
from prefixsim.scenario.studycheck import parse_pairs


def _k(n: int) -> str:
    """n tokens written as thousands with three decimals: 1001 -> '1.001k'."""
    return f"{n // 1000}.{n % 1000:03d}k"


def test_every_n_nnn_k_is_its_own_number_of_tokens():
    wrong = [n for n in range(1, 100_000) if size_value(_k(n)) != n]
    assert wrong == []


def test_every_n_nnn_m_capacity_is_its_own_number_of_tokens():
    wrong = [n for n in range(1, 100_000) if parse_capacity(f"{n // 1000}.{n % 1000:03d}M") != n * 1000]
    assert wrong == []
    assert parse_capacity("1.001M") == 1_001_000 and split_capacity("1.001M") == (Fraction(1_001_000), "tokens")


def test_a_scenario_field_and_a_study_parameter_read_the_same_digits():
    field = TypeAdapter(Tokens)
    for n in (1001, 4_097, 99_999, 12_345):
        assert field.validate_python(_k(n)) == n
        f, _ = parse_pairs("ttl", [f"prefix={_k(n)}"])
        assert f.prefix == n


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(whole=st.integers(0, 9_999), digits=st.text("0123456789", min_size=1, max_size=9),
       suffix=st.sampled_from(["k", "K", "m", "M"]))
def test_property_a_decimal_size_is_exactly_its_digits(whole, digits, suffix):
    text = f"{whole}.{digits}{suffix}"
    exact = (whole + Fraction(int(digits), 10 ** len(digits))) * (1000 if suffix in "kK" else 1_000_000)
    assert token_amount(text) == exact
    if exact.denominator == 1:
        assert whole_tokens(text) == exact and size_value(text) == exact
    else:
        with pytest.raises(ValueError, match="is not a whole number of tokens"):
            whole_tokens(text)
    assert capacity_amount(text) == (exact, "tokens")


def test_long_and_high_spellings_read_as_too_large_not_computed():
    assert token_amount("1" * 31) == HUGE and capacity_amount("1e999999999") == (HUGE, "tokens")
    assert capacity_amount("10^999999999999") == (HUGE, "tokens")
    assert token_amount("0" * 60 + "7") == 7                     # leading zeros are no digits of value
    with pytest.raises(UserError, match="too large"):
        parse_capacity("1e999999999")


def test_a_capacity_is_a_whole_number_of_tokens():
    with pytest.raises(UserError, match=r"^bad capacity '1\.5' \(a whole number of tokens"):
        parse_capacity("1.5")
    assert parse_capacity("1.5k") == 1500 and parse_capacity("1.5GiB", "llama-3.1-8b") == 12288


def test_the_capacity_option_reads_decimals_exactly(tmp_path):
    from prefixsim.cli import cli
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}\n')
    res = CliRunner().invoke(cli, ["replay", str(trace), "--capacity", "1.001M", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert '"capacity_tokens": 1001000' in res.output
