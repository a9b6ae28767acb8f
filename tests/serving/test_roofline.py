"""The open models' sizes and the roofline of prefill and decode, on figures worked by hand."""
import pytest

from prefixsim.errors import UserError
from prefixsim.serving.models import OPEN_MODELS, open_model


def test_model_sizes():
    # every model kvsize knows has a parameter count; llama-3.1-70b: 70.6e9 x 2 bytes, and
    # 2 (K, V) x 80 layers x 8 KV heads x 128 dims x 2 bytes = 327,680 KV bytes a token
    from prefixsim.engines.kvsize import MODELS

    assert set(OPEN_MODELS) == set(MODELS)
    m = open_model("Llama-3.1-70B")
    assert (m.weight_bytes("bf16"), m.weight_bytes("fp8"), m.kv_bytes_per_token()) == (141.2e9, 70.6e9, 327_680)
    assert open_model("llama-3.1-8b").kv_bytes_per_token() == 2 * 32 * 8 * 128 * 2
    with pytest.raises(UserError, match="did you mean 'llama-3.1-8b'"):
        open_model("llama-3.1-8")


from prefixsim.serving.gpus import gpu  # noqa: E402
from prefixsim.serving.roofline import Efficiency, Replica  # noqa: E402

H100 = gpu("h100-sxm")
L70 = open_model("llama-3.1-70b")


def test_prefill_is_compute_bound_by_hand():
    # 2 x H100, bf16, 50 % of 989.5 TFLOPS, 60 % of 3.35 TB/s; 1,500 uncached over 30,000 cached:
    # FLOPs 2 x 70.6e9 x 1,500 = 2.118e14 over 2 x 989.5e12 x 0.5 = 9.895e14/s: 0.214047 s;
    # bytes 141.2e9 + 327,680 x 31,500 = 151.52e9 over 2 x 3.35e12 x 0.6 = 4.02e12/s: 0.037691 s
    r = Replica(H100, L70, tp=2)
    assert r.prefill_seconds(1500, 30_000) == pytest.approx(2.118e14 / 9.895e14, rel=1e-12)
    assert r.prefill_seconds(1500, 30_000) == pytest.approx(0.2140475, abs=1e-7)
    # one token: the weights' read binds (141.2e9 + 327,680 x 1) / 4.02e12 = 0.0351245 s
    assert r.prefill_seconds(1, 0) == pytest.approx((141.2e9 + 327_680) / 4.02e12, rel=1e-12)


def test_decode_step_is_memory_bound_by_hand():
    # 32 sequences at 30,000 tokens: (141.2e9 + 32 x 30,000 x 327,680) / 4.02e12 = 0.1133763 s a
    # step (compute: 2 x 70.6e9 x 32 / 9.895e14 = 0.0045659 s), 0.0035430 s a token
    r = Replica(H100, L70, tp=2)
    assert r.decode_step_seconds(32, 30_000) == pytest.approx((141.2e9 + 32 * 30_000 * 327_680) / 4.02e12, rel=1e-12)
    assert r.decode_step_seconds(32, 30_000) == pytest.approx(0.1133763, abs=1e-7)
    assert r.bound(32, 30_000) == "memory"
    # a large batch of short contexts turns compute-bound: 4,096 x 2 x 70.6e9 / 9.895e14 = 0.58447 s
    assert r.bound(4096, 10) == "compute"
    assert r.decode_step_seconds(4096, 10) == pytest.approx(4096 * 2 * 70.6e9 / 9.895e14, rel=1e-12)


def test_efficiency_and_fp8_change_the_roofs():
    # FP8 weights: half the bytes (70.6e9) and twice the FLOPs (1,979 TFLOPS dense)
    r = Replica(H100, L70, tp=2, dtype="fp8", efficiency=Efficiency(compute=1.0, memory=1.0))
    assert r.prefill_seconds(1500, 0) == pytest.approx(2 * 70.6e9 * 1500 / (2 * 1979e12), rel=1e-12)
    assert r.decode_step_seconds(1, 0) == pytest.approx(70.6e9 / (2 * 3.35e12), rel=1e-12)
    with pytest.raises(UserError, match="a fraction of the peak"):
        Efficiency(compute=1.5)
    with pytest.raises(UserError, match="no FP8 tensor cores"):
        Replica(gpu("a100-80gb"), L70, tp=4, dtype="fp8")


def test_kv_left_after_the_weights():
    # 2 x 80 GB x 0.9 = 144e9 bytes; less 141.2e9 of weights: 2.8e9 / 327,680 = 8,544 tokens
    assert Replica(H100, L70, tp=2).kv_tokens == int(2.8e9 // 327_680) == 8_544
    assert Replica(H100, L70, tp=1).kv_tokens == 0   # the weights alone do not fit one H100
    # llama-3.1-8b on one H100: 72e9 - 16.06e9 = 55.94e9 / 131,072 = 426,788 tokens
    assert Replica(H100, open_model("llama-3.1-8b")).kv_tokens == int(55.94e9 // 131_072)
