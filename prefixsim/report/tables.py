"""Results -> text: aligned terminal tables, Markdown, CSV and JSON, all deterministic."""
from __future__ import annotations

import json
from typing import Any, Collection, Sequence

from prefixsim.core.dollars import usd_cell
from prefixsim.report.answer import answers, asks_dearest
from prefixsim.report.csvout import csv_text  # noqa: F401 (the commands and the report import it from here)
from prefixsim.report.layout import DEFAULT_WIDTH, dropped_note, fit_dropping, footnote_causes, KEEP_TEXT, MIN_TEXT, min_width, wrap_block
from prefixsim.providers.auto_text import best_effort
from prefixsim.providers.deepseek_tables import DEEPSEEK_MEASURED_TTL
from prefixsim.scenario.results import GPU_COLUMNS, ScenarioResult
from prefixsim.scenario.results import ranked_comparison as comparison_rows

HEADERS = {"cache_read_input_tokens": "read", "cache_write_5m_tokens": "write 5m", "cache_write_1h_tokens": "write 1h",
          "input_tokens": "uncached", "output_tokens": "output", "hit_rate": "hit", "cost_usd": "cost $",
          "cache_creation_input_tokens": "write", "cost_no_cache_usd": "no-cache $",
          "savings_vs_no_cache": "saved", "vs_cheapest": "x cheapest", "requests": "reqs",
          "gpu_seconds_saved": "GPU-s saved", "gpu_seconds_spent": "GPU-s spent",
          "cache_read_input_tokens_optimistic": "read (opt.)", "hit_rate_optimistic": "hit (opt.)",
          "cost_usd_optimistic": "cost $ (opt.)", "streams": "streams", "cost_share": "share",
           "storage_usd": "storage $", "ttft_s": "TTFT s", "ttft": "TTFT p50/p95", "wait": "wait p50/p95"}
#: Said under a table with a storage column (Gemini explicit caches), so the two are not added twice.
STORAGE_NOTE = ("storage $: an explicit cache's storage from its creation to its delete or expiry, on the request that "
                "creates it; a variant's cost $ (and TOTAL) include it, a request's own cost $ does not")
#: Said under a variant whose retention is a range, so no figure is read as the only one.
RANGE_NOTE = ("retention is a documented range: read / hit / cost $ are the pessimistic bound, "
              "the (opt.) columns the optimistic bound")
#: A variant under Gemini's best-effort implicit cache (`VariantResult.bound` "measured").
MEASURED_NOTE = ("Gemini implicit caching is best effort, a documented range from nothing read (the no-cache cost) "
                 "to every prefix kept 24 h (the (opt.) columns); read / hit / cost $ are what public traffic shows "
                 "(docs/rules.md#google-gemini; the assumptions say where it and the documentation disagree)")
#: A variant under DeepSeek's retention as traffic shows it (`VariantResult.bound` "measured" too).
DEEPSEEK_NOTE = (f"DeepSeek's retention is documented as hours to days, read as 1 h to 24 h (the (opt.) columns its 24 h "
                 f"end); read / hit / cost $ are what public traffic shows, an entry kept {DEEPSEEK_MEASURED_TTL / 3600:.0f} h "
                 "idle (docs/rules.md#deepseek; the assumptions say where it and the documentation disagree)")
#: The same notes in a line each, for the terminal's comparison (the report and Markdown keep the above).
SHORT_NOTES = {RANGE_NOTE: "(opt.): the optimistic end of a documented retention range; read / hit / cost $ the "
                           "pessimistic end",
               MEASURED_NOTE: "Gemini implicit: read / hit / cost $ as traffic shows; (opt.): every prefix "
                              "kept 24 h (docs/rules.md#google-gemini)",
               DEEPSEEK_NOTE: f"DeepSeek: read / hit / cost $ as traffic shows, kept {DEEPSEEK_MEASURED_TTL / 3600:.0f} h "
                              "idle; (opt.): kept 24 h (docs/rules.md#deepseek)",
               STORAGE_NOTE: "storage $: an explicit cache's storage, included in cost $"}
TERMINAL_REQUEST = ("label", "stream", "model", "cache_read_input_tokens", "cache_write_5m_tokens",
                    "cache_write_1h_tokens", "input_tokens", "output_tokens", "hit_rate", "cost_usd", "cause")
TERMINAL_SUMMARY = ("variant", "requests", "cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens",
                    "output_tokens", "hit_rate", "cost_usd", "cost_no_cache_usd", "savings_vs_no_cache",
                    "vs_cheapest")
# Engine runs write nothing at a premium (no write columns) and show prefill GPU-seconds instead.
TERMINAL_ENGINE_REQUEST = ("label", "stream", "model", "cache_read_input_tokens", "input_tokens", "output_tokens",
                           "hit_rate", *GPU_COLUMNS, "cost_usd", "cause")
TERMINAL_ENGINE_SUMMARY = ("variant", "requests", "cache_read_input_tokens", "input_tokens", "output_tokens",
                           "hit_rate", *GPU_COLUMNS, "cost_usd")


def _range_note(v) -> str:
    """What a variant's figures are, its retention being a range: the pessimistic end, or what traffic
    shows (a measured rule: Gemini's best-effort implicit cache, DeepSeek's retention)."""
    if v.bound != "measured":
        return RANGE_NOTE
    return MEASURED_NOTE if best_effort(v.assumptions) else DEEPSEEK_NOTE


def fmt(key: str, v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):   # already a cell ("$0.0123", "never cheaper"): a money column may hold words
        return v
    if key in ("hit_rate", "savings_vs_no_cache", "hit_rate_optimistic", "cost_share"):
        return f"{100 * v:.1f}%"
    if key in ("cost_usd", "cost_no_cache_usd", "cost_usd_optimistic", "storage_usd"):
        return usd_cell(v)
    if key in GPU_COLUMNS:
        return f"{v:,.2f}"
    if key == "vs_cheapest":
        return f"{v:.2f}x"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def grid(rows: Sequence[dict], cols: Sequence[str], markdown: bool = False, max_cause: int = 72) -> str:
    head = [HEADERS.get(c, c) for c in cols]
    body = []
    for r in rows:
        cells = [fmt(c, r.get(c)) for c in cols]
        if "cause" in cols and not markdown:
            i = cols.index("cause")
            if len(cells[i]) > max_cause:
                cells[i] = cells[i][: max_cause - 1] + "…"
        body.append(cells)
    numeric = [c not in ("label", "stream", "model", "cause", "variant", "scenario") for c in cols]
    if markdown:
        esc = [[x.replace("|", "\\|") for x in row] for row in [head, *body]]
        def line(cells):
            return "| " + " | ".join(cells) + " |"

        sep = "|" + "|".join("---:" if n else "---" for n in numeric) + "|"
        return "\n".join([line(esc[0]), sep, *(line(r) for r in esc[1:])])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(cols))]
    def line(cells):
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths]), *(line(r) for r in body)])


#: Columns left out, in this order, when a table cannot otherwise fit a narrow terminal (a documented
#: range's optimistic hit rate before the stream: its cost $ (opt.) says what the answer rests on).
NARROW_DROPS = ("output_tokens", "wait", "cost_no_cache_usd", "savings_vs_no_cache", "ttft", "requests",
                "hit_rate_optimistic", "stream", "model")
_TEXT_COLS = ("label", "stream", "model", "cause", "variant", "scenario")


def _numeric(cols: Sequence[str]) -> list[bool]:
    return [c not in _TEXT_COLS for c in cols]


def _fit_grid(rows: Sequence[dict], cols: Sequence[str], width: int, notes: list[str] | None = None,
              keep_text: int = MIN_TEXT, bold: Collection[int] = ()) -> str:
    """A terminal table fitted to `width`; causes that do not fit become footnotes in `notes`."""
    body = [[fmt(c, r.get(c)) for c in cols] for r in rows]
    if "cause" in cols:
        i = cols.index("cause")
        others = [max([len(HEADERS.get(c, c))] + [len(b[j]) for b in body]) for j, c in enumerate(cols) if j != i]
        room = max(width - sum(others) - 2 * (len(cols) - 1), 24)
        cells, found = footnote_causes([b[i] for b in body], room)
        for b, c in zip(body, cells):
            b[i] = c
        if notes is not None:
            notes += found
    head = [HEADERS.get(c, c) for c in cols]
    wrap = [c in ("label", "variant", "cause") for c in cols]
    # a narrow terminal: leave out what the answer does not rest on, and say so under the table
    drops = [list(cols).index(c) for c in NARROW_DROPS if c in cols]
    text, dropped = fit_dropping(head, body, _numeric(cols), width, wrap, drops, keep_text=keep_text, bold=bold)
    note = dropped_note(dropped, width, min_width(head, body, wrap, keep_text))
    return text + ("\n" + note if note else "")


def _repeats(rows: Sequence[dict], col: str) -> bool:
    """A column that tells nothing the rest of the table does not: one value throughout (named once
    above the table instead), or a stream that is already the start of every label."""
    if col == "stream":
        return all(str(r.get("label") or "").startswith(str(r.get("stream") or "")) for r in rows)
    return len({r.get(col) for r in rows}) <= 1


def request_columns(v, rows: Sequence[dict], terminal: bool) -> tuple[str, ...]:
    cols = TERMINAL_ENGINE_REQUEST if v.self_hosted else TERMINAL_REQUEST
    if v.optimistic is not None:
        i = cols.index("cost_usd") + 1
        cols = (*cols[:i], "cache_read_input_tokens_optimistic", "cost_usd_optimistic", *cols[i:])
    cols = _with_storage(cols, rows)
    if not terminal:
        return cols
    drop = {c for c in ("stream", "model") if _repeats(rows, c)}
    if not v.self_hosted and not any(r["cache_write_1h_tokens"] for r in rows):   # 5m only: one write column
        cols = tuple("cache_creation_input_tokens" if c == "cache_write_5m_tokens" else c for c in cols)
        drop.add("cache_write_1h_tokens")
    if v.self_hosted and not any(r["cost_usd"] for r in rows):   # engines cost GPU time, not dollars
        drop.add("cost_usd")
    return tuple(c for c in cols if c not in drop)


def _sweep(res: ScenarioResult) -> tuple[str, list] | None:
    v0 = res.variants[0] if res.variants else None
    if v0 is None or v0.sweep_param is None:
        return None
    return v0.sweep_param, [v.sweep_value for v in res.variants]


def summary_columns(res: ScenarioResult, comp: Sequence[dict], terminal: bool) -> tuple[str, ...]:
    cols = TERMINAL_SUMMARY
    if all(v.self_hosted for v in res.variants):
        cols = TERMINAL_ENGINE_SUMMARY
        if terminal and not any(r["cost_usd"] for r in comp):
            cols = tuple(c for c in cols if c != "cost_usd")
    elif any(v.self_hosted for v in res.variants):  # engines next to provider APIs: both kinds of cost
        i = TERMINAL_SUMMARY.index("hit_rate") + 1
        cols = (*TERMINAL_SUMMARY[:i], *GPU_COLUMNS, *TERMINAL_SUMMARY[i:])
    if any(v.optimistic is not None for v in res.variants):
        i = cols.index("cost_usd") + 1
        cols = (*cols[:i], "hit_rate_optimistic", "cost_usd_optimistic", *cols[i:])
    cols = _with_storage(cols, comp)
    if terminal:   # saved says what no-cache $ does, beside cost $ (summary.csv, .md and JSON keep it)
        cols = tuple(c for c in cols if c != "cost_no_cache_usd")
    if terminal and len(comp) > 1 and _repeats(comp, "output_tokens"):   # caching moves no output token:
        cols = tuple(c for c in cols if c != "output_tokens")             # one figure throughout tells nothing
    sweep = _sweep(res)
    if sweep is not None:   # the swept value is a column of its own, the variant its plain name
        cols = (sweep[0], *cols)
    return cols


def seconds(x: float) -> str:
    """Seconds to two decimals, one from 10 s up (a cell stays narrow)."""
    return f"{x:.2f}" if round(x, 2) < 10 else f"{x:.1f}"   # 9.997 is 10.0, not 10.00


def with_latency(cols: tuple[str, ...], rows: list[dict]) -> tuple[str, ...]:
    """TTFT and wait per turn, p50/p95 in one cell each (scenario/critical.py), beside the cost: in
    the rows as text cells `ttft` and `wait`; no columns when no row has a latency, no wait column
    when every design's waits are its requests' times (the JSON and summary.csv keep both)."""
    if not any(r.get("ttft_p50_s") is not None for r in rows):
        return cols
    for r in rows:
        for key in ("ttft", "wait"):
            p50, p95 = r.get(f"{key}_p50_s"), r.get(f"{key}_p95_s")
            r[key] = "" if p50 is None else f"{seconds(p50)}/{seconds(p95)}"
    at = "cost_usd" if "cost_usd" in cols else GPU_COLUMNS[-1] if GPU_COLUMNS[-1] in cols else cols[-1]
    i = cols.index(at) + 1
    # a design whose every turn is one request waits what its requests take: the column would repeat
    waits = ["wait"] if any(r["wait"] != r["ttft"] for r in rows) else []
    return (*cols[:i], "ttft", *waits, *cols[i:])


def _with_storage(cols: tuple[str, ...], rows: Sequence[dict]) -> tuple[str, ...]:
    """A storage column before cost $ when a row keeps an explicit cache (the rows carry storage_usd
    only then): every other table keeps its columns, byte for byte."""
    if "cost_usd" not in cols or not any("storage_usd" in r for r in rows):
        return cols
    i = cols.index("cost_usd")
    return (*cols[:i], "storage_usd", *cols[i:])


def scenario_text(res: ScenarioResult, markdown: bool = False, requests: bool = True,
                  width: int = DEFAULT_WIDTH, by_stream: bool = False, bold: bool = False,
                  answer: Sequence[str] | None = None) -> str:
    """One scenario as text: (per-request tables,) the comparison of variants and the answer line(s).
    Terminal text fits `width`; Markdown is left to its renderer. `bold`: the winning rows of the
    comparison in ANSI bold (only for a terminal that takes it: commands/common.py emphasis).
    `answer`: the lines that answer the question instead of the comparison's (a scenario with
    `optimize:` is answered by its design search: report/best_design.py)."""
    title = f"{res.name}  ({res.path})"   # on a terminal too narrow for both, the path under the name
    out = [f"## {res.name}" if markdown else title if len(title) <= width else f"{res.name}\n  ({res.path})"]
    # The terminal leads with the question and its answer; the description is the report's (and
    # Markdown's), so a folder of scenarios reads on one screen per few scenarios.
    if res.description and (markdown or not res.question):
        out.append(res.description.strip() if markdown else wrap_block(res.description, width))
    comp = comparison_rows(res)
    sweep = _sweep(res)
    if requests:
        for v, s in zip(res.variants, comp):
            out.append("")
            rows = v.rows()
            cols = request_columns(v, rows, not markdown)
            shown = "" if markdown or "model" in cols or not rows else f"  (model: {rows[0]['model']})"
            out.append(f"### variant: {v.variant}" if markdown else wrap_block(f"variant: {v.variant}{shown}", width, "    "))
            if v.optimistic is not None:
                note = _range_note(v)
                out.append(note if markdown else wrap_block(note, width))
            if "storage_usd" in cols:
                out.append(STORAGE_NOTE if markdown else wrap_block(STORAGE_NOTE, width))
            total = {"label": "TOTAL", **{k: s[k] for k in cols if k in s}}
            if markdown:
                total = {k: (f"**{fmt(k, val)}**" if k != "label" else "**TOTAL**") for k, val in total.items()}
                out.append(grid(rows, cols, True) + "\n" + _md_total(total, cols))
            else:
                notes: list[str] = []
                out.append(_fit_grid(rows + [total], cols, width, notes))
                out += [wrap_block(n, width, " " * (n.index("]") + 2)) for n in notes]
    if by_stream:
        out.append("")
        out.append(f"{'### ' if markdown else ''}cost by stream")
        srows = [{"variant": v.variant, **r} for v in res.variants for r in v.stream_rows()]
        scols = ("variant", "stream", "streams", "requests", "cache_read_input_tokens", "cache_creation_input_tokens",
                 "input_tokens", "output_tokens", "cost_usd", "cost_share")
        out.append(grid(srows, scols, True) if markdown else _fit_grid(srows, scols, width))
    title = "comparison of variants" + (f", at each {sweep[0]} value" if sweep else "")
    if markdown or sweep or requests or by_stream:   # a lone table needs no title in a terminal
        if len(out) > 1:   # a blank line after what came before, none under the scenario's name
            out.append("")
        out.append(f"{'### ' if markdown else ''}{title}")
    for note in dict.fromkeys(_range_note(v) for v in res.variants if v.optimistic is not None):
        out.append(note if markdown else wrap_block(SHORT_NOTES[note], width))
    if any("storage_usd" in r for r in comp):
        out.append(STORAGE_NOTE if markdown else wrap_block(SHORT_NOTES[STORAGE_NOTE], width))
    cols = summary_columns(res, comp, not markdown)
    shown = shown_rows(comp, sweep is not None)
    cols = with_latency(cols, shown)
    out.append(grid(shown, cols, True) if markdown else
               _fit_grid(shown, cols, width, keep_text=KEEP_TEXT, bold=winners(comp, asks_dearest(res.question)) if bold else ()))
    if markdown:
        out.append("")
    if res.question:   # the question first, so the line under it reads as its answer
        q = f"question: {res.question.strip()}"
        out.append(f"**{q}**" if markdown else wrap_block(q, width, "    "))
    most = asks_dearest(res.question)
    for line in answer if answer is not None else answers(comp, [v.self_hosted for v in res.variants], sweep, most):
        out.append(line if markdown else wrap_block(line, width, "    "))
    return "\n".join(out)


#: How a reference variant is labelled in a comparison (it is never the answer: report/answer.py).
REFERENCE_LABEL = " (reference)"


def winners(comp: Sequence[dict], dearest: bool = False) -> set[int]:
    """The rows the answer names first: the cheapest, no reference, at 1.00x (each sweep value's own);
    `dearest` (the question asks what costs the most): the dearest design's (of each sweep value)."""
    designs = [(i, r) for i, r in enumerate(comp) if not r.get("_reference")]
    if not dearest:
        return {i for i, r in designs if r.get("vs_cheapest") == 1.0}
    top: dict = {}
    for _, r in designs:
        key = r.get("_sweep_value")
        top[key] = max(top.get(key, r["vs_cheapest"]), r["vs_cheapest"])
    return {i for i, r in designs if r["vs_cheapest"] == top[r.get("_sweep_value")]}


def shown_rows(comp: Sequence[dict], sweep: bool) -> list[dict]:
    """The comparison rows as tables show them: a sweep's variants by their plain name (the value is a
    column of its own), a reference variant labelled as one."""
    out = []
    for r in comp:
        name = r["_base"] if sweep else r["variant"]
        out.append({**r, "variant": name + (REFERENCE_LABEL if r.get("_reference") else "")})
    return out


def _md_total(total: dict, cols: Sequence[str]) -> str:
    return "| " + " | ".join(total.get(c, "") for c in cols) + " |"


def json_text(doc: Any) -> str:
    """The one JSON encoder of reports. allow_nan=False: NaN and Infinity are not JSON, so a report
    that would hold one fails loudly here (a bug: inputs are checked finite when they are read)."""
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False, allow_nan=False) + "\n"
