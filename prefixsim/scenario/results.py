"""Results of simulated runs: one row per request, one summary per variant, one place that defines
every metric. Token hit rate = cache_read / (uncached + cache_write + cache_read), token-weighted."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from prefixsim.core.dollars import usd as usd_text
from prefixsim.engines.base import prefill_seconds
from prefixsim.model import Outcome

USD = Decimal("0.000001")

REQUEST_COLUMNS = ("label", "stream", "model", "t", "input_tokens", "cache_creation_input_tokens",
                   "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_read_input_tokens",
                   "output_tokens", "hit_rate", "cost_usd", "cause")
SUMMARY_COLUMNS = ("requests", "input_tokens", "cache_creation_input_tokens", "cache_write_5m_tokens",
                   "cache_write_1h_tokens", "cache_read_input_tokens", "output_tokens", "hit_rate",
                   "cost_usd", "cost_no_cache_usd", "savings_vs_no_cache")
#: Serving-engine runs only: GPU-seconds of prefill the cache saved and the request still spent.
GPU_COLUMNS = ("gpu_seconds_saved", "gpu_seconds_spent")
#: Runs under a rule whose retention is a documented range (OpenAI, DeepSeek, Gemini): the figures above
#: are the pessimistic bound, or for Gemini what traffic shows (`retention_bound`), these the same
#: traffic under the optimistic bound.
RANGE_COLUMNS = ("cache_read_input_tokens_optimistic", "hit_rate_optimistic", "cost_usd_optimistic")
#: Times to first token (every request's, s) and waits per turn on the critical path (scenario/critical.py).
LATENCY_COLUMNS = ("ttft_p50_s", "ttft_p95_s", "wait_p50_s", "wait_p95_s")
#: Runs that keep a Gemini explicit cache (create_cache): its storage, a cost line of its own that
#: `cost_usd` includes (the requests' rows carry it on the creating request).
STORAGE_COLUMNS = ("storage_usd",)


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
            "cause": str(o.cause), **({"storage_usd": usd(o.storage_usd)} if _creates(o) else {})}


def _creates(o: Outcome) -> bool:
    return o.call.cached is not None and o.call.cached.create


def summarize(outcomes: list[Outcome]) -> dict[str, Any]:
    """Sums of the rows; the hit rate is token-weighted over all prompt tokens."""
    tot = {k: 0 for k in ("input_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
                          "cache_read_input_tokens", "output_tokens")}
    cost = Decimal(0)
    no_cache = Decimal(0)
    kept = Decimal(0)
    stores = False
    for o in outcomes:
        u = o.usage
        tot["input_tokens"] += u.input_tokens
        tot["cache_write_5m_tokens"] += u.cache_write_5m
        tot["cache_write_1h_tokens"] += u.cache_write_1h
        tot["cache_read_input_tokens"] += u.cache_read
        tot["output_tokens"] += u.output_tokens
        cost += o.cost_usd + o.storage_usd
        no_cache += o.cost_no_cache_usd
        kept += o.storage_usd
        stores = stores or _creates(o)
    creation = tot["cache_write_5m_tokens"] + tot["cache_write_1h_tokens"]
    prompt = tot["input_tokens"] + creation + tot["cache_read_input_tokens"]
    return {"requests": len(outcomes), "input_tokens": tot["input_tokens"],
            "cache_creation_input_tokens": creation, "cache_write_5m_tokens": tot["cache_write_5m_tokens"],
            "cache_write_1h_tokens": tot["cache_write_1h_tokens"],
            "cache_read_input_tokens": tot["cache_read_input_tokens"], "output_tokens": tot["output_tokens"],
            "hit_rate": round(tot["cache_read_input_tokens"] / prompt, 6) if prompt else 0.0,
            "cost_usd": usd(cost), "cost_no_cache_usd": usd(no_cache),
            "savings_vs_no_cache": round(float(1 - cost / no_cache), 6) if no_cache else 0.0,
            **({"storage_usd": usd(kept)} if stores else {}),
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
    #: What the outcomes above are when there is a range: its "pessimistic" end, or "measured" (what
    #: public traffic shows, between the ends: Gemini's best-effort implicit cache, whose pessimistic end
    #: reads nothing, i.e. cost_no_cache_usd; DeepSeek's retention, 12 h where 1 h to 24 h is documented).
    bound: str = "pessimistic"
    #: Each request's time to first token and each turn's wait (None: an engine with no prefill rate).
    latency: Any = None
    #: A yardstick variant (`reference: true`): in the comparison, labelled, but no answer names it.
    reference: bool = False

    @property
    def base_variant(self) -> str:
        """The variant's own name, without the ` [param=value]` a sweep adds."""
        suffix = f" [{self.sweep_param}={self.sweep_value}]"
        return self.variant.removesuffix(suffix) if self.sweep_param is not None else self.variant

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<VariantResult {self.variant!r}: {s['requests']} requests, hit {s['hit_rate']:.1%}, "
                f"{usd_text(s['cost_usd'])}>")

    def stream_rows(self) -> list[dict[str, Any]]:
        """Costs split by stream: the main conversation, and each step's children together (`fork1`
        for the first fork's fork1.1, fork1.2, ...), so a shared warm-up is set apart from them."""
        groups: dict[str, list[Outcome]] = {}
        names: dict[str, set[str]] = {}
        for o in self.outcomes:
            g = stream_group(o.call.stream)
            groups.setdefault(g, []).append(o)
            names.setdefault(g, set()).add(o.call.stream)
        total = sum((o.cost_usd + o.storage_usd for o in self.outcomes), Decimal(0))
        out = []
        for g, outs in groups.items():
            s = summarize(outs)
            out.append({"stream": g, "streams": len(names[g]), **{k: v for k, v in s.items() if not k.startswith("_")},
                        "cost_share": round(float(s["_cost"] / total), 6) if total else 0.0})
        return out

    def rows(self) -> list[dict[str, Any]]:
        rows = [request_row(o) for o in self.outcomes]
        if self.self_hosted:
            for r in rows:
                r.update(self._gpu(r))
        if self.optimistic is not None:
            for r, o in zip(rows, self.optimistic):
                r.update(_bound("request", request_row(o)))
        if self.latency is not None:
            for r, t in zip(rows, self.latency.ttft):
                r["ttft_s"] = round(t, 3)
        return rows

    def summary(self) -> dict[str, Any]:
        """The variant's figures as plain numbers (what a table, the JSON and a DataFrame show);
        `cost_exact` is the same total as an exact Decimal."""
        return self.figures()[0]

    @property
    def cost_exact(self) -> Decimal:
        """The total cost (storage included) as an exact Decimal, before rounding to a micro-dollar:
        the figure designs are ranked and compared by."""
        return self._totals()["_cost"]

    def figures(self) -> tuple[dict[str, Any], Decimal]:
        """(summary(), cost_exact) from one pass over the outcomes."""
        t = self._totals()
        return {k: v for k, v in t.items() if not k.startswith("_")}, t["_cost"]

    def _totals(self) -> dict[str, Any]:
        s = summarize(self.outcomes)
        if self.self_hosted:
            s.update(self._gpu(s))
        if self.optimistic is not None:
            s.update(_bound("summary", summarize(self.optimistic), self.bound))
        if self.latency is not None:
            s.update(self.latency.figures())
        return s

    def _gpu(self, r: dict[str, Any]) -> dict[str, float | None]:
        """Prefill GPU-seconds next to a row's tokens: saved for the cached tokens, spent for the rest
        (engines have no write premium: everything not read is computed)."""
        rate = self.prefill_rate
        computed = r["input_tokens"] + r["cache_creation_input_tokens"]
        return {"gpu_seconds_saved": round(prefill_seconds(r["cache_read_input_tokens"], rate), 6) if rate else None,
                "gpu_seconds_spent": round(prefill_seconds(computed, rate), 6) if rate else None}


def _bound(kind: str, figures: dict[str, Any], bound: str = "pessimistic") -> dict[str, Any]:
    """The optimistic figures of a row or summary, under their own names, plus which bound the
    unsuffixed figures are."""
    out = {k: figures[k.removesuffix("_optimistic")] for k in RANGE_COLUMNS}
    if kind == "summary":
        out["retention_bound"] = bound
    return out


def stream_group(stream: str) -> str:
    """`fork1.3` -> `fork1`: the children of one step are one group; other streams are their own."""
    head, dot, tail = stream.rpartition(".")
    return head if dot and tail.isdigit() else stream


def _copies(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(r) for r in rows]


@functools.cache
def _frame_class():
    """A pandas DataFrame that, called, returns its rows as plain dicts (Python numbers, None for a
    missing figure): `res.comparison` is the notebook's table, `res.comparison()` the same rows for
    code that wants no pandas. Built on first use, so importing results does not import pandas."""
    import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

    class CallableFrame(pd.DataFrame):
        _metadata = ["_rows"]

        def __call__(self) -> list[dict[str, Any]]:
            return self._rows()

    return CallableFrame


@dataclass
class ScenarioResult:
    name: str
    path: str
    description: str | None
    variants: list[VariantResult]
    chart: Any = None
    question: str | None = None   # the design question (`question:`), the report's summary opens with it

    def __repr__(self) -> str:
        rows = self.comparison_rows()
        n = len(rows)
        head = f"<ScenarioResult {self.name!r}: {n} variant{'s' if n != 1 else ''}"
        if not rows:
            return head + ">"
        best = min(rows, key=lambda r: r["cost_usd"])
        return head + f", cheapest {best['variant']!r} {usd_text(best['cost_usd'])}>"

    def _sweep_columns(self, v: VariantResult) -> dict[str, Any]:
        return {} if v.sweep_param is None else {v.sweep_param: v.sweep_value}

    @property
    def requests(self):
        """Every request of every variant as a pandas DataFrame: a sweep's parameter is a column, the
        variant its plain name, and `cause` / `cause_detail` split as in replay results."""
        import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

        params = self._params()
        rows = []
        for v in self.variants:
            for r, o in zip(v.rows(), v.outcomes):
                rows.append({"scenario": self.name, "variant": v.base_variant, **self._sweep_columns(v), **r,
                             "cause": o.cause.kind or None, "cause_detail": o.cause.detail or None})
        return pd.DataFrame(rows, columns=["scenario", "variant", *params, *REQUEST_COLUMNS, "cause_detail"])

    @property
    def summary(self):
        """One row per variant (and sweep value) as a pandas DataFrame, with the comparison columns."""
        import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

        rows = [{**r, "variant": v.base_variant, **self._sweep_columns(v)}
                for v, r in zip(self.variants, self.comparison_rows())]
        return pd.DataFrame(rows, columns=["scenario", "variant", *self._params(), *SUMMARY_COLUMNS, "vs_cheapest"])

    @property
    def comparison(self):
        """The comparison of variants as a DataFrame (every summary column, GPU-seconds and the
        optimistic bound where they apply; `vs_cheapest` within each sweep value). Calling it,
        `res.comparison()`, gives the same rows as dicts, with the same keys in the same order."""
        rows = [{k: val for k, val in r.items() if not k.startswith("_")} for r in ranked_comparison(self)]
        for r, v in zip(rows, self.variants):
            r["variant"] = v.base_variant
        cols = list(dict.fromkeys(["scenario", "variant", *self._params(), *(k for r in rows for k in r)]))
        # the called form gives these very rows, column for column (None where the frame has NaN)
        records = [{c: r.get(c) for c in cols} for r in rows]
        df = _frame_class()(records, columns=cols)
        df._rows = functools.partial(_copies, records)
        return df

    @property
    def by_stream(self):
        """Costs split by stream group (main, compact, fork1, sub1, ...) per variant, as a DataFrame."""
        import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

        rows = [{"scenario": self.name, "variant": v.base_variant, **self._sweep_columns(v), **r}
                for v in self.variants for r in v.stream_rows()]
        return pd.DataFrame(rows)

    def _params(self) -> list[str]:
        return list(dict.fromkeys(v.sweep_param for v in self.variants if v.sweep_param is not None))

    def comparison_rows(self) -> list[dict[str, Any]]:
        sums = [(v, v._totals()) for v in self.variants]
        cheapest = min((s["_cost"] for _, s in sums), default=Decimal(0))
        out = []
        for v, s in sums:
            row = {"scenario": self.name, "variant": v.variant,
                   **{k: s[k] for k in (*SUMMARY_COLUMNS, *STORAGE_COLUMNS, *GPU_COLUMNS, *RANGE_COLUMNS,
                                                          "retention_bound", *LATENCY_COLUMNS)
                      if k in s}}
            row["vs_cheapest"] = round(float(s["_cost"] / cheapest), 6) if cheapest else 1.0
            out.append(row)
        return out

    def to_json(self) -> dict[str, Any]:
        variants = []
        for v in self.variants:
            s = v.summary()
            d = {"name": v.variant, "requests": v.rows(), "summary": s, "assumptions": v.assumptions}
            if v.sweep_param is not None:
                d["sweep"] = {"param": v.sweep_param, "value": v.sweep_value}
            variants.append(d)
        return {"name": self.name, "path": self.path, "description": self.description, "variants": variants}


def ranked_comparison(res: "ScenarioResult") -> list[dict[str, Any]]:
    """The comparison with `x cheapest` taken among designs that compare: at the same sweep value,
    of the same kind (provider APIs in dollars; engines have no dollar cost to divide by), and not
    references (`reference: true`)."""
    comp = res.comparison_rows()
    for v, row in zip(res.variants, comp):
        row["_base"] = v.base_variant
        row["_sweep_value"] = v.sweep_value
        row["_kind"] = v.self_hosted
        row["_reference"] = v.reference
        if v.sweep_param is not None:
            row[v.sweep_param] = v.sweep_value
    for row in comp:
        peers = [r for r in comp if r["_sweep_value"] == row["_sweep_value"] and r["_kind"] == row["_kind"]]
        # against the cheapest design: a reference (a yardstick) may be cheaper, and reads below 1.00x
        peers = [r for r in peers if not r["_reference"]] or peers
        cheapest = min(r["cost_usd"] for r in peers)
        row["vs_cheapest"] = None if row["_kind"] else (round(row["cost_usd"] / cheapest, 6) if cheapest else 1.0)
    return comp
