"""A roofline of one replica (the weights on `tp` GPUs, tensor-parallel): how long a prefill and a
decode step take when each is bound by the tensor cores or by HBM, whichever is slower.

    prefill(n uncached, c cached) = max(2 x params x n / (tp x peak x compute),
                                        (weights + KV of c + n tokens) / (tp x bandwidth x memory))
    decode step(batch B, context L) = max(2 x params x B / (tp x peak x compute),
                                          (weights + B x L x KV bytes a token) / (tp x bandwidth x memory))

A decode step reads every weight once and each running sequence's KV, and yields one token per
sequence, so a token costs step / B. `compute` and `memory` are the fractions of the datasheet's
peak a serving engine reaches (Efficiency). Left out, on purpose: the attention FLOPs over the
context (a 30K-token context adds about half again to a 70B model's 2 x params per token: long
prompts prefill slower than this), tensor-parallel communication, chunked prefill sharing steps
with decode, and queueing (docs/rules.md#self-hosted-serving)."""
from __future__ import annotations

from dataclasses import dataclass, field

from prefixsim.engines.kvsize import DTYPE_BYTES
from prefixsim.errors import UserError
from prefixsim.serving.gpus import Gpu
from prefixsim.serving.models import WEIGHT_DTYPES, OpenModel

SRV_EF = "SRV-EF, docs/rules.md#self-hosted-serving"
#: Model FLOPs utilisation of a prefill: below the 76 % Pope et al. report for large-batch prefill
#: on TPU v4 (their best case); serving engines interleave prefill with decode and reach less.
COMPUTE_EFFICIENCY = 0.5
#: Model bandwidth utilisation of a decode step: Databricks' inference guide measures MBU well under
#: the peak on A100 and H100 (its worked example is 50 %); 0.6 is a middle of what engines report.
MEMORY_EFFICIENCY = 0.6
#: vLLM's gpu_memory_utilization default: the share of HBM the engine takes (weights, activations, KV).
MEMORY_UTILISATION = 0.9
#: Tensor-parallel sizes a replica may take (the heads divide evenly: 8 KV heads for 8 GPUs).
TP_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Fractions of the datasheet's peak: `compute` of the tensor FLOPs, `memory` of HBM bandwidth."""

    compute: float = COMPUTE_EFFICIENCY
    memory: float = MEMORY_EFFICIENCY
    source: str = (f"{SRV_EF}: prefill {COMPUTE_EFFICIENCY:.0%} of peak FLOPs (below Pope et al.'s 76 % best case), "
                   f"decode {MEMORY_EFFICIENCY:.0%} of peak bandwidth (Databricks' MBU: well under 100 %)")

    def __post_init__(self) -> None:
        for name in ("compute", "memory"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise UserError(f"efficiency {name} {v!r}: a fraction of the peak, above 0 and at most 1")


@dataclass(frozen=True, slots=True)
class Replica:
    """One copy of `model`'s weights at `dtype` on `tp` GPUs, its KV at bf16."""

    gpu: Gpu
    model: OpenModel
    tp: int = 1
    dtype: str = "bf16"
    efficiency: Efficiency = field(default_factory=Efficiency)
    memory_utilisation: float = MEMORY_UTILISATION

    def __post_init__(self) -> None:
        if self.dtype not in WEIGHT_DTYPES:
            raise UserError(f"weights dtype {self.dtype!r} (valid: {', '.join(WEIGHT_DTYPES)})")
        if self.tp not in TP_SIZES:
            raise UserError(f"tensor-parallel size {self.tp} (valid: {', '.join(map(str, TP_SIZES))})")
        self.gpu.peak_flops(self.dtype)   # FP8 weights on a GPU without FP8 tensor cores: refused here

    @property
    def weights(self) -> float:
        return self.model.weight_bytes(self.dtype)

    @property
    def kv_per_token(self) -> int:
        return self.model.kv_bytes_per_token("bf16")

    @property
    def flops(self) -> float:
        """FLOP/s the replica reaches."""
        return self.tp * self.gpu.peak_flops(self.dtype) * self.efficiency.compute

    @property
    def bandwidth(self) -> float:
        """HBM bytes/s the replica reaches."""
        return self.tp * self.gpu.bandwidth * self.efficiency.memory

    @property
    def kv_tokens(self) -> int:
        """KV tokens the HBM left after the weights holds (the engine's cache capacity; 0: no room)."""
        free = self.tp * self.gpu.hbm_bytes * self.memory_utilisation - self.weights
        return max(0, int(free // self.kv_per_token))

    def prefill_seconds(self, uncached: float, cached: float = 0) -> float:
        compute = 2 * self.model.params * uncached / self.flops
        memory = (self.weights + self.kv_per_token * (cached + uncached)) / self.bandwidth
        return max(compute, memory)

    def decode_step_seconds(self, batch: int, context: float) -> float:
        compute = 2 * self.model.params * batch / self.flops
        memory = (self.weights + batch * context * self.kv_per_token) / self.bandwidth
        return max(compute, memory)

    def bound(self, batch: int, context: float) -> str:
        """Which roof a decode step is under: 'memory' or 'compute'."""
        compute = 2 * self.model.params * batch / self.flops
        return "compute" if compute >= (self.weights + batch * context * self.kv_per_token) / self.bandwidth \
            else "memory"


def weight_bytes_fit(gpu: Gpu, model: OpenModel, dtype: str, tp: int, utilisation: float = MEMORY_UTILISATION) -> bool:
    return tp * gpu.hbm_bytes * utilisation > model.params * DTYPE_BYTES[dtype]
