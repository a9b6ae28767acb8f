"""The GPU catalogue: each accelerator's dense tensor throughput (BF16 and FP8), HBM bandwidth and
size, as its vendor's datasheet gives them, and a GPU-hour price with where and when it was read.

NVIDIA's datasheets print tensor TFLOPS "with sparsity" (2:4 structured sparsity doubles them);
a transformer's matrices are dense, so the catalogue holds half the printed figure and says so.
AMD's MI300X page gives dense and sparse figures both; the dense one is taken. Prices move weekly:
they are a dated default, and a user's own rows (`--gpus FILE`, -p gpu_hour_usd) replace them
(docs/rules.md#self-hosted-serving)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown

NV_DS = "NV-DS, docs/rules.md#self-hosted-serving"
AMD_DS = "AMD-DS, docs/rules.md#self-hosted-serving"
GPU_PR = "GPU-PR, docs/rules.md#self-hosted-serving"


class GpuRowError(UserError):
    """A user's GPU row refused; `key` names the figure at fault (None: the row itself)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, col: int | None = None,
                 key: str | None = None) -> None:
        super().__init__(message, path, line, col)
        self.key = key


@dataclass(frozen=True, slots=True)
class Gpu:
    """One accelerator: dense TFLOPS at BF16 and FP8 (None: no FP8 tensor cores), HBM in GB (10^9
    bytes, as datasheets count) and TB/s, and the price of one GPU-hour."""

    name: str
    bf16_tflops: float
    fp8_tflops: float | None
    hbm_gb: float
    hbm_tb_s: float
    usd_per_hour: float
    source: str          # the datasheet the figures come from
    price_source: str    # where and when the price was read

    def peak_flops(self, dtype: str) -> float:
        """Dense FLOP/s of the tensor cores at the weights' dtype."""
        if dtype == "fp8":
            if self.fp8_tflops is None:
                raise UserError(f"{self.name} has no FP8 tensor cores: serve its weights in bf16")
            return self.fp8_tflops * 1e12
        return self.bf16_tflops * 1e12

    @property
    def hbm_bytes(self) -> float:
        return self.hbm_gb * 1e9

    @property
    def bandwidth(self) -> float:
        """HBM bytes per second."""
        return self.hbm_tb_s * 1e12


def _nv(url: str, printed: str) -> str:
    return f"{NV_DS}: {url} ({printed})"


#: Datasheet figures, dense. Prices: a public rental rate per GPU-hour (on-demand, one GPU of an
#: SXM / OAM node where the GPU comes so), each with its page and the date it was read.
CATALOGUE: dict[str, Gpu] = {g.name: g for g in (
    Gpu("h100-sxm", 989.5, 1979.0, 80, 3.35, 2.69,
        _nv("nvidia.com/en-us/data-center/h100/", "H100 SXM: BF16 1,979 and FP8 3,958 TFLOPS with sparsity, "
            "80 GB, 3.35 TB/s"),
        f"{GPU_PR}: RunPod Secure Cloud H100 SXM, $2.69/h (spheron.network/blog/runpod-h100-pricing-2026, "
        "2026-05-22)"),
    Gpu("h200", 989.5, 1979.0, 141, 4.8, 3.59,
        _nv("nvidia.com/en-us/data-center/h200/", "H200 SXM: BF16 1,979 and FP8 3,958 TFLOPS with sparsity, "
            "141 GB, 4.8 TB/s"),
        f"{GPU_PR}: RunPod H200, $3.59/h (deploybase.ai/articles/runpod-gpu-pricing, 2026-03-10)"),
    Gpu("b200", 2250.0, 4500.0, 180, 8.0, 5.98,
        _nv("nvidia.com/en-us/data-center/hgx/", "HGX B200, 8 GPUs: FP16/BF16 36 and FP8 72 PFLOPS with "
            "sparsity, 1.4 TB, 64 TB/s; per GPU 180 GB (DGX B200: 1,440 GB) and 8 TB/s"),
        f"{GPU_PR}: RunPod B200, $5.98/h (deploybase.ai/articles/runpod-gpu-pricing, 2026-03-10)"),
    Gpu("a100-80gb", 312.0, None, 80, 2.039, 1.39,
        _nv("nvidia.com/en-us/data-center/a100/", "A100 80GB SXM: BF16 312 TFLOPS (624 with sparsity), "
            "no FP8, 80 GB HBM2e, 2,039 GB/s"),
        f"{GPU_PR}: RunPod A100 SXM 80GB, $1.39/h (deploybase.ai/articles/runpod-gpu-pricing, 2026-03-10)"),
    Gpu("l40s", 362.05, 733.0, 48, 0.864, 0.79,
        _nv("nvidia.com/en-us/data-center/l40s/", "L40S: BF16 362.05 and FP8 733 TFLOPS dense (733 and "
            "1,466 with sparsity), 48 GB GDDR6, 864 GB/s"),
        f"{GPU_PR}: RunPod L40S, $0.79/h (deploybase.ai/articles/runpod-gpu-pricing, 2026-03-10)"),
    Gpu("mi300x", 1307.4, 2614.9, 192, 5.3, 1.85,
        f"{AMD_DS}: amd.com/en/products/accelerators/instinct/mi300/mi300x.html (BF16 1,307.4 and FP8 2,614.9 "
        "TFLOPS dense, 2,614.9 and 5,229.8 with sparsity; 192 GB HBM3, 5.3 TB/s)",
        f"{GPU_PR}: Vultr MI300X on-demand, $1.85/h (cliffcenter.com/research/amd-inference-economics, "
        "2026-05-18)"),
)}

#: The keys of a user's own GPU row (`--gpus FILE`), with what each holds.
ROW_KEYS = {"bf16_tflops": "dense BF16 TFLOPS", "fp8_tflops": "dense FP8 TFLOPS (null: none)",
            "hbm_gb": "HBM in GB", "hbm_tb_s": "HBM bandwidth in TB/s", "usd_per_hour": "USD per GPU-hour",
            "source": "where the figures come from"}
_LIMITS = {"bf16_tflops": 1e5, "fp8_tflops": 1e5, "hbm_gb": 1e5, "hbm_tb_s": 1e3, "usd_per_hour": 1e4}


def gpu_row(name: str, row: object, where: str = "--gpus") -> Gpu:
    """A user's GPU as data: a row of CATALOGUE's keys, the figures it does not give taken from the
    catalogue's row of that name (a new GPU gives them all). A bad value is one line naming it."""
    if not isinstance(row, dict):
        raise GpuRowError(f"{where} {name}: a GPU is a mapping of {', '.join(ROW_KEYS)}")
    unknown = sorted(set(row) - set(ROW_KEYS))
    if unknown:
        raise GpuRowError(f"{where} {name}.{unknown[0]}: not a GPU figure (valid: {', '.join(ROW_KEYS)})",
                          key=unknown[0])
    base = CATALOGUE.get(name)
    missing = [k for k in ("bf16_tflops", "hbm_gb", "hbm_tb_s", "usd_per_hour") if k not in row]
    if base is None and missing:
        raise GpuRowError(f"{where} {name}: a GPU the catalogue does not hold needs {', '.join(missing)}")
    values: dict[str, object] = {}
    for key, value in row.items():
        if key == "source":
            values[key] = str(value)
            continue
        if value is None and key == "fp8_tflops":
            values[key] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0 < value <= _LIMITS[key]:
            raise GpuRowError(f"{where} {name}.{key}: {value!r} is not {ROW_KEYS[key]} (a number above 0, at "
                              f"most {_LIMITS[key]:,g})", key=key)
        values[key] = float(value)
    said = str(values.pop("source", "") or f"{where} (the user's row)")
    if base is None:
        return Gpu(name, values["bf16_tflops"], values.get("fp8_tflops"), values["hbm_gb"],  # type: ignore[arg-type]
                   values["hbm_tb_s"], values["usd_per_hour"], said, said)  # type: ignore[arg-type]
    price = "usd_per_hour" in values
    figures = set(values) - {"usd_per_hour"}
    return replace(base, **values,   # type: ignore[arg-type]
                   source=f"{said}; the rest: {base.source}" if figures else base.source,
                   price_source=said if price else base.price_source)


def catalogue(rows: dict | None = None, where: str = "--gpus") -> dict[str, Gpu]:
    """CATALOGUE with a user's rows on top (new GPUs added, known ones' figures replaced)."""
    out = dict(CATALOGUE)
    for name, row in (rows or {}).items():
        key = str(name).lower()
        out[key] = gpu_row(key, row, where)
    return out


def gpu(name: str, rows: dict[str, Gpu] | None = None) -> Gpu:
    table = CATALOGUE if rows is None else rows
    g = table.get(name.lower())
    if g is None:
        raise UserError(unknown("GPU", name, list(table)))
    return g
