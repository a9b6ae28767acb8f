"""A scenario's engine sized by its GPUs (`engine: {gpu: h100-sxm, gpus: 4}`): the KV capacity is
what HBM holds after the weights (the roofline's Replica.kv_tokens), the prefill rate a compute-bound
prefill's tokens a second, the decode rate one request's tokens a second decoding alone (a step that
reads the weights and its KV: batching makes each step slower, so this is the fastest a request ends
and frees its KV). docs/rules.md#self-hosted-serving."""
from __future__ import annotations

from dataclasses import dataclass

from prefixsim.errors import UserError
from prefixsim.serving.gpus import gpu as catalogue_gpu
from prefixsim.serving.models import OPEN_MODELS
from prefixsim.serving.roofline import TP_SIZES, Replica

#: The context a lone request's decode rate is taken at: the KV it reads is small beside the weights.
DECODE_CONTEXT = 8_000


@dataclass(frozen=True, slots=True)
class Sized:
    capacity: int
    prefill_tokens_per_s: float
    decode_tokens_per_s: float
    replica: Replica


def sized(gpu: str, gpus: int | None, model: str | None) -> Sized:
    """The engine figures of `model`'s bf16 weights on `gpus` x `gpu`."""
    tp = gpus or 1
    if tp not in TP_SIZES:
        raise UserError(f"engine.gpus {tp}: the weights split over {', '.join(map(str, TP_SIZES))} GPUs")
    if (model or "").lower() not in OPEN_MODELS:
        raise UserError(f"engine.gpu sizes the KV cache of an open model ({', '.join(OPEN_MODELS)}): set "
                        f"engine.kv_model, not {model!r}")
    r = Replica(catalogue_gpu(gpu), OPEN_MODELS[(model or "").lower()], tp=tp)
    if r.kv_tokens == 0:
        raise UserError(f"engine.gpu: {model}'s weights ({r.weights / 1e9:,.1f} GB) leave no KV cache on {tp} x "
                        f"{gpu} ({tp * r.gpu.hbm_gb * r.memory_utilisation:,.1f} GB usable): more engine.gpus")
    prefill = r.flops / (2 * r.model.params)
    return Sized(r.kv_tokens, prefill, 1 / r.decode_step_seconds(1, DECODE_CONTEXT), r)
