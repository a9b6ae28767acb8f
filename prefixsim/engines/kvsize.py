"""KV-cache bytes per token and capacity conversions (GiB of KV memory -> tokens).

bytes per token = 2 (K and V) x layers x KV heads x head dim x dtype bytes: the size of one token's
keys and values over all attention layers. Layer and head counts are each model's public
`config.json` on the Hugging Face hub (num_hidden_layers, num_key_value_heads, and head_dim or
hidden_size / num_attention_heads).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from prefixsim.core.sizes import capacity_amount
from prefixsim.errors import UserError

GIB = 1 << 30


@dataclass(frozen=True, slots=True)
class KvModel:
    name: str
    layers: int
    kv_heads: int
    head_dim: int
    source: str

    def bytes_per_token(self, dtype_bytes: int = 2) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * dtype_bytes


def _hf(repo: str) -> str:
    return f"huggingface.co/{repo}/blob/main/config.json"


#: Canonical name -> attention shape. fp16/bf16 (2 bytes) is the engines' default KV dtype.
MODELS: dict[str, KvModel] = {m.name: m for m in (
    KvModel("llama-3.1-8b", 32, 8, 128, _hf("meta-llama/Llama-3.1-8B-Instruct")),    # 4096/32 heads
    KvModel("llama-3.1-70b", 80, 8, 128, _hf("meta-llama/Llama-3.1-70B-Instruct")),  # 8192/64 heads
    KvModel("qwen2.5-7b", 28, 4, 128, _hf("Qwen/Qwen2.5-7B-Instruct")),              # 3584/28 heads
    KvModel("qwen2.5-72b", 80, 8, 128, _hf("Qwen/Qwen2.5-72B-Instruct")),            # 8192/64 heads
    KvModel("mistral-7b", 32, 8, 128, _hf("mistralai/Mistral-7B-Instruct-v0.3")),     # 4096/32 heads
)}

DTYPE_BYTES = {"fp16": 2, "bf16": 2, "fp8": 1, "fp32": 4}


def kv_model(name: str) -> KvModel:
    m = MODELS.get(name.lower())
    if m is None:
        raise UserError(f"unknown model {name!r} for KV sizing (known: {', '.join(MODELS)})")
    return m


def kv_bytes_per_token(model: str, dtype: str = "bf16") -> int:
    """KV bytes one token occupies in `model`'s cache at `dtype`."""
    if dtype not in DTYPE_BYTES:
        raise UserError(f"unknown KV dtype {dtype!r} (valid: {', '.join(DTYPE_BYTES)})")
    return kv_model(model).bytes_per_token(DTYPE_BYTES[dtype])


def capacity_tokens(gib: float | Fraction, model: str, dtype: str = "bf16") -> int:
    """Tokens that fit in `gib` GiB of KV memory for `model` (rounded down; exact for a Fraction)."""
    return int(Fraction(gib) * GIB) // kv_bytes_per_token(model, dtype)


#: Tokens a capacity may name: far past any GPU pool (a petabyte of KV memory holds ~1e10 tokens);
#: beyond it, write 'unlimited'.
MAX_CAPACITY_TOKENS = 10 ** 15
MAX_CAPACITY_GIB = 10 ** 6


def split_capacity(text: str | int | float | None) -> tuple[Fraction, str] | None:
    """A capacity's exact amount and unit ("tokens" or "gib"), checking only its syntax; None: unlimited.
    Text is read by core/sizes.py (decimal digits exactly: '1.001M' is 1,001,000 tokens).

    Kept apart from `parse_capacity` so a scenario can be validated before its model is known
    (a GiB capacity is sized against the model when the run starts)."""
    if text is None:
        return None
    if isinstance(text, bool):  # YAML's `yes` is not a capacity, though bool is an int in Python
        raise UserError(f"bad capacity {text!r} (e.g. 'unlimited', 1e6, 10^6, 500k, 4GiB)")
    if isinstance(text, (int, float)):
        # YAML reads 1e6 as a float; a whole number of tokens is what it means.
        if not math.isfinite(text) or text < 0 or text != int(text):
            raise UserError(f"bad capacity {text!r} (a whole number of tokens)")
        return _bounded(Fraction(text), "tokens", text)
    if text.strip().lower() in ("unlimited", "inf", "none"):
        return None
    parsed = capacity_amount(text)
    if parsed is None:
        raise UserError(f"bad capacity {text!r} (e.g. 'unlimited', 1e6, 10^6, 500k, 4GiB)")
    value, unit = _bounded(*parsed, text)
    if unit == "tokens" and value.denominator != 1:
        raise UserError(f"bad capacity {text!r} (a whole number of tokens; a fraction of one is no capacity)")
    return value, unit


def _bounded(value: Fraction, unit: str, text: object) -> tuple[Fraction, str]:
    limit = MAX_CAPACITY_GIB if unit == "gib" else MAX_CAPACITY_TOKENS
    if not value <= limit:
        shown = f"{MAX_CAPACITY_GIB:,} GiB" if unit == "gib" else "10^15 tokens"
        raise UserError(f"capacity {text!r} is too large (at most {shown}; write 'unlimited' for no limit)")
    return value, unit


def parse_capacity(text: str | int | float | None, model: str | None = None) -> int | None:
    """A capacity as a user writes it: 'unlimited', 200000, '1e6', '10^6', '2M', '500k' tokens, or
    '4GiB' (needs `model` for bytes per token). Returns tokens, or None for unlimited."""
    parsed = split_capacity(text)
    if parsed is None:
        return None
    value, unit = parsed
    if unit == "gib":
        if model is None:
            raise UserError(f"capacity {text!r} is in GiB: say which model sizes the KV cache")
        return capacity_tokens(value, model)
    return int(value)
