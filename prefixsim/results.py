"""Results of simulated runs: one row per request, one summary per variant, one place that defines
every metric. Token hit rate = cache_read / (uncached + cache_write + cache_read), token-weighted."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from .engines.base import prefill_seconds
from .model import Outcome

USD = Decimal("0.000001")

REQUEST_COLUMNS = ("label", "stream", "model", "t", "input_tokens", "cache_creation_input_tokens",
                   "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_read_input_tokens",
                   "output_tokens", "hit_rate", "cost_usd", "cause")
SUMMARY_COLUMNS = ("requests", "input_tokens", "cache_creation_input_tokens", "cache_write_5m_tokens",
                   "cache_write_1h_tokens", "cache_read_input_tokens", "output_tokens", "hit_rate",
                   "cost_usd", "cost_no_cache_usd", "savings_vs_no_cache")
#: Serving-engine runs only: GPU-seconds of prefill the cache saved and the request still spent.
GPU_COLUMNS = ("gpu_seconds_saved", "gpu_seconds_spent")
#: Runs under a rule whose retention is a documented range (OpenAI, DeepSeek): the figures above are
#: the pessimistic bound (`retention_bound`), these the same traffic under the optimistic bound.
RANGE_COLUMNS = ("cache_read_input_tokens_optimistic", "hit_rate_optimistic", "cost_usd_optimistic")


def usd(x: Decimal) -> float:
    """Money for display and JSON: exact decimals rounded once, to a micro-dollar."""
    return float(x.quantize(USD, rounding=ROUND_HALF_EVEN))


def request_row(o: Outcome) -> dict[str, Any]:
    u = o.usage
    return {"label": o.call.label, "stream": o.call.stream, "model": o.call.request.model,
            "t": round(o.call.t, 3), "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_creation, "cache_write_5m_tokens": u.cache_write_5m,
            "cache_write_1h_tokens": u.cache_write_1h, "cache_read_input_tokens": u.cache_read,
            "output_tokens": u.output_tokens, "hit_rate": round(u.hit_rate, 6), "cost_usd": usd(o.cost_usd),
            "cause": str(o.cause)}


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    """Sums of the rows; the hit rate is token-weighted over all prompt tokens."""
    tot = {k: 0 for k in ("input_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
                          "cache_read_input_tokens", "output_tokens")}
    cost = Decimal(0)
    no_cache = Decimal(0)
    for o in outcomes:
        u = o.usage
        tot["input_tokens"] += u.input_tokens
        tot["cache_write_5m_tokens"] += u.cache_write_5m
        tot["cache_write_1h_tokens"] += u.cache_write_1h
        tot["cache_read_input_tokens"] += u.cache_read
        tot["output_tokens"] += u.output_tokens
        cost += o.cost_usd
        no_cache += o.cost_no_cache_usd
    creation = tot["cache_write_5m_tokens"] + tot["cache_write_1h_tokens"]
    prompt = tot["input_tokens"] + creation + tot["cache_read_input_tokens"]
    return {"requests": len(outcomes), "input_tokens": tot["input_tokens"],
            "cache_creation_input_tokens": creation, "cache_write_5m_tokens": tot["cache_write_5m_tokens"],
            "cache_write_1h_tokens": tot["cache_write_1h_tokens"],
            "cache_read_input_tokens": tot["cache_read_input_tokens"], "output_tokens": tot["output_tokens"],
            "hit_rate": round(tot["cache_read_input_tokens"] / prompt, 6) if prompt else 0.0,
            "cost_usd": usd(cost), "cost_no_cache_usd": usd(no_cache),
            "savings_vs_no_cache": round(float(1 - cost / no_cache), 6) if no_cache else 0.0,
            "_cost": cost, "_no_cache": no_cache}


@dataclass
class VariantResult:
    scenario: str
    variant: str
    outcomes: list[Outcome]
    assumptions: dict[str, str] = field(default_factory=dict)
    sweep_param: str | None = None
    sweep_value: Any = None
    rates: dict[str, Any] = field(default_factory=dict)   # model -> pricing.Rates used for its rows
    #: A serving-engine run (provider vllm / sglang): its rows and summary add GPU_COLUMNS, at
    #: `prefill_rate` tokens/s (null figures when the scenario gives no rate).
    self_hosted: bool = False
    prefill_rate: float | None = None
    #: The same calls replayed under the optimistic end of a retention range (None: no range); the
    #: outcomes above are the pessimistic end, the figures shown by default.
    optimistic: list[Outcome] | None = None

    def rows(self) -> list[dict[str, Any]]:
        rows = [request_row(o) for o in self.outcomes]
        if self.self_hosted:
            for r in rows:
                r.update(self._gpu(r))
        if self.optimistic is not None:
            for r, o in zip(rows, self.optimistic):
                r.update(_bound("request", request_row(o)))
        return rows

    def summary(self) -> dict[str, Any]:
        s = summarize(self.outcomes)
        if self.self_hosted:
            s.update(self._gpu(s))
        if self.optimistic is not None:
            s.update(_bound("summary", summarize(self.optimistic)))
        return s

    def _gpu(self, r: dict[str, Any]) -> dict[str, float | None]:
        """Prefill GPU-seconds next to a row's tokens: saved for the cached tokens, spent for the rest
        (engines have no write premium: everything not read is computed)."""
        rate = self.prefill_rate
        computed = r["input_tokens"] + r["cache_creation_input_tokens"]
        return {"gpu_seconds_saved": round(prefill_seconds(r["cache_read_input_tokens"], rate), 6) if rate else None,
                "gpu_seconds_spent": round(prefill_seconds(computed, rate), 6) if rate else None}


def _bound(kind: str, figures: dict[str, Any]) -> dict[str, Any]:
    """The optimistic figures of a row or summary, under their own names, plus which bound the
    unsuffixed figures are."""
    out = {k: figures[k.removesuffix("_optimistic")] for k in RANGE_COLUMNS}
    if kind == "summary":
        out["retention_bound"] = "pessimistic"
    return out


@dataclass
class ScenarioResult:
    name: str
    path: str
    description: str | None
    variants: list[VariantResult]
    chart: Any = None

    @property
    def requests(self):
        """Every request of every variant as a pandas DataFrame."""
        import pandas as pd

        rows = [{"scenario": self.name, "variant": v.variant, **r} for v in self.variants for r in v.rows()]
        return pd.DataFrame(rows, columns=["scenario", "variant", *REQUEST_COLUMNS])

    @property
    def summary(self):
        """One row per variant as a pandas DataFrame, with the comparison columns."""
        import pandas as pd

        return pd.DataFrame(self.comparison(), columns=["scenario", "variant", *SUMMARY_COLUMNS,
                                                         "vs_cheapest"])

    def comparison(self) -> list[dict[str, Any]]:
        sums = [(v, v.summary()) for v in self.variants]
        cheapest = min((s["_cost"] for _, s in sums), default=Decimal(0))
        out = []
        for v, s in sums:
            row = {"scenario": self.name, "variant": v.variant,
                   **{k: s[k] for k in (*SUMMARY_COLUMNS, *GPU_COLUMNS, *RANGE_COLUMNS, "retention_bound")
                      if k in s}}
            row["vs_cheapest"] = round(float(s["_cost"] / cheapest), 6) if cheapest else 1.0
            out.append(row)
        return out

    def to_json(self) -> dict[str, Any]:
        variants = []
        for v in self.variants:
            s = {k: val for k, val in v.summary().items() if not k.startswith("_")}
            d = {"name": v.variant, "requests": v.rows(), "summary": s, "assumptions": v.assumptions}
            if v.sweep_param is not None:
                d["sweep"] = {"param": v.sweep_param, "value": v.sweep_value}
            variants.append(d)
        return {"name": self.name, "path": self.path, "description": self.description, "variants": variants}
