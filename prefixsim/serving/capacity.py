"""How many GPUs a request rate needs: each request's uncached prefill and its decoded tokens
against what one replica does in a second.

A request of P prompt tokens, of which the prefix cache serves a share h (the hit rate the engine
simulation measures), prefills n = P x (1 - h) tokens over a cached context of P x h, and decodes
`output` tokens in a batch of B running sequences:

    seconds(request) = prefill(n, P x h) + output x decode step(B, context) / B
    replicas(rate)   = max(1, ceil(rate x seconds(request)))        GPUs = replicas x tp

B is as many sequences as the KV left after the weights holds at their mean context (at most
`max_batch`, vLLM's max_num_seqs). Every second of a replica is either prefill or decode: no
headroom for bursts, no queueing (docs/rules.md#self-hosted-serving)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from prefixsim.serving.roofline import Replica

#: vLLM's default max_num_seqs: the most sequences one engine decodes in a step.
MAX_BATCH = 256


@dataclass(frozen=True, slots=True)
class Load:
    """One request as the GPUs see it: prompt tokens, the share the prefix cache served, output."""

    prompt: float
    hit_rate: float
    output: float

    @property
    def uncached(self) -> float:
        return self.prompt * (1 - self.hit_rate)

    @property
    def cached(self) -> float:
        return self.prompt * self.hit_rate

    @property
    def context(self) -> float:
        """The mean context while decoding: the prompt and half the output."""
        return self.prompt + self.output / 2


def decode_batch(replica: Replica, load: Load, max_batch: int = MAX_BATCH) -> int:
    """Running sequences the replica's KV holds at the load's mean context (at least 1)."""
    return max(1, min(max_batch, int(replica.kv_tokens // math.ceil(load.context))))


@dataclass(frozen=True, slots=True)
class Throughput:
    """What a replica spends on one request (seconds) and what it serves in a second."""

    prefill_s: float          # the request's prefill
    decode_s: float           # its share of the decode steps
    batch: int

    @property
    def seconds(self) -> float:
        return self.prefill_s + self.decode_s

    @property
    def requests_per_s(self) -> float:
        return 1 / self.seconds


def throughput(replica: Replica, load: Load, max_batch: int = MAX_BATCH) -> Throughput:
    batch = decode_batch(replica, load, max_batch)
    step = replica.decode_step_seconds(batch, load.context)
    return Throughput(replica.prefill_seconds(load.uncached, load.cached), load.output * step / batch, batch)


def replicas_needed(rate: float, seconds: float) -> int:
    """Replicas that serve `rate` requests a second of `seconds` each (at least one runs)."""
    return max(1, math.ceil(rate * seconds - 1e-9))


def gpus_needed(replica: Replica, load: Load, rate: float, max_batch: int = MAX_BATCH) -> int:
    return replica.tp * replicas_needed(rate, throughput(replica, load, max_batch).seconds)


def tokens_per_s(replica: Replica, load: Load, max_batch: int = MAX_BATCH) -> tuple[float, float]:
    """(uncached prefill tokens, decoded tokens) one replica serves a second at this load."""
    t = throughput(replica, load, max_batch)
    return load.uncached * t.requests_per_s, load.output * t.requests_per_s
