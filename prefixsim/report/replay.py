"""`prefixsim replay` as text (terminal or Markdown, `table_text`): the money first (what the traffic
cost, what caching saved, what was lost and to which cause, split by --by: report/replay_money.py),
the what-if, the notes, then the accuracy against the observed usage in short; with --requests every
request observed vs predicted before it all. One CSV row per request (`csv_text`) and an engine
trace's replay (`trace_text`). The JSON document is output.py's. Tables fit the width as `run`'s do
(report/layout.py: no word split, long causes in footnotes, columns left out named). Kept free of
the scenario results and the report tables: a replay printed as text loads neither."""
from __future__ import annotations

import importlib
import importlib.util
import json
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING

from prefixsim.core.dollars import usd
from prefixsim.errors import UserError
from prefixsim.report.layout import DEFAULT_WIDTH, REPLAY_WIDTH, wrap_block
from prefixsim.report.replay_grid import _n, _pct, _usd, grid
from prefixsim.report.replay_money import by_rows, by_table, headline, what_if_by
from prefixsim.report.replay_ranges import range_notes
from prefixsim.report.replay_requests import mismatches, requests_table
from prefixsim.sources.earlier_run import GAP_SECONDS
from prefixsim.replay.audit_causes import audit_losses
from prefixsim.replay.billed import Billed, router_billing
from prefixsim.replay.money import money, short_keys
from prefixsim.replay.unpriced import UNCLASSED, unclassed

if TYPE_CHECKING:
    from prefixsim.replay.compare import Comparison
    from prefixsim.replay.run import ReplayResult

#: Characters of each path part of a stream name shown in tables (the JSON keeps whole names).
SHORT_PART = 8


def rows_csv(rows: list[dict], cols: list[str]) -> str:
    """Rows as CSV (report/csvout.py, not report/tables.py: a replay loads no scenario tables, test_startup)."""
    from prefixsim.report.csvout import csv_text as csv_text_of   # lazy: only --format csv writes CSV

    return csv_text_of(rows, cols)


def csv_text(result: ReplayResult, requests: bool = False, lost=None, by: str = "day") -> str:
    """`--format csv`: the money table's rows split `by` (what `table` prints first; `lost` as
    table_text takes it), or with `requests` one row per request (ReplayResult.to_dataframe, which
    needs pandas)."""
    if not requests:
        rows = by_rows(money(result, lost, by))
        return rows_csv(rows, list(rows[0]) if rows else [by])
    df = result.to_dataframe()
    records = df.astype(object).where(df.notna(), None).to_dict("records")   # NaN: an empty cell, as pandas wrote
    from prefixsim.report.csvout import csv_text as csv_text_of   # lazy: as above

    return csv_text_of(records, list(df.columns))


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


def _summary(result: ReplayResult, markdown: bool, width: int = DEFAULT_WIDTH) -> list[str]:
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
    return ["\n" + wrap_block("Accuracy against the observed usage (observed = the provider's usage; predicted = "
                               "prefixsim's replay; naive = previous read + write within the TTL):", width) + "\n",
            grid(["", "prefixsim", "naive", ""], stats, markdown, width, drops=(3,))]


def accuracy(result: ReplayResult, width: int) -> list[str]:
    """The default's accuracy against the observed usage, in a few sentences (--requests: the table)."""
    s = result.summary
    mine, naive, o = s.prefixsim, s.naive, s.outside
    if not mine.compared:
        return []
    inside = "" if not o.requests else (
        f" ({_pct(o.wape_in_data)} without the {o.requests:,} request{'s' if o.requests > 1 else ''} that read "
        f"{o.tokens:,} tokens no earlier request in the data wrote)")
    shorter = "" if not o.shorter_requests else (
        f" {o.shorter_requests:,} request{'s' if o.shorter_requests > 1 else ''} read {o.shorter_tokens:,} tokens "
        "fewer than the replay found alive (docs/rules.md#reads-outside-the-data).")
    text = (f"Accuracy against the observed usage (naive: previous read + write within the TTL; --requests: every "
            f"request): cache_read exactly right {mine.exact}/{mine.compared} ({_pct(mine.exact_rate)}), naive "
            f"{naive.exact}/{naive.compared} ({_pct(naive.exact_rate)}); WAPE {_pct(mine.wape)}{inside}, naive "
            f"{_pct(naive.wape)}; predicted cost {_cost(s, s.cost_predicted_usd)}.{shorter}"
            f"{' ' + _earlier(s) if s.earlier_runs else ''}{' ' + _kept(s, short=True) if s.kept_outside else ''}"
            f"{' ' + _absent(s, short=True) if s.absent_conversations else ''}"
            f"{' ' + _suggested(s, short=True) if s.prompt_suggestions else ''}")
    return ["\n" + wrap_block(text, width) + "\n"]


def _audit(result: ReplayResult, name: dict[str, str], markdown: bool, width: int = DEFAULT_WIDTH,
           requests: bool = True) -> list[str]:
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
            "below are an audit of the observed usage (the accuracy figures leave them out).")
    out = ["\n" + wrap_block(text, width, "") + "\n", "\nObserved hit rate by stream (audit):\n",
           grid(["stream", "requests", "prompt", "read", "written", "read share", "cost"], lines, markdown, width,
                drops=(2, 4))]
    lost = audit_losses(result.rows)
    if lost and requests:   # the money's misses by cause holds these; --requests adds their tokens
        out += ["\n" + wrap_block("Observed misses by cause (audit; told from each stream's usage and timing, "
                                  "replay/audit_causes.py):", width) + "\n",
                grid(["cause", "requests", "cached before, not read", "cost", "reading it would have saved"],
                     [[k, str(n), _n(t), _usd(c), _usd(x)] for k, n, t, c, x in lost], markdown, width)]
    return out


def _earlier(s) -> str:
    """That recordings were replayed after an earlier run of their test (sources/earlier_run.py)."""
    n, c = s.earlier_runs, s.earlier_calls
    return (f"{n} recording{'s' if n > 1 else ''} began on a warm cache (the first request read cached tokens): "
            f"replayed after an earlier run of the same test ({c:,} call{'s' if c > 1 else ''} ending "
            f"{GAP_SECONDS:.0f} s before: the requests that carry no reply of the model), which the cache holds "
            "and no row shows (docs/rules.md#an-earlier-run-of-a-recording).")


def _kept(s, short: bool = False) -> str:
    """That requests were replayed reading a prefix traffic outside the data keeps warm (Record.kept);
    `short`: the clause the accuracy paragraph carries (the notes under --requests say why)."""
    n = s.kept_outside
    if short:
        return (f"{n:,} request{'s' if n > 1 else ''} read a prefix kept warm outside the data "
                "(docs/rules.md#a-prefix-kept-warm-outside-the-data).")
    return (f"{n:,} request{'s' if n > 1 else ''} found nothing in the data keeping the cross-session prefix "
            f"cached and {'were' if n > 1 else 'was'} replayed reading it: Claude Code marks it with a global cache "
            "scope, so others' traffic keeps it warm, and earlier requests of the same version, type and model "
            "read it in that state more often than not (docs/rules.md#a-prefix-kept-warm-outside-the-data).")


def _absent(s, short: bool = False) -> str:
    """That compaction calls were replayed after the latest request of a conversation whose transcript
    is not in the data (Record.absent); `short`: the accuracy paragraph's clause."""
    n = s.absent_conversations
    if short:
        return (f"{n:,} compaction call{'s' if n > 1 else ''} forked a conversation whose transcript is not in the "
                "data (docs/rules.md#claude-code-harness).")
    return (f"{n:,} compaction call{'s' if n > 1 else ''} forked a conversation whose transcript is not in the data "
            "(deleted, or not copied, while its sub-agents' files stayed): replayed after that conversation's latest "
            "request, as large as the compaction's prompt less its instruction, which no row shows "
            "(docs/rules.md#claude-code-harness).")


def _suggested(s, short: bool = False) -> str:
    """That new user turns were replayed after the prompt-suggestion request of the turn before
    (Record.ended); `short`: the accuracy paragraph's clause."""
    n = s.prompt_suggestions
    if short:
        return (f"{n:,} new user turn{'s' if n > 1 else ''} read what a prompt-suggestion request cached "
                "(docs/rules.md#claude-code-harness).")
    return (f"{n:,} new user turn{'s' if n > 1 else ''} followed the prompt-suggestion request Claude Code sends when a "
            "turn ends, which its transcript does not log: it caches the turn through its reply as the next turn "
            "sends it, so the turn reads all but what the user typed; taken as sent where the session's latest new "
            "turn read past what its logged requests cached (docs/rules.md#claude-code-harness).")


def _accounts(s) -> str:
    """That a transcript folder was replayed as several people's accounts (sources/claude_code/accounts.py)."""
    n, names = len(s.accounts), s.accounts
    shown = ", ".join(names[:6]) + (f" and {n - 6} more" if n > 6 else "")
    return (f"The sessions name {n} people's home directories ({shown}): replayed as {n} accounts, whose caches "
            "are apart, so no one's request reads what another's wrote (a prompt cache is an organisation's; "
            "people sharing one API account would share it: docs/rules.md#claude-code-transcripts-parent-chain, "
            "\"Whose cache\").")


def _outside(result: ReplayResult, width: int = DEFAULT_WIDTH) -> list[str]:
    o, s = result.summary.outside, result.summary
    notes = []
    if s.earlier_runs:
        notes.append(_earlier(s))
    if s.kept_outside:
        notes.append(_kept(s))
    if s.absent_conversations:
        notes.append(_absent(s))
    if s.prompt_suggestions:
        notes.append(_suggested(s))
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
    return ["\n".join(wrap_block(t, width, "") for t in notes) + "\n"] if notes else []


def _discount(b: Billed | None) -> str:
    """OpenRouter's own figure of what caching saved (`cache_discount`), "" when no request reports it."""
    if b is None or not b.discounted:
        return ""
    return (f" OpenRouter's cache_discount (what caching saved it says, negative where writes cost more than input) "
            f"for {b.discounted:,} request{'s' if b.discounted > 1 else ''}: {'-' if b.discount < 0 else ''}"
            f"{usd(abs(b.discount))}.")


def _notes(result: ReplayResult, width: int = DEFAULT_WIDTH) -> list[str]:
    s, out = result.summary, []
    out += range_notes(result, width)
    b = router_billing(result.rows)
    if b is not None and b.requests:
        out.append("\n" + wrap_block(
            f"Billed by the router (OpenRouter's usage.cost) for {b.requests:,} request{'s' if b.requests > 1 else ''}: "
            f"{usd(b.billed)}; the same observed tokens at genai-prices' rates: {usd(b.observed)}.{_discount(b)}",
            width, "") + "\n")
    elif _discount(b):
        out.append("\n" + wrap_block(_discount(b).lstrip(), width, "") + "\n")
    kept = sum((r.storage_usd for r in result.rows), Decimal(0))
    if kept:
        out.append("\n" + wrap_block(f"Explicit caches' storage (creation to delete or expiry, as logged): {usd(kept)}, "
                                      "included in both costs.", width) + "\n")
    for model, provider, n, why in s.unpriced:
        whose = f"{n:,} request{'s' if n > 1 else ''}"
        head = (f"{model} ({provider}): {whose} count {why.removeprefix(UNCLASSED)}, which genai-prices prices "
                "apart from text while prefixsim's token classes are text's, so their costs" if unclassed(why)
                else f"No price for {model} ({provider}) in the price data: the costs of its {whose}")
        out.append("\n" + wrap_block(f"{head} are missing (counted as $0 in the costs above; the cache figures "
                                      "need no price).", width, "") + "\n")
    if len(s.accounts) > 1:
        out.append("\n" + wrap_block(_accounts(s), width, "") + "\n")
    undocumented = _undocumented(result)
    if undocumented:
        out.append("\n" + wrap_block("Rules undocumented, replayed under a stated default with the observed usage as the "
                                     "truth (docs/rules.md#other-providers-behind-openai-compatible-endpoints, "
                                     "docs/rules.md#models-a-providers-tables-do-not-list): "
                                     + "; ".join(undocumented), width, "") + "\n")
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


def _what_if(what_if: Comparison, name: dict[str, str], markdown: bool, width: int = DEFAULT_WIDTH,
             by: str | None = None) -> list[str]:
    """The what-if: per stream (--requests), or split as the money is (`by`), and its total."""
    v = what_if.variant.summary.variant
    if what_if.base.summary.audited == what_if.base.summary.requests:   # no prompt: nothing to change
        return [f"\nWhat if {v.describe()}: not available; the input records usage only, no prompts to replay.\n"]
    if by is not None:
        table = what_if_by(what_if, by, partial(grid, width=width), markdown)
    else:
        table = [_streams_what_if(what_if, name, markdown, width)]
    t = what_if.total
    fewer = t.rebuilds_base - t.rebuilds_variant
    return ["\n" + wrap_block(f"What if {v.describe()} (cost as replayed -> under the variant):", width) + "\n",
            *table,
            "\n" + wrap_block(f"This traffic under {v.describe()}: {'+' if t.cost_delta >= 0 else '-'}"
                              f"{usd(abs(t.cost_delta))}, {abs(fewer)} {'fewer' if fewer >= 0 else 'more'} rebuilds.",
                              width) + "\n"]


def _streams_what_if(what_if: Comparison, name: dict[str, str], markdown: bool, width: int) -> str:
    lines = []
    for d in (*what_if.streams, what_if.total):
        lines.append([name.get(d.stream, d.stream), _usd(d.cost_base), _usd(d.cost_variant),
                      f"{'+' if d.cost_delta >= 0 else '-'}{usd(abs(d.cost_delta))}", str(d.rebuilds_base), str(d.rebuilds_variant)])
    return grid(["stream", "cost", "cost what-if", "difference", "rebuilds", "rebuilds what-if"], lines, markdown, width)


def _prices(result: ReplayResult, every: bool, width: int) -> str:
    """Where the prices came from: every model's source with --requests, else each source in short."""
    s = result.summary
    text = s.price_source if every else short_sources(s.price_sources)
    return "\n" + wrap_block(f"Prices: {text}", width, "  ") + "\n"


def short_sources(sources) -> str:
    """Each price source once, with how many models it priced: "genai-prices 0.2.3 bundled data (5
    models)" (--requests names each model and its dates)."""
    models: dict[str, set[str]] = {}
    for src in sources:
        if src.startswith("no price"):   # a model nothing priced: said whole
            models.setdefault(src, set())
            continue
        origin, colon, item = src.partition(": ")
        models.setdefault(origin if colon else src, set()).add(item.split(",")[0] if colon else "")
    parts = []
    for origin, items in sorted(models.items()):
        n = len(items - {""})
        parts.append(f"{origin}, {n} model{'s' if n != 1 else ''}" if n else origin)
    return "; ".join(parts) + " (--requests: each)"


def table_text(result: ReplayResult, what_if: Comparison | None = None, markdown: bool = False,
               width: int = REPLAY_WIDTH, requests: bool = False, lost=None, by: str = "day") -> str:
    """`--format table` (or `markdown`): the money first (cost, what caching saved, what was lost and
    to which cause, split `by`), the what-if when there is one, the notes, the accuracy against the
    observed usage in short and the prices. `requests` puts every request observed vs predicted (with
    the cause of each miss) and the largest mismatches before it, shows every group and the what-if
    per stream. `lost`: each row's money lost (advise/attribution.py: `losses`, what `replay`
    passes), None or [] when not measured (an audited row's own usage-told loss still counts)."""
    name = short_keys([r.stream for r in result.rows])
    g = partial(grid, width=width)

    def wrap(text: str) -> str:
        return wrap_block(text, width)

    out: list[str] = []
    if requests:
        out += [*requests_table(result, name, markdown, width), *mismatches(result, name, markdown, width), "\n"]
    if result.rows:
        m = money(result, lost, by)
        out += [*headline(result, m, g, wrap, markdown), *by_table(m, g, wrap, markdown, requests)]
    if what_if is not None:
        out += _what_if(what_if, name, markdown, width, None if requests else by)
    out += [*_audit(result, name, markdown, width, requests), *_notes(result, width)]
    if requests:
        out += [*_summary(result, markdown, width), *_outside(result, width)]
    else:   # nothing to score where every request is an audit: --requests shows the empty table
        out += accuracy(result, width)
    out.append(_prices(result, requests, width))
    return "".join(out)


def trace_text(paths, kind: str, fmt: str, capacities, eviction: str, block_size: int | None,
               width: int = DEFAULT_WIDTH) -> str:
    """A Mooncake / bailian trace replayed on a serving engine's cache: JSON, or the table of each
    capacity's hit rates fitted to `width` (report/traces.py)."""
    if importlib.util.find_spec("prefixsim.engines.trace") is None:
        raise UserError(f"{kind} trace replay is not available in this version of prefixsim", str(paths[0]))
    # lazy: the engines load only for a trace (a transcript's replay loads none of them)
    trace = importlib.import_module("prefixsim.engines.trace")
    result = trace.replay_trace(list(paths), capacities=capacities, eviction=eviction,
                                block_size=block_size, fmt="json" if fmt == "json" else "table")
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":   # the capacity table's rows, as `table` prints them
        points = result["summary"].get("curve") or [result["summary"]]
        cols = [c for c in ("capacity_tokens", "hit_rate", "block_hit_rate", "hit_tokens", "evictions",
                            "prefill_gpu_seconds_saved") if c in points[0]]
        return rows_csv(points, cols)
    from prefixsim.report.traces import render_text  # lazy: with the engines, for a trace only

    return render_text(result, width)
