"""The open models a self-hosted design can serve: parameter counts beside the attention shape
engines/kvsize.py holds (its KV bytes per token), so the roofline knows what a forward pass
computes (2 FLOPs per parameter per token) and what it reads (the weights, then the KV).

Parameter counts are the ones each model's Hugging Face page gives (the safetensors total, or
"Number of Parameters" on the Qwen cards): docs/rules.md#self-hosted-serving."""
from __future__ import annotations

from dataclasses import dataclass

from prefixsim.engines.kvsize import MODELS as KV_MODELS
from prefixsim.engines.kvsize import DTYPE_BYTES, KvModel
from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown

HF_CFG = "HF-CFG, docs/rules.md#self-hosted-serving"


@dataclass(frozen=True, slots=True)
class OpenModel:
    name: str
    params: float        # parameters, all of them (embeddings included: they are read each pass)
    kv: KvModel          # layers, KV heads, head dim (engines/kvsize.py)
    source: str

    def weight_bytes(self, dtype: str = "bf16") -> float:
        return self.params * DTYPE_BYTES[dtype]

    def kv_bytes_per_token(self, dtype: str = "bf16") -> int:
        return self.kv.bytes_per_token(DTYPE_BYTES[dtype])


def _row(name: str, params: float, card: str) -> OpenModel:
    return OpenModel(name, params, KV_MODELS[name], f"{HF_CFG}: huggingface.co/{card} ({params / 1e9:.2f}B)")


#: Every model kvsize knows, with its parameter count.
OPEN_MODELS: dict[str, OpenModel] = {m.name: m for m in (
    _row("llama-3.1-8b", 8.03e9, "meta-llama/Llama-3.1-8B-Instruct"),
    _row("llama-3.1-70b", 70.6e9, "meta-llama/Llama-3.1-70B-Instruct"),
    _row("qwen2.5-7b", 7.61e9, "Qwen/Qwen2.5-7B-Instruct"),
    _row("qwen2.5-72b", 72.7e9, "Qwen/Qwen2.5-72B-Instruct"),
    _row("mistral-7b", 7.25e9, "mistralai/Mistral-7B-Instruct-v0.3"),
)}

#: Weight dtypes a GPU serves (the KV stays bf16: engines/kvsize.py's default).
WEIGHT_DTYPES = ("bf16", "fp8")


def open_model(name: str) -> OpenModel:
    m = OPEN_MODELS.get(name.lower())
    if m is None:
        raise UserError(unknown("open model", name, list(OPEN_MODELS)))
    return m
