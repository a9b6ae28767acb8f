"""API vs self-hosted: one agent design priced on a provider's API and on rented GPUs, and the
request rate from which the GPUs cost less.

The design: sessions of T turns over a static prefix S (tools + system prompt, the same in every
session); turn k's prompt is L_k = S + k x g, and it decodes o tokens. On the API (Anthropic's rules,
A-PC; breakpoints on the system prompt and the last message), sessions run far closer together than
5 minutes at every rate the study draws, so S is always cached: turn 1 reads S and writes g, turn
k reads L_{k-1} and writes g (L_0 = S):

    api = (1 / T) x sum over k of [read L_{k-1} + write (L_k - L_{k-1}) + output o]       per request

On GPUs (serving/), a replica of tp GPUs spends s seconds a request (its roofline, at the hit rate the
engine simulation measures with the replica's KV at full load) and costs u = tp x price / 3600 a
second. At R requests a second it runs max(1, ceil(R x s)) replicas, so a request costs
ceil(R x s) x u / R. With a = u x s (a request's cost at full load):

    self-hosting is cheaper from R* = u / api            (if a < api; else never)
    and at every rate from       (K - 1) x u / api,      K = ceil(1 / (1 - a / api))

since on the K-th replica's range the cost per request is at most K / (K - 1) x a. (The first
replica is paid for from the first request: under R*, a request's share of it costs more than the
API.)"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal

from prefixsim.analysis.common import Builder, Prices, request, request_cost
from prefixsim.core.pricing import MTOK
from prefixsim.errors import UserError
from prefixsim.latency.defaults import default_for
from prefixsim.latency.model import LatencyModel, percentile
from prefixsim.model import Call, Layer
from prefixsim.scenario.studyparams import SIM_SESSIONS, SelfHostedParams
from prefixsim.serving.capacity import Load, Throughput, throughput
from prefixsim.serving.enginehit import engine_hit
from prefixsim.serving.gpus import Gpu
from prefixsim.serving.models import open_model
from prefixsim.serving.roofline import TP_SIZES, Efficiency, Replica

#: Rounds of measure-then-size: the hit rate sets the requests a replica serves, which set how many
#: sessions share its KV, which set the hit rate; it settles in two or three (the last is kept).
ROUNDS = 3
#: A hit rate this close to the previous round's has settled.
SETTLED = 0.005
#: Prompt tokens one measurement may simulate (two waves of sessions): about a second of the engine
#: simulation's block hashing. Fewer sessions are simulated when theirs would pass it.
SIM_TOKENS = 400_000


def lengths(f: SelfHostedParams) -> list[int]:
    return [f.static + k * f.growth for k in range(1, f.turns + 1)]


def _output(p: Prices, tokens: int, prompt: int) -> Decimal:
    rate = p.rates.output.at(prompt) / MTOK if p.rates is not None else p.output
    return tokens * rate


def session_cost(p: Prices, f: SelfHostedParams, static: int, sizes: list[int], warm: bool = True,
                 outputs: list[int] | None = None) -> Decimal:
    """One session's API cost (input and output) at the prompt sizes sent (`outputs`: each request's
    output tokens, default the design's): each turn reads the turn before it, the first the shared
    static prefix when `warm`, nothing when cold."""
    m = p.min_tokens()
    total, before = Decimal(0), (static if warm and static >= m else 0)
    for length, out in zip(sizes, outputs or [f.output] * len(sizes)):
        total += request_cost(p, f.ttl, m, length, before if before >= m else 0) + _output(p, out, length)
        before = length
    return total


def api_per_request(p: Prices, f: SelfHostedParams) -> Decimal:
    return session_cost(p, f, f.static, lengths(f)) / f.turns


def api_ttft_p95(p: Prices, f: SelfHostedParams, latency: LatencyModel | None = None) -> float:
    """p95 time to first token of a warm session's requests: under `latency` (a scenario's own, its
    `latency:` section), else the model's default (A-LP)."""
    lm = latency or default_for(p.model)
    sizes, before = lengths(f), [f.static, *lengths(f)[:-1]]
    return percentile([lm.ttft(length - read, read) for length, read in zip(sizes, before)], 95)


def session_calls(model: str, f: SelfHostedParams, sessions: int, spacing: float, ttl: str | None = None,
                  b: Builder | None = None) -> list[Call]:
    """`sessions` sessions of the design, the i-th starting at i x spacing, a turn every `pace`;
    fixed-size blocks, breakpoints on the system prompt and the last message (`ttl`: the API's)."""
    b = b or Builder()
    system = b.blk("system", f.static, Layer.SYSTEM)
    calls = []
    for i in range(sessions):
        turns = [b.blk(f"s{i}-turn-{k}", f.growth) for k in range(f.turns)]
        for k in range(f.turns):
            req = request(model, [system, *turns[:k + 1]], [0, -1], ttl or f.ttl)
            calls.append(Call(i * spacing + k * f.pace, req, stream=f"s{i}", output_tokens=f.output))
    return calls


#: The engines' cache units: vLLM's 16-token blocks, SGLang's 1-token pages (their defaults).
UNIT = {"vllm": 16, "sglang": 1}


@dataclass(frozen=True)
class Served:
    """The prompt and cached tokens of each measured request, and how they were measured."""

    prompts: tuple[int, ...]
    reads: tuple[float, ...]
    how: str

    @property
    def hit_rate(self) -> float:
        return sum(self.reads) / sum(self.prompts)


def engine_reads(f: SelfHostedParams) -> Served:
    """A warm session on an engine whose KV holds it: turn 1 reads the static prefix, turn k all of
    turn k - 1, each in whole cache units (and below the prompt's last token, which is recomputed)."""
    unit, sizes = UNIT[f.engine], lengths(f)
    reads = tuple(min(prev // unit * unit, (length - 1) // unit * unit)
                  for prev, length in zip([f.static, *sizes[:-1]], sizes))
    return Served(tuple(sizes), reads, "every session in flight fits the KV cache: each turn reads the one before")


@dataclass(frozen=True)
class Point:
    """A replica at full load: its throughput at the hit rate served with `sessions` in flight."""

    replica: Replica
    load: Load
    throughput: Throughput
    sessions: float          # sessions in flight on one replica at full load
    served: Served
    price: float             # USD per GPU-hour

    @property
    def usd_per_s(self) -> float:
        """What the replica costs a second (u)."""
        return self.replica.tp * self.price / 3600

    @property
    def usd_per_request(self) -> float:
        """A request's cost at full load (a)."""
        return self.usd_per_s * self.throughput.seconds

    def ttft_p95(self) -> float:
        """p95 of the served requests' prefill (their time to first token, no queueing)."""
        return percentile([self.replica.prefill_seconds(n - r, r) for n, r in zip(self.served.prompts, self.served.reads)],
                          95)


def measure(f: SelfHostedParams, replica: Replica, t: Throughput, load: Load, in_flight: float) -> Served:
    """The hit rate with `in_flight` sessions sharing the replica's KV. When the KV holds the static
    prefix once and every session in flight's own tokens at its longest, nothing they need is evicted (LRU frees the
    finished sessions first): each turn reads the one before (engine_reads; the check replays it on
    the engine). Else the engine simulation measures what eviction leaves of those reads: up to
    SIM_SESSIONS sessions in two waves (the second measured), the KV their share of the replica's
    (the static prefix one shared copy), every size divided by `scale` so the simulation hashes at
    most SIM_TOKENS prompt tokens; the share of the scaled design's reads the engine keeps applies
    to the full-size design's reads."""
    sizes, reads = lengths(f), engine_reads(f)
    if replica.kv_tokens >= f.static + math.ceil(in_flight) * (sizes[-1] - f.static + f.output):
        return reads
    n = max(1, min(SIM_SESSIONS, math.ceil(in_flight)))
    scale = max(1, math.ceil(2 * n * sum(sizes) / SIM_TOKENS))
    g = replace(f, static=max(1, f.static // scale), growth=max(1, f.growth // scale), output=max(1, f.output // scale))
    kv = replica.kv_tokens if in_flight <= n else f.static + (replica.kv_tokens - f.static) * n / in_flight
    kv_sim = max(int(kv / scale), lengths(g)[-1] + g.output)   # one request always fits (its replica was sized so)
    calls = session_calls(replica.model.name, g, 2 * n, f.turns * f.pace / n)
    # the scaled requests hold their KV as long as the full-size ones: rates divided by the scale
    prefill = (load.uncached / t.prefill_s if load.uncached and t.prefill_s else 1e9) / scale
    decode = 1 / replica.decode_step_seconds(t.batch, load.context) / scale
    m = engine_hit(calls, f.engine, kv_sim, prefill, decode)
    second = [o for o in m.outcomes if int(o.call.stream[1:]) >= n]
    kept = sum(o.usage.cache_read for o in second) / (n * sum(engine_reads(g).reads))
    said = f", sizes / {scale}" if scale > 1 else ""
    return Served(reads.prompts, tuple(r * min(1.0, kept) for r in reads.reads),
                  f"{f.engine}'s cache simulated: {n} of {in_flight:,.1f} sessions in flight on {kv:,.0f} KV tokens "
                  f"(their share of {replica.kv_tokens:,}{said}) kept {min(1.0, kept):.1%} of the reads")


def operating_point(f: SelfHostedParams, replica: Replica, price: float) -> Point:
    sizes = lengths(f)
    prompt = sum(sizes) / len(sizes)
    served = engine_reads(f)   # the start: every turn reads the one before
    for _ in range(ROUNDS):
        t = throughput(replica, Load(prompt, served.hit_rate, f.output), f.max_batch)
        again = measure(f, replica, t, Load(prompt, served.hit_rate, f.output), t.requests_per_s * f.pace)
        done = abs(again.hit_rate - served.hit_rate) < SETTLED
        served = again
        if done:
            break
    load = Load(prompt, served.hit_rate, f.output)
    t = throughput(replica, load, f.max_batch)
    return Point(replica, load, t, t.requests_per_s * f.pace, served, price)


def points(f: SelfHostedParams, gpu: Gpu) -> list[Point]:
    """A replica at full load for every tensor-parallel size whose KV holds one whole request."""
    model = open_model(f.open_model)
    eff = Efficiency(f.compute_efficiency, f.memory_efficiency)
    price = f.gpu_hour_usd or gpu.usd_per_hour
    need = lengths(f)[-1] + f.output
    out = [operating_point(f, r, price) for r in (Replica(gpu, model, tp, f.dtype, eff) for tp in TP_SIZES)
           if r.kv_tokens >= need]
    if not out:
        raise UserError(f"{f.open_model} at {f.dtype} does not fit {TP_SIZES[-1]} x {gpu.name} with the KV of one "
                        f"{need:,}-token request: a larger GPU, fp8 weights or a smaller model")
    return out


def replicas(pt: Point, rate: float) -> int:
    return max(1, math.ceil(rate * pt.throughput.seconds - 1e-9))


def cost_at(pts: list[Point], rate: float) -> tuple[float, Point]:
    """USD a request at `rate` requests a second on the cheapest replica size at that rate (the
    replicas running, shared by the requests), and that size."""
    return min(((replicas(pt, rate) * pt.usd_per_s / rate, pt) for pt in pts), key=lambda c: (c[0], c[1].replica.tp))


def _cheaper(pt: Point, api: float) -> list[tuple[float, float]]:
    """The rates (closed intervals) at which `pt`'s replicas cost less a request than `api`: on the
    k-th replica's range ((k - 1) / s, k / s] from k x u / api; every rate past K - 1 replicas."""
    a, u, s = pt.usd_per_request, pt.usd_per_s, pt.throughput.seconds
    if a >= api:
        return []
    k_all = math.ceil(1 / (1 - a / api) - 1e-12)
    out = [(max((k - 1) / s, k * u / api), k / s) for k in range(1, k_all)]
    return [(lo, hi) for lo, hi in out if lo <= hi] + [(max((k_all - 1) / s, k_all * u / api), math.inf)]


def crossing(pts: list[Point], api: float) -> tuple[float | None, float | None]:
    """(the lowest rate at which a replica size costs less a request than the API, the rate from which
    one does at every rate), requests a second; (None, None): never."""
    spans = sorted(span for pt in pts for span in _cheaper(pt, api))
    if not spans:
        return None, None
    always, reach = spans[0][0], spans[0][1]
    for lo, hi in spans[1:]:
        if lo > reach * (1 + 1e-12):   # a gap: the API is cheaper between reach and lo
            always = lo
        reach = max(reach, hi)
    return spans[0][0], always
