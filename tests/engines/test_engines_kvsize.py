"""KV bytes per token and capacity parsing pinned with exact values (issue 22: mutation testing).

bytes per token = 2 (K and V) x layers x KV heads x head dim x dtype bytes, with each model's shape
from its config.json on the Hugging Face hub (the sources kvsize.MODELS cites).
"""
import pytest

from prefixsim.engines.kvsize import (
    GIB,
    MODELS,
    capacity_tokens,
    kv_bytes_per_token,
    kv_model,
    parse_capacity,
    split_capacity,
)
from prefixsim.errors import UserError


@pytest.mark.parametrize("model,layers,kv_heads,head_dim", [
    ("llama-3.1-8b", 32, 8, 128), ("llama-3.1-70b", 80, 8, 128), ("qwen2.5-7b", 28, 4, 128),
    ("qwen2.5-72b", 80, 8, 128), ("mistral-7b", 32, 8, 128)])
def test_bytes_per_token_from_the_config_shapes(model, layers, kv_heads, head_dim):
    m = MODELS[model]
    assert (m.name, m.layers, m.kv_heads, m.head_dim) == (model, layers, kv_heads, head_dim)
    assert m.bytes_per_token() == 2 * layers * kv_heads * head_dim * 2        # bf16 by default
    assert kv_bytes_per_token(model) == 2 * layers * kv_heads * head_dim * 2
    assert kv_bytes_per_token(model, "fp8") == 2 * layers * kv_heads * head_dim
    assert kv_bytes_per_token(model, "fp32") == 2 * layers * kv_heads * head_dim * 4
    assert kv_bytes_per_token(model, "fp16") == kv_bytes_per_token(model, "bf16")


def test_model_names_are_case_blind_and_unknown_ones_are_named():
    assert kv_model("Llama-3.1-70B") is MODELS["llama-3.1-70b"]
    with pytest.raises(UserError, match=r"^unknown model 'gpt-9' for KV sizing \(known: llama-3.1-8b, "):
        kv_model("gpt-9")
    with pytest.raises(UserError, match=r"^unknown KV dtype 'int4' \(valid: fp16, bf16, fp8, fp32\)$"):
        kv_bytes_per_token("llama-3.1-8b", "int4")


def test_capacity_in_gib_rounds_down_to_whole_tokens():
    # llama-3.1-70b: 327,680 bytes a token; 1 GiB = 1,073,741,824 bytes -> 3,276.8 -> 3,276 tokens
    assert capacity_tokens(1, "llama-3.1-70b") == 3276
    assert capacity_tokens(0.5, "llama-3.1-8b") == 4096           # 2^29 / 2^17
    assert capacity_tokens(1, "llama-3.1-8b", "fp8") == 16384
    assert capacity_tokens(2, "qwen2.5-7b", "fp32") == 2 * GIB // (57344 * 2)
    assert parse_capacity("1.5GiB", "llama-3.1-8b") == 12288
    assert parse_capacity("4 gib", "LLAMA-3.1-8B") == 32768


@pytest.mark.parametrize("text,tokens", [
    (None, None), ("unlimited", None), (" Inf ", None), ("NONE", None),
    (200000, 200000), (1e6, 1_000_000), (0, 0), ("0", 0), ("250", 250), ("500k", 500_000), ("500K", 500_000),
    ("2M", 2_000_000), ("2.5m", 2_500_000), ("1e3", 1000), ("1e+3", 1000), ("1E3k", 1_000_000),
    ("10^3", 1000), (" 10^6 ", 10**6), ("7 tokens", 7), ("7TOKENS", 7), ("3.", 3),
    (10**15, 10**15), ("10^15", 10**15), ("1000000000000000", 10**15)])
def test_capacity_spellings(text, tokens):
    assert parse_capacity(text) == tokens


def test_split_keeps_the_unit_for_later_sizing():
    assert split_capacity("4GiB") == (4.0, "gib")
    assert split_capacity("3k") == (3000.0, "tokens")
    assert split_capacity(12) == (12.0, "tokens")
    assert split_capacity("1000000gib") == (1e6, "gib")            # the GiB limit itself is allowed


@pytest.mark.parametrize("text,msg", [
    (True, r"^bad capacity True \(e\.g\. 'unlimited', 1e6, 10\^6, 500k, 4GiB\)$"),
    (False, r"^bad capacity False "),
    (1.5, r"^bad capacity 1\.5 \(a whole number of tokens\)$"),
    (-1, r"^bad capacity -1 \(a whole number"),
    (float("nan"), r"^bad capacity nan "), (float("inf"), r"^bad capacity inf "),
    ("lots", r"^bad capacity 'lots' \(e\.g\."), ("-5", r"^bad capacity '-5'"), ("5 kb", r"^bad capacity"),
    ("10^", r"^bad capacity"), ("x10^6", r"^bad capacity"),
    (10**15 + 1, r"^capacity 1000000000000001 is too large \(at most 10\^15 tokens; write 'unlimited' for no limit\)$"),
    ("1001T", r"^bad capacity"),
    ("10^16", r"^capacity '10\^16' is too large \(at most 10\^15 tokens"),
    ("10^41", r"^capacity '10\^41' is too large"),
    ("1" * 41, r"is too large \(at most 10\^15 tokens"),
    ("1e400", r"is too large"),
    ("10^400", r"^capacity '10\^400' is too large \(at most 10\^15 tokens"),     # 10.0 ** 400 would overflow
    ("10^" + "1" * 5000, r"is too large \(at most 10\^15 tokens"),              # past int()'s digit limit
    ("1" * 41 + "GiB", r"is too large \(at most 1,000,000 GiB; write"),           # the limit of the unit given
    ("10^50 GiB", r"is too large \(at most 1,000,000 GiB; write"),
    ("1000001GiB", r"^capacity '1000001GiB' is too large \(at most 1,000,000 GiB; write"),
])
def test_bad_and_oversized_capacities(text, msg):
    with pytest.raises(UserError, match=msg):
        parse_capacity(text, "llama-3.1-8b")


def test_long_spellings_are_read_by_their_value():
    # many digits are not a large number: leading zeros and a long fraction keep their value
    assert parse_capacity("0" * 50 + "7") == 7
    assert parse_capacity("1." + "0" * 45 + "k") == 1000
    assert parse_capacity("10^09") == 10**9
    with pytest.raises(UserError, match="too large"):
        split_capacity("1" * 40)
    with pytest.raises(UserError, match="too large"):
        split_capacity("10^40")


def test_gib_capacity_needs_a_model():
    with pytest.raises(UserError, match=r"^capacity '4GiB' is in GiB: say which model sizes the KV cache$"):
        parse_capacity("4GiB")
