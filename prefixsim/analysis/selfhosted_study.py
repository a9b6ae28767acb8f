"""`prefixsim breakeven api-vs-selfhosted` as the CLI shows it: each side's cost of a request, the
cost a day at the rate asked, the rate where self-hosting becomes cheaper, the replica sizes behind
it, a chart of the two costs per 1M requests against the rate, and a reading that states what is
assumed."""
from __future__ import annotations

from dataclasses import asdict

from prefixsim.analysis import selfhosted as sh
from prefixsim.analysis.common import Prices
from prefixsim.analysis.study import Study
from prefixsim.analysis.study import k_tokens as _k
from prefixsim.core.dollars import usd
from prefixsim.latency.model import LatencyModel
from prefixsim.report.charts import LineChart, Mark, Series
from prefixsim.scenario.studyparams import SelfHostedParams
from prefixsim.serving.gpus import Gpu

MILLION = 1_000_000
DAY = 86_400


def _rate(rate: float) -> str:
    return f"{rate:,g} request{'' if rate == 1 else 's'} a second"


def per_s(rate: float | None) -> str:
    if rate is None:
        return "never"
    return f"{rate:,.3g} requests/s ({rate * DAY:,.0f} a day)"


def _sizes(pts: list[sh.Point]) -> list[dict]:
    """One row per replica size: its GPUs, KV tokens, decode batch, hit rate, replica-seconds a
    request, requests a second and the cost of 1M requests at full load."""
    return [{"gpus": pt.replica.tp, "kv_tokens": pt.replica.kv_tokens, "batch": pt.throughput.batch,
             "share_cached": round(pt.served.hit_rate, 6), "seconds": round(pt.throughput.seconds, 4),
             "requests_per_s": round(pt.throughput.requests_per_s, 3),
             "per_1m_usd": round(pt.usd_per_request * MILLION, 6)} for pt in pts]


def api_vs_selfhosted(p: Prices, f: SelfHostedParams, gpu: Gpu, latency: LatencyModel | None = None) -> Study:
    """The study; `latency`: the API side's latency model where a scenario sets one (its `latency:`),
    else the model's default."""
    api = float(sh.api_per_request(p, f))
    pts = sh.points(f, gpu)
    first, always = sh.crossing(pts, api)
    at, pt = sh.cost_at(pts, f.rate)
    n = sh.replicas(pt, f.rate)
    best = min(pts, key=lambda x: (x.usd_per_request, x.replica.tp))
    price = f.gpu_hour_usd or gpu.usd_per_hour
    served = f"{f.open_model} ({f.dtype}) on {gpu.name}, {f.engine}"
    sizes = sh.lengths(f)
    api_hit = sum([f.static, *sizes[:-1]]) / sum(sizes)
    sides = [
        {"figure": "serves", "api": f"{p.model}, Anthropic's cache", "self-hosted": served},
        {"figure": "prompt tokens read from the cache", "api": f"{api_hit:.1%}", "self-hosted": f"{best.served.hit_rate:.1%}"},
        {"figure": "cost per 1M requests (GPUs at full load)", "api": usd(api * MILLION),
         "self-hosted": f"{usd(best.usd_per_request * MILLION)} ({best.replica.tp} GPUs a replica)"},
        {"figure": "time to first token, p95", "api": f"{sh.api_ttft_p95(p, f, latency):.2f} s",
         "self-hosted": f"{best.ttft_p95():.2f} s (prefill, no queue)"},
    ]
    at_rate = [
        {"figure": "GPUs", "api": "-", "self-hosted": f"{n * pt.replica.tp:,} ({n:,} x {pt.replica.tp} {gpu.name})"},
        {"figure": "cost a day", "api": usd(api * f.rate * DAY), "self-hosted": usd(at * f.rate * DAY)},
        {"figure": "cost per 1M requests", "api": usd(api * MILLION), "self-hosted": usd(at * MILLION)},
        {"figure": "cheaper", "api": "yes" if api < at else "", "self-hosted": "yes" if at <= api else ""},
    ]
    cross = [{"figure": "self-hosting is cheaper from", "value": per_s(first)},
             {"figure": "and at every rate from", "value": per_s(always)}]
    table = [{"api_per_request_usd": api, "selfhosted_full_load_per_request_usd": best.usd_per_request,
              "rate_per_s": f.rate, "gpus_at_rate": n * pt.replica.tp, "api_per_day_usd": api * f.rate * DAY,
              "selfhosted_per_day_usd": at * f.rate * DAY, "selfhosted_cheaper_from_per_s": first,
              "selfhosted_cheaper_from_per_day": None if first is None else first * DAY,
              "cheaper_at_every_rate_from_per_s": always, "gpu_hour_usd": price}]
    low = (first or f.rate) / 10
    high = max(f.rate, always or f.rate) * 10
    rates = [low * (high / low) ** (i / 80) for i in range(81)]
    curve = []
    for r in rates:
        c, q = sh.cost_at(pts, r)
        curve.append({"rate_per_s": r, "requests_per_day": r * DAY, "gpus": sh.replicas(q, r) * q.replica.tp,
                      "api_per_1m_usd": api * MILLION, "selfhosted_per_1m_usd": c * MILLION})
    marks = [Mark(first, api * MILLION, f"cheaper from {first:,.3g}/s")] if first else []
    chart = LineChart(f"Self-hosting is cheaper than the API from {per_s(first)}" if first is not None else
                      "Self-hosting is never cheaper than the API", "requests a second (log scale)",
                      "USD per 1M requests", [Series("API", rates, [r["api_per_1m_usd"] for r in curve]),
                                              Series(f"self-hosted, {gpu.name}", rates,
                                                     [r["selfhosted_per_1m_usd"] for r in curve], "--", steps=True)],
                      marks, logx=True, note=f"API prices: {p.source}; GPU: {usd(price)}/h",
                      subtitle=f"API ({p.model}) vs self-hosted ({served}): sessions of {f.turns} turns, "
                               f"{_k(f.static)} static + {_k(f.growth)} a turn, {f.output} output tokens")
    verdict = ("self-hosting is never cheaper: a request costs more on the GPUs at full load than on the API"
               if first is None else
               f"self-hosting costs less from {per_s(first)}" + ("" if always == first else
                                                                  f", and at every rate from {per_s(always)}"))
    reading = (
        f"On the API a request of this design costs {usd(api)} ({p.model}, {api_hit:.1%} of its prompt read "
        f"from the cache); {f.open_model} ({f.dtype}) on {f.engine} serves it on {gpu.name} at {usd(price)} a GPU-hour "
        f"for {usd(best.usd_per_request)} at full load, and {verdict}. At {_rate(f.rate)} the GPUs cost "
        f"{usd(at * f.rate * DAY)} a day against {usd(api * f.rate * DAY)} on the API. "
        f"Assumed: sessions of {f.turns} turns over a {_k(f.static)}-token static prefix every session shares, "
        f"{_k(f.growth)} tokens a turn, {f.output} decoded, a turn every {f.pace:g} s; on the API the static "
        f"prefix is always cached ({f.ttl} writes); on the GPUs the hit rate is the {f.engine} cache's with the KV "
        f"the HBM holds after the weights, at full load ({best.served.how}); the roofline at "
        f"{f.compute_efficiency:g} of peak FLOPs and {f.memory_efficiency:g} of peak bandwidth; every GPU-second "
        "paid for, none idle by design, no headroom for bursts, no queueing, no attention FLOPs over the context, "
        "no tensor-parallel communication; the reply's KV, which the engines keep, is recomputed next turn; "
        f"time to first token: the API's from "
        + (f"the scenario's latency model ({latency.source})" if latency is not None
           else f"{p.model}'s default latency model (docs/rules.md#latency)")
        + ", the GPUs' their prefill alone. "
        f"Left out: that {f.open_model} is not {p.model} (quality is yours to weigh), engineering and operations, "
        "egress. GPU price: " + (f"-p gpu_hour_usd={price:g}" if f.gpu_hour_usd else gpu.price_source) + ".")
    params = asdict(f)
    return Study("api-vs-selfhosted", "API vs self-hosted", table, curve, chart, reading, params,
                 [("each side", sides), (f"at {_rate(f.rate)} ({f.rate * DAY:,.0f} a day)", at_rate),
                  ("the crossing", cross), ("replica sizes (the cheapest at each rate is used)", _sizes(pts))])

