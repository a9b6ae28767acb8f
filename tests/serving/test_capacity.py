"""The GPUs a request rate needs on figures worked by hand, and the hit rate the engine simulation
measures at a replica's KV capacity."""
import math

import pytest

from prefixsim.model import Block, Call, Layer, Request
from prefixsim.serving.capacity import Load, decode_batch, gpus_needed, replicas_needed, throughput, tokens_per_s
from prefixsim.serving.enginehit import engine_hit
from prefixsim.serving.gpus import gpu
from prefixsim.serving.models import open_model
from prefixsim.serving.roofline import Replica

R4 = Replica(gpu("h100-sxm"), open_model("llama-3.1-70b"), tp=4)


def test_one_request_on_four_h100s_by_hand():
    # 31,500 prompt tokens, 30,000 of them cached, 300 output: context 31,650;
    # KV 4 x 72e9 - 141.2e9 = 146.8e9 / 327,680 = 447,998 tokens: 14 sequences of 31,650
    load = Load(31_500, 30_000 / 31_500, 300)
    assert (load.uncached, load.cached, load.context) == pytest.approx((1500, 30_000, 31_650))
    assert R4.kv_tokens == 447_998 and decode_batch(R4, load) == 447_998 // 31_650 == 14
    t = throughput(R4, load)
    prefill = 2 * 70.6e9 * 1500 / (4 * 989.5e12 * 0.5)              # 0.1070237 s, compute-bound
    step = (141.2e9 + 14 * 31_650 * 327_680) / (4 * 3.35e12 * 0.6)   # 0.03562127 s for 14 tokens
    assert t.prefill_s == pytest.approx(prefill, rel=1e-12) and t.decode_s == pytest.approx(300 * step / 14, rel=1e-12)
    assert t.seconds == pytest.approx(0.10702375 + 300 * 0.03562127 / 14, abs=1e-7)   # 0.8703367 s
    # 10 requests a second need ceil(8.70335) = 9 replicas, 36 GPUs
    assert replicas_needed(10, t.seconds) == 9 and gpus_needed(R4, load, 10) == 36
    prefill_tps, decode_tps = tokens_per_s(R4, load)
    assert (prefill_tps, decode_tps) == pytest.approx((1500 / t.seconds, 300 / t.seconds))


def test_replicas_are_whole_and_at_least_one():
    assert replicas_needed(0.001, 0.5) == 1
    assert replicas_needed(2, 0.5) == 1 and replicas_needed(2.0001, 0.5) == 2
    assert math.isclose(throughput(R4, Load(1000, 0.0, 0)).decode_s, 0.0)


def test_the_batch_is_capped_by_max_batch_and_is_at_least_one():
    r = Replica(gpu("h100-sxm"), open_model("llama-3.1-8b"))
    assert decode_batch(r, Load(100, 0, 0)) == 256 and decode_batch(r, Load(100, 0, 0), max_batch=8) == 8
    assert decode_batch(Replica(gpu("h100-sxm"), open_model("llama-3.1-70b"), tp=2), Load(100_000, 0, 0)) == 1


def _session(static: int, growth: int, turns: int, stream: str, start: float) -> list[Call]:
    system = Block(Layer.SYSTEM, b"system", "system", tokens=static)
    history = [Block(Layer.MESSAGES, f"{stream}-{k}".encode(), f"m{k}", tokens=growth) for k in range(turns)]
    return [Call(start + 10.0 * k, Request("llama-3.1-8b", (system, *history[:k + 1])), stream=stream)
            for k in range(turns)]


@pytest.mark.parametrize("engine,unit", [("vllm", 16), ("sglang", 1)])
def test_the_engine_measures_the_hit_of_a_warm_session(engine, unit):
    # session b starts after a ran: its turn 1 reads the shared 1,000-token system prompt, turn k
    # the whole of turn k - 1 (1,000 + 500 (k - 1)), in whole blocks of `unit`
    calls = _session(1000, 500, 3, "a", 0.0) + _session(1000, 500, 3, "b", 100.0)
    m = engine_hit(calls, engine, None, 1e4, 100.0, count=3)
    expected = [1000 // unit * unit, 1500 // unit * unit, 2000 // unit * unit]
    assert [o.usage.cache_read for o in m.outcomes] == expected
    assert m.hit_rate == pytest.approx(sum(expected) / (1500 + 2000 + 2500))


def test_a_small_kv_cache_evicts_and_hits_less():
    calls = [c for i in range(8) for c in _session(1000, 500, 3, f"s{i}", i * 1.0)]
    unlimited = engine_hit(calls, "vllm", None, 1e4, 100.0).hit_rate
    small = engine_hit(calls, "vllm", 4000, 1e4, 100.0).hit_rate
    assert small < unlimited
