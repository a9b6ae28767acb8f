"""The `prefixsim replay --format json` document: one dict per request (`row_json`) and the summary with
an optional what-if (`summary_json`); `to_json` is both, and `json_chunks` its text as the command
streams it. Kept apart from replay.py, which computes the
figures these only serialise (money rounded to 6 places, rates to 6)."""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from prefixsim.replay.audit_causes import audit_losses
from prefixsim.replay.billed import router_billing
from prefixsim.replay.ranges import retention_range

if TYPE_CHECKING:
    from prefixsim.model import Usage
    from prefixsim.sources.problems import Problem
    from prefixsim.replay.compare import Comparison
    from prefixsim.replay.run import ReplayResult, ReplayRow


def usage_dict(u: Usage) -> dict[str, int]:
    return {"input_tokens": u.input_tokens, "cache_creation_input_tokens": u.cache_creation,
            "cache_read_input_tokens": u.cache_read}


def _money(d: Decimal | None) -> float | None:
    return None if d is None else float(round(d, 6))


def _rate(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def row_json(r: ReplayRow) -> dict:
    """One request as it appears in the `--format json` document's "requests" list."""
    doc = {"index": r.index, "request_id": r.request_id, "timestamp": r.timestamp, "stream": r.stream,
           "model": r.model, "provider": r.provider, "observed": None if r.observed is None else usage_dict(r.observed),
           "predicted": None if r.audit else {**usage_dict(r.predicted),
                                              "cache_write_5m_tokens": r.predicted.cache_write_5m,
                                              "cache_write_1h_tokens": r.predicted.cache_write_1h},
           "naive_cache_read_input_tokens": r.naive_read, "cause": r.cause.kind or None,
           "cause_detail": r.cause.detail or None,
           # a model nothing could price: its costs are missing (null), not $0
           "cost_observed_usd": _money(r.cost_observed) if r.priced else None,
           "cost_predicted_usd": _money(r.cost_predicted) if r.priced and not r.audit else None}
    if r.audit:   # usage recorded without its prompt: an audit row, nothing predicted
        doc["audit"] = True
        doc["lost_tokens"] = r.lost_tokens   # cached before, not read (its cause: told from usage)
        doc["lost_usd"] = _money(r.lost_usd) if r.lost_usd is not None else None
    if r.predicted_optimistic is not None:
        doc["predicted_optimistic"] = usage_dict(r.predicted_optimistic)
        doc["cost_predicted_optimistic_usd"] = _money(r.cost_predicted_optimistic) if r.priced else None
    if r.storage_usd:
        doc["storage_usd"] = _money(r.storage_usd)
    if r.billed_usd is not None:   # the router's own charge (OpenRouter's usage.cost)
        doc["cost_billed_usd"] = _money(r.billed_usd)
    if r.cache_discount_usd is not None:   # what the router says caching saved (OpenRouter's cache_discount)
        doc["cache_discount_usd"] = _money(r.cache_discount_usd)
    return doc


def to_json(result: ReplayResult, what_if: Comparison | None = None, skipped: Sequence[Problem] = ()) -> dict:
    """The `--format json` document: {"requests": [...], "summary": {...}} (+ "what_if" for a variant,
    + "skipped": the lines its reading skipped, each with its reason, when there are any)."""
    doc = summary_json(result, what_if, skipped)
    return {"requests": [row_json(r) for r in result.rows], **doc}


def skipped_json(skipped: Sequence[Problem]) -> list[dict]:
    """Each skipped line (a request not replayed, or a line that held none) with where it is and why."""
    return [{"path": p.path, "line": p.line, "reason": p.message.removeprefix("skipped: ")} for p in skipped]


def summary_json(result: ReplayResult, what_if: Comparison | None = None, skipped: Sequence[Problem] = ()) -> dict:
    """The `--format json` document without its "requests": {"summary": {...}} (+ "what_if", "skipped")."""
    s = result.summary
    summary = {
        "requests": s.requests, "observed_requests": s.observed_requests,
        "read_share_observed": _rate(s.read_share_observed), "read_share_predicted": _rate(s.prefixsim.read_share),
        "read_share_naive": _rate(s.naive.read_share),
        "exact_match_predicted": s.prefixsim.exact, "exact_match_naive": s.naive.exact,
        "exact_match_rate_predicted": _rate(s.prefixsim.exact_rate), "exact_match_rate_naive": _rate(s.naive.exact_rate),
        "wape_predicted": _rate(s.prefixsim.wape), "wape_naive": _rate(s.naive.wape),
        "outside_requests": s.outside.requests, "outside_read_tokens": s.outside.tokens,
        "wape_predicted_in_data": _rate(s.outside.wape_in_data),
        "shorter_requests": s.outside.shorter_requests, "shorter_read_tokens": s.outside.shorter_tokens,
        "earlier_runs": s.earlier_runs, "earlier_run_calls": s.earlier_calls,
        "kept_outside_requests": s.kept_outside,
        "absent_conversation_requests": s.absent_conversations,
        "prompt_suggestion_requests": s.prompt_suggestions,
        "accounts": list(s.accounts),
        "cost_observed_usd": _money(s.cost_observed_usd), "cost_predicted_usd": None if s.requests and s.audited == s.requests else _money(s.cost_predicted_usd),
        "cost_includes_output": s.output_in_cost,
        "causes": dict(s.causes),
        "streams": [{"stream": k, "requests": n, "cost_observed_usd": _money(o), "cost_predicted_usd": _money(p)}
                    for k, n, o, p in s.streams],
        "largest_mismatches": [{"index": r.index, "request_id": r.request_id, "stream": r.stream,
                                "observed_cache_read": r.observed.cache_read if r.observed else None,
                                "predicted_cache_read": r.predicted.cache_read, "cause": r.cause.kind or None,
                                "cause_detail": r.cause.detail or None} for r in s.largest_mismatches],
        "variant": {"ttl": s.variant.ttl, "model": s.variant.model, "provider": s.variant.provider,
                    "breakpoints": s.variant.breakpoints},
        "price_source": s.price_source,
    }
    if s.unpriced:   # the costs above leave these requests out: nothing could price their model
        summary["unpriced"] = [{"model": m, "provider": p, "requests": n, "reason": why} for m, p, n, why in s.unpriced]
    if s.audited:   # rows recorded by their usage only: in the observed figures, never predicted
        summary["audited_requests"] = s.audited
        summary["audit_misses_by_cause"] = [
            {"cause": k, "requests": n, "lost_tokens": t, "cost_usd": _money(c) if c is not None else None,
             "lost_usd": _money(x) if x is not None else None} for k, n, t, c, x in audit_losses(result.rows)]
    b = router_billing(result.rows)
    if b is not None and b.requests:   # what the router says it charged, beside the observed tokens at genai-prices
        summary["billed"] = {"requests": b.requests, "cost_billed_usd": _money(b.billed),
                             "cost_observed_usd": _money(b.observed)}
    if b is not None and b.discounted:   # OpenRouter's own figure of what caching saved, beside what it billed
        summary.setdefault("billed", {})["cache_discount_usd"] = _money(b.discount)
        summary["billed"]["cache_discount_requests"] = b.discounted
    if any(r.storage_usd for r in result.rows):   # Gemini explicit caches: included in both costs
        summary["storage_usd"] = _money(sum((r.storage_usd for r in result.rows), Decimal(0)))
    span = retention_range(result.rows)
    if span is not None:
        # retention is a range: "predicted" figures are its pessimistic end (or, under a best-effort
        # cache, what traffic shows: then its pessimistic end, nothing read, is a figure of its own),
        # these its optimistic end (a request whose provider's retention is no range counts with its one figure)
        summary.update({"retention_bound": span.bound,
                        "read_share_predicted_optimistic": _rate(span.read_share_optimistic),
                        "cost_predicted_optimistic_usd": _money(span.cost_optimistic)})
        if span.cost_pessimistic is not None:
            summary["cost_predicted_pessimistic_usd"] = _money(span.cost_pessimistic)
    if s.window:   # --since/--until: the requests it left out of the sums (replay/window.py)
        summary["window"] = {"options": s.window, "left_out_requests": s.left_out}
    doc: dict = {"summary": summary}
    if what_if is not None:
        v = what_if.variant.summary.variant
        doc["what_if"] = {
            "variant": {"ttl": v.ttl, "model": v.model, "provider": v.provider, "breakpoints": v.breakpoints},
            "streams": [{"stream": d.stream, "cost_usd": _money(d.cost_base), "cost_what_if_usd": _money(d.cost_variant),
                         "cost_difference_usd": _money(d.cost_delta), "rebuilds": d.rebuilds_base,
                         "rebuilds_what_if": d.rebuilds_variant} for d in (*what_if.streams, what_if.total)],
            "summary": summary_json(what_if.variant)["summary"],
        }
    if skipped:
        doc["skipped"] = skipped_json(skipped)
    return doc


#: Characters of JSON gathered before each write to stdout.
JSON_CHUNK = 1 << 16


def json_chunks(base: ReplayResult, what_if: Comparison | None = None,
                skipped: Sequence[Problem] = ()) -> Iterator[str]:
    """The `--format json` document (`to_json`) as text, in pieces of about JSON_CHUNK characters:
    one request per line, each encoded by json's C encoder as it is reached, so neither the whole
    document nor its text is ever held (json.dumps with indent= is the pure-Python encoder). The
    summary and what-if parts, small, are indented as json.dumps(indent=2) would: the document
    parses to exactly `to_json(base, what_if, skipped)`."""
    row = json.JSONEncoder(ensure_ascii=False).encode
    parts: list[str] = ['{\n  "requests": [']
    size = 0
    for i, r in enumerate(base.rows):
        text = row(row_json(r))
        parts.append(("\n    " if i == 0 else ",\n    ") + text)
        size += len(text)
        if size >= JSON_CHUNK:
            yield "".join(parts)
            parts, size = [], 0
    parts.append("\n  ]," if base.rows else "],")
    rest = json.dumps(summary_json(base, what_if, skipped), indent=2, ensure_ascii=False)
    parts.append(rest[1:] + "\n")   # its keys, at the document's first level
    yield "".join(parts)
