"""What a replay gives: one row per request (observed against predicted usage, the cause, costs), the
accuracy figures and the summary over them (replay/run.py makes them; output.py, report/ print them)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from prefixsim.model import Cause, CauseKind, Usage
from prefixsim.replay.outside import Outside
from prefixsim.replay.whatif import WhatIf

#: Misses of something that was cached before: each one rebuilds a prefix the traffic had paid for.
REBUILD_CAUSES = frozenset({CauseKind.TTL_EXPIRED, CauseKind.PREFIX_CHANGED, CauseKind.COMPACTION,
                            CauseKind.MODEL_SWITCH, CauseKind.NOT_YET_AVAILABLE, CauseKind.LOOKBACK_EXCEEDED,
                            CauseKind.EVICTED})


@dataclass(frozen=True, slots=True)
class ReplayRow:
    """One request: observed usage (None when the log has none), prediction, cause, costs."""

    index: int
    request_id: str
    timestamp: str
    stream: str
    model: str
    observed: Usage | None
    predicted: Usage
    cause: Cause
    cost_observed: Decimal | None
    cost_predicted: Decimal
    naive_read: int | None
    path: str
    line: int
    provider: str = "anthropic"   # whose rules and prices predicted this row
    #: The prediction under the optimistic end of the provider's retention range (None: no range;
    #: `predicted` is then the only figure, else its pessimistic end).
    predicted_optimistic: Usage | None = None
    cost_predicted_optimistic: Decimal | None = None
    storage_usd: Decimal = Decimal(0)   # a Gemini explicit cache's, on its creation; in both costs
    #: False when nothing could price the request's model: its costs are $0 in the sums and missing
    #: in the output (replay/unpriced.py).
    priced: bool = True
    #: The source recorded usage but no prompt: `predicted` is empty and costs nothing, and every
    #: prediction column shows as not available (Record.audit).
    audit: bool = False
    #: An audited row's cost of the tokens its stream had cached that it did not read: what reading
    #: them would have saved, as its cause (inferred from usage) says (replay/audit_causes.py).
    lost_usd: Decimal | None = None
    lost_tokens: int = 0
    #: What the router billed for the request (Record.billed_usd), beside the computed prices.
    billed_usd: Decimal | None = None
    #: What the router says caching saved on it (Record.cache_discount_usd), beside billed_usd.
    cache_discount_usd: Decimal | None = None
    #: The priced model's tokens its rates cannot price (Record.unpriced, e.g. "audio tokens"): the
    #: row's cost is missing for that reason, not for want of a price.
    unpriced: str = ""
    #: The cost had nothing been read (a best-effort cache's pessimistic end: Gemini implicit caching).
    cost_no_cache: Decimal | None = None
    #: The cost at the pessimistic end of a range whose printed figure is neither end and whose pessimistic
    #: end still reads (a measured rule over a documented retention: DeepSeek's "hours to days").
    cost_predicted_pessimistic: Decimal | None = None

    @property
    def read_error(self) -> int | None:
        return None if self.observed is None else self.predicted.cache_read - self.observed.cache_read


@dataclass(frozen=True, slots=True)
class Figures:
    """Accuracy of one predictor of cache_read against the observed values (token- and request-weighted)."""

    exact: int
    compared: int
    wape: float | None          # sum |pred - obs| / sum obs, token-weighted
    read_share: float | None    # sum read / sum prompt tokens, token-weighted

    @property
    def exact_rate(self) -> float | None:
        return self.exact / self.compared if self.compared else None


@dataclass(frozen=True, slots=True)
class Summary:
    requests: int
    observed_requests: int
    read_share_observed: float | None
    prefixsim: Figures
    naive: Figures
    cost_observed_usd: Decimal | None
    cost_predicted_usd: Decimal
    causes: tuple[tuple[str, int], ...]
    streams: tuple[tuple[str, int, Decimal | None, Decimal], ...]   # stream, requests, observed, predicted $
    largest_mismatches: tuple[ReplayRow, ...]
    variant: WhatIf
    price_source: str
    output_in_cost: bool
    outside: Outside = Outside()   # reads of a cache no request in the data wrote (replay/outside.py)
    price_sources: frozenset[str] = frozenset()   # each source as priced; `price_source` joins them
    #: (model, provider, requests, why) of each model nothing could price: those requests' costs are missing.
    unpriced: tuple[tuple[str, str, int, str], ...] = ()
    audited: int = 0   # rows with usage but no prompt (ReplayRow.audit): in the observed figures only
    #: Recordings replayed after an earlier run of the same test (sources/earlier_run.py), and its calls.
    earlier_runs: int = 0
    earlier_calls: int = 0
    #: Requests before which an entry was taken as kept warm by traffic outside the data (Record.kept).
    kept_outside: int = 0
    #: Requests replayed after a call of a conversation whose transcript is not in the data (Record.absent).
    absent_conversations: int = 0
    #: New user turns replayed after the prompt-suggestion request of the turn before (Record.ended).
    prompt_suggestions: int = 0
    #: --since/--until as given ("" when none) and how many replayed requests fell outside it (replay/window.py).
    window: str = ""
    left_out: int = 0
    #: The named accounts (caches kept apart: Request.workspace) the traffic was sent in: a transcript
    #: folder holding several people's sessions (sources/claude_code/accounts.py); () for one account.
    accounts: tuple[str, ...] = ()


#: Summary fields counting calls stepped into the cache with no row (summed across shards as they are).
STEPPED_UNSEEN = ("earlier_runs", "earlier_calls", "kept_outside", "absent_conversations",
                  "prompt_suggestions")


@dataclass(frozen=True, slots=True)
class ReplayResult:
    rows: tuple[ReplayRow, ...]
    summary: Summary

    def to_dataframe(self):
        """One row per request (run's column names under observed_ / predicted_; NaN: no usage logged)."""
        import pandas as pd  # lazy: start-up: pandas loads only for a DataFrame

        # lazy: a replay printed as text never loads the JSON document
        from prefixsim.replay.output import usage_dict as _usage_dict

        recs = []
        for r in self.rows:
            o, p = r.observed, r.predicted
            na = r.audit   # no prompt recorded: the predicted columns are empty, not zero
            recs.append({"index": r.index, "request_id": r.request_id, "timestamp": r.timestamp,
                         "stream": r.stream, "model": r.model,
                         **{f"observed_{k}": (None if o is None else v) for k, v in _usage_dict(o or p).items()},
                         **{f"predicted_{k}": None if na else v for k, v in _usage_dict(p).items()},
                         "predicted_cache_write_5m_tokens": None if na else p.cache_write_5m,
                         "predicted_cache_write_1h_tokens": None if na else p.cache_write_1h,
                         "naive_cache_read_input_tokens": r.naive_read, "cause": r.cause.kind or None,
                         "cause_detail": r.cause.detail or None,
                         "cost_observed_usd": None if r.cost_observed is None else float(r.cost_observed),
                         "cost_predicted_usd": None if na else float(r.cost_predicted)})
        return pd.DataFrame.from_records(recs)
