"""`prefixsim replay` as text: the table of requests with the summary, the what-if and the notes
(terminal or Markdown, `table_text`), one CSV row per request (`csv_text`) and an engine trace's
replay (`trace_text`). The JSON document is output.py's. Kept free of the scenario results and the
report tables: a replay printed as text loads neither."""
from __future__ import annotations

import csv
import importlib
import importlib.util
import io
import json
from decimal import Decimal
from typing import TYPE_CHECKING

from prefixsim.errors import UserError
from prefixsim.report.layout import DEFAULT_WIDTH, fit, wrap_block
from prefixsim.replay.audit_causes import audit_losses
from prefixsim.replay.billed import Billed, router_billing
from prefixsim.replay.ranges import disagreement, retention_range
from prefixsim.replay.unpriced import UNCLASSED, unclassed

if TYPE_CHECKING:
    from prefixsim.replay.run import Comparison, ReplayResult

#: Characters of each path part of a stream name shown in tables (the JSON keeps whole names).
SHORT_PART = 8


def csv_text(result: ReplayResult) -> str:
    """`--format csv`: one row per request (ReplayResult.to_dataframe, which needs pandas)."""
    df = result.to_dataframe()
    buf = io.StringIO()
    df.to_csv(buf, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue()


def grid(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    """A table of cells: Markdown, or fitted to DEFAULT_WIDTH with numbers right-aligned."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    # Numbers right-aligned, text left-aligned, as a reader scans them; text columns wrap to fit.
    def number(c: str) -> bool:
        return c[:1].isdigit() or c[:1] in "+-$"

    text = [not all(number(r[i]) for r in rows if r[i]) for i in range(len(header))]
    return fit(header, rows, [not t for t in text], DEFAULT_WIDTH, text, rule=False, right=number) + "\n"


def _n(v) -> str:
    return "" if v is None else f"{v:,}"


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.2f}%"


def _usd(v) -> str:
    return "n/a" if v is None else f"${v:,.4f}"


def short_streams(names) -> dict[str, str]:
    """Display names for stream keys: every path part but the last cut to SHORT_PART characters, or
    to as many more as keep two streams from showing alike (keys are whole paths, see
    sources.claude_code.session_key)."""
    names = sorted(set(names))
    parts = [n.split("/") for n in names]
    longest = max((len(p) for ps in parts for p in ps[:-1]), default=0)
    for width in range(SHORT_PART, longest + 1):
        shown = ["/".join([*(p[:width] for p in ps[:-1]), ps[-1]]) for ps in parts]
        if len(set(shown)) == len(shown):
            return dict(zip(names, shown))
    return {n: n for n in names}


def _cost(s, usd) -> str:
    """A summary cost, saying what it leaves out: requests whose model nothing could price."""
    n = sum(k for _, _, k, _ in s.unpriced)
    if not n:
        return _usd(usd)
    return "missing (no price)" if n == s.requests else f"{_usd(usd)} + {n:,} unpriced"


def _summary(result: ReplayResult, markdown: bool) -> list[str]:
    s = result.summary
    mine, naive = s.prefixsim, s.naive
    stats = [["requests", str(s.requests), f"{s.observed_requests} with observed usage", ""],
             ["cache_read exactly right", f"{mine.exact}/{mine.compared} ({_pct(mine.exact_rate)})",
              f"{naive.exact}/{naive.compared} ({_pct(naive.exact_rate)})", ""],
             ["cache_read WAPE", _pct(mine.wape), _pct(naive.wape), ""],
             ["read share", _pct(mine.read_share), _pct(naive.read_share), f"observed {_pct(s.read_share_observed)}"],
             ["cost" + ("" if s.output_in_cost else " (prompt side)"),
              "n/a" if s.audited == s.requests else _cost(s, s.cost_predicted_usd), "",
              f"observed {_cost(s, s.cost_observed_usd)}"]]
    return [("Summary (observed = the provider's usage; predicted = prefixsim's replay; "
             "naive = previous read + write within the TTL)\n"), grid(["", "prefixsim", "naive", ""], stats, markdown)]


def _audit(result: ReplayResult, name: dict[str, str], markdown: bool) -> list[str]:
    """Traffic recorded by its usage only (an OpenTelemetry trace, a gateway log without messages):
    what it says, the observed hit rate and cost of each stream, and why nothing is predicted."""
    n = result.summary.audited
    if not n:
        return []
    acc: dict[str, list] = {}
    for r in result.rows:
        if r.audit and r.observed is not None:
            a = acc.setdefault(r.stream, [0, 0, 0, 0, Decimal(0), 0])
            a[0] += 1
            a[1] += r.observed.prompt_tokens
            a[2] += r.observed.cache_read
            a[3] += r.observed.cache_creation
            a[4] += r.cost_observed or 0
            a[5] += not r.priced
    # a stream's unpriced requests are not $0: the cost says what it leaves out, as the summary's does
    lines = [[name[k], str(v[0]), _n(v[1]), _n(v[2]), _n(v[3]), _pct(v[2] / v[1] if v[1] else None),
              "missing (no price)" if v[5] == v[0] else _usd(v[4]) + (f" + {v[5]:,} unpriced" if v[5] else "")]
             for k, v in acc.items()]
    every = n == result.summary.requests
    text = (f"{'The input records' if every else f'{n} of {result.summary.requests} requests record'} usage only, "
            "no prompts: there is nothing to replay, so their predicted columns are n/a and the figures "
            "below are an audit of the observed usage (the prediction figures above leave them out).")
    out = ["\n" + wrap_block(text, DEFAULT_WIDTH, "") + "\n", "\nObserved hit rate by stream (audit):\n",
           grid(["stream", "requests", "prompt", "read", "written", "read share", "cost"], lines, markdown)]
    lost = audit_losses(result.rows)
    if lost:
        out += ["\nObserved misses by cause (audit; told from each stream's usage and timing, "
                "replay/audit_causes.py):\n",
                grid(["cause", "requests", "cached before, not read", "cost", "reading it would have saved"],
                     [[k, str(n), _n(t), _usd(c), _usd(x)] for k, n, t, c, x in lost], markdown)]
    return out


def _outside(result: ReplayResult) -> list[str]:
    o = result.summary.outside
    notes = []
    if o.requests:
        notes.append(
            f"{o.requests} request{'s' if o.requests > 1 else ''} read {o.tokens:,} tokens that no earlier "
            "request in the data wrote (a cache left by traffic outside the data, e.g. an earlier session): "
            "counted as errors above, as no replay of this data can know them; WAPE over the other requests "
            f"{_pct(o.wape_in_data)}.")
    if o.shorter_requests:
        n = o.shorter_requests
        whose = "their" if n > 1 else "its"
        notes.append(
            f"{n} request{'s' if n > 1 else ''} read {o.shorter_tokens:,} tokens fewer than the replay found "
            f"alive on {whose} prefix: the provider found a shorter prefix for a reason the data does not show "
            "(on Claude Code transcripts mostly a new user turn that read only the static prefix; "
            "docs/rules.md#reads-outside-the-data). Counted as errors above.")
    return ["\n" + "\n".join(wrap_block(t, DEFAULT_WIDTH, "") for t in notes) + "\n"] if notes else []


def _discount(b: Billed | None) -> str:
    """OpenRouter's own figure of what caching saved (`cache_discount`), "" when no request reports it."""
    if b is None or not b.discounted:
        return ""
    return (f" OpenRouter's cache_discount (what caching saved it says, negative where writes cost more than input) "
            f"for {b.discounted:,} request{'s' if b.discounted > 1 else ''}: {'-' if b.discount < 0 else ''}"
            f"${abs(b.discount):,.6f}.")


def _notes(result: ReplayResult, name: dict[str, str], markdown: bool) -> list[str]:
    s, out = result.summary, []
    span = retention_range(result.rows)   # audited rows have no prediction at either end
    if span is not None:
        opt = f"at its optimistic end read share {_pct(span.read_share_optimistic)}, cost {_usd(span.cost_optimistic)}."
        if span.cost_pessimistic is None:
            out.append(f"\nRetention is a documented range: the predicted figures above are its pessimistic end; {opt}\n")
        else:
            which = ", ".join(m for _, m in span.measured)
            out.append("\n" + wrap_block(
                f"Retention is a documented range: {which}'s implicit caching is best effort (no hit is promised), "
                f"so the range runs from nothing read (cost {_usd(span.cost_pessimistic)}) to every prefix kept "
                f"24 hours; the predicted figures above are neither end but what public traffic shows "
                f"(docs/rules.md#google-gemini)"
                + ("" if span.bound == "measured" else ", the other providers' figures the pessimistic end")
                + f"; {opt} Where the documentation and that traffic disagree: "
                + "; ".join(f"{m}: {disagreement(p, m)}" for p, m in span.measured) + ".",
                DEFAULT_WIDTH, "") + "\n")
    b = router_billing(result.rows)
    if b is not None and b.requests:
        out.append("\n" + wrap_block(
            f"Billed by the router (OpenRouter's usage.cost) for {b.requests:,} request{'s' if b.requests > 1 else ''}: "
            f"${b.billed:,.6f}; the same observed tokens at genai-prices' rates: ${b.observed:,.6f}.{_discount(b)}",
            DEFAULT_WIDTH, "") + "\n")
    elif _discount(b):
        out.append("\n" + wrap_block(_discount(b).lstrip(), DEFAULT_WIDTH, "") + "\n")
    kept = sum((r.storage_usd for r in result.rows), Decimal(0))
    if kept:
        out.append(f"\nExplicit caches' storage (creation to delete or expiry, as logged): ${kept:.6f}, "
                   "included in both costs.\n")
    for model, provider, n, why in s.unpriced:
        whose = f"{n:,} request{'s' if n > 1 else ''}"
        head = (f"{model} ({provider}): {whose} count {why.removeprefix(UNCLASSED)}, which genai-prices prices "
                "apart from text while prefixsim's token classes are text's, so their costs" if unclassed(why)
                else f"No price for {model} ({provider}) in the price data: the costs of its {whose}")
        out.append("\n" + wrap_block(f"{head} are missing (counted as $0 in the costs above; the cache figures "
                                      "need no price).", DEFAULT_WIDTH, "") + "\n")
    undocumented = _undocumented(result)
    if undocumented:
        out.append("\n" + wrap_block("Rules undocumented, replayed under a stated default with the observed usage as the "
                                     "truth (docs/rules.md#other-providers-behind-openai-compatible-endpoints, "
                                     "docs/rules.md#models-a-providers-tables-do-not-list): "
                                     + "; ".join(undocumented), DEFAULT_WIDTH, "") + "\n")
    if s.causes:
        out.append("\nMisses by cause: " + ", ".join(f"{k} {v}" for k, v in s.causes) + "\n")
    if s.largest_mismatches:
        out.append("\nLargest mismatches of cache_read (predicted - observed):\n")
        out.append(grid(["#", "stream", "observed", "predicted", "error", "cause"],
                        [[str(r.index), name[r.stream], _n(r.observed.cache_read), _n(r.predicted.cache_read),
                          f"{r.read_error:+,}", str(r.cause)[:90]] for r in s.largest_mismatches], markdown))
    return out


def _undocumented(result: ReplayResult) -> list[str]:
    """"provider model: what is the stated default" for each provider and model replayed under one."""
    from prefixsim.providers.others import rules_note   # lazy: a replay printed as text loads no rules otherwise
    from prefixsim.providers.registry import get_policy

    out = []
    for provider, model in sorted({(r.provider, r.model) for r in result.rows}):
        note = rules_note(get_policy(provider, listed_only=False), model)
        if note:
            out.append(f"{provider} {model} ({note.removesuffix(': stated default')})")
    return out


def _what_if(what_if: Comparison, name: dict[str, str], markdown: bool) -> list[str]:
    v = what_if.variant.summary.variant
    if what_if.base.summary.audited == what_if.base.summary.requests:   # no prompt: nothing to change
        return [f"\nWhat if {v.describe()}: not available; the input records usage only, no prompts to replay.\n"]
    lines = []
    for d in (*what_if.streams, what_if.total):
        lines.append([name.get(d.stream, d.stream), _usd(d.cost_base), _usd(d.cost_variant),
                      f"{'+' if d.cost_delta >= 0 else '-'}${abs(d.cost_delta):,.4f}", str(d.rebuilds_base), str(d.rebuilds_variant)])
    t = what_if.total
    fewer = t.rebuilds_base - t.rebuilds_variant
    return [f"\nWhat if {v.describe()} (cost as replayed -> under the variant):\n",
            grid(["stream", "cost", "cost what-if", "difference", "rebuilds", "rebuilds what-if"], lines, markdown),
            (f"\nThis traffic under {v.describe()}: {'+' if t.cost_delta >= 0 else '-'}${abs(t.cost_delta):,.2f}, "
             f"{abs(fewer)} {'fewer' if fewer >= 0 else 'more'} rebuilds.\n")]


def table_text(result: ReplayResult, what_if: Comparison | None = None, markdown: bool = False) -> str:
    """`--format table` (or `markdown`): every request observed vs predicted with the cause of each
    miss, the summary next to the naive mechanism's, the notes, and the what-if when there is one."""
    name = short_streams([r.stream for r in result.rows])
    head = ["#", "stream", "model", "read obs", "read pred", "write obs", "write pred", "uncached obs",
            "uncached pred", "cause"]
    rows = []
    for r in result.rows:
        o, p = r.observed, r.predicted
        pred = (lambda v: "n/a") if r.audit else _n   # no prompt recorded: nothing was predicted
        rows.append([str(r.index), name[r.stream], r.model, _n(o and o.cache_read), pred(p.cache_read),
                     _n(o and o.cache_creation), pred(p.cache_creation), _n(o and o.input_tokens),
                     pred(p.input_tokens), (f"audit: {r.cause}" if r.cause.kind else "audit: no prompt")[:90]
                     if r.audit else str(r.cause)[:90]])
    out = [grid(head, rows, markdown), "\n", *_summary(result, markdown), *_outside(result),
           *_audit(result, name, markdown), *_notes(result, name, markdown)]
    if what_if is not None:
        out += _what_if(what_if, name, markdown)
    out.append("\n" + wrap_block(f"Prices: {result.summary.price_source}", DEFAULT_WIDTH, "  ") + "\n")
    return "".join(out)


def trace_text(paths, kind: str, fmt: str, capacities, eviction: str, block_size: int | None) -> str:
    """A Mooncake / bailian trace replayed on a serving engine's cache: JSON, or the table of each
    capacity's hit rates (report/traces.py)."""
    if importlib.util.find_spec("prefixsim.engines.trace") is None:
        raise UserError(f"{kind} trace replay is not available in this version of prefixsim", str(paths[0]))
    # lazy: the engines load only for a trace (a transcript's replay loads none of them)
    trace = importlib.import_module("prefixsim.engines.trace")
    result = trace.replay_trace(list(paths), capacities=capacities, eviction=eviction,
                                block_size=block_size, fmt="json" if fmt == "json" else "table")
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    from prefixsim.report.traces import render_text  # lazy: with the engines, for a trace only

    return render_text(result)
