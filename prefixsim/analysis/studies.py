"""The break-even studies as the CLI and the report show them: a crossing-point table, the curve
behind it, a chart and one plain-language sentence, each priced from a named source."""
from __future__ import annotations

import itertools
from dataclasses import asdict, replace
from typing import Callable

from prefixsim.analysis import fork_vs_subagent as fvs
from prefixsim.analysis import invalidation as inv
from prefixsim.analysis import minimum as mini
from prefixsim.analysis import stagger as stg
from prefixsim.analysis import ttl as ttlmod
from prefixsim.analysis.common import Prices
from prefixsim.analysis.gemini_explicit import study as explicit
from prefixsim.analysis.study import Study
from prefixsim.analysis.study import k_tokens as _k
from prefixsim.analysis.verify import verify
from prefixsim.core.dollars import usd
from prefixsim.core.pricing import PriceBook
from prefixsim.report.charts import LineChart, Mark, Series


def money(v: float) -> str:
    return usd(v, cell=True)   # one precision in every table cell and sentence (core/dollars.py)


def shown(rows: list[dict]) -> list[dict]:
    """A table as printed: money as money (JSON and CSV keep the numbers)."""
    def cell(k, v):
        if isinstance(v, bool):
            return "yes" if v else "no"
        if k.startswith("share_") and isinstance(v, float):
            return f"{v:.1%}"
        return money(v) if k.endswith("_usd") and isinstance(v, (int, float)) else v
    return [{k: cell(k, v) for k, v in row.items()} for row in rows]


#: What the fork-vs-subagent figures count and leave out (the reading and the README say it).
FORK_SCOPE = ("Counted: the children's input tokens (reads, writes, uncached) under Anthropic's rules, with the "
              "requests a fork really sends (N tool_use blocks and N placeholder results before each directive, "
              "so 10 or more children exceed the 20-block lookback and the first child writes the parent's "
              "history again), siblings launched {stagger:g} s apart with writes readable after {ttft:g} s. "
              "Left out: output tokens (the same replies either way), the parent's own turn before the spawn "
              "(it writes the parent's prompt in both designs), and the results the children return.")


def _design_label(f: fvs.ForkParams, varied: list[str]) -> str:
    """"4 children", then every other parameter the comparison varies ("4 children, turns=2")."""
    out = [f"{f.children} {'child' if f.children == 1 else 'children'}"]
    out += [f"{k}={getattr(f, k):g}" if isinstance(getattr(f, k), float) else f"{k}={getattr(f, k)}"
            for k in varied if k != "children"]
    return ", ".join(out)


def _fork_answer(answers: list[tuple[str, int | None]]) -> str:
    """The chart's title: from what history a fresh sub-agent is cheaper, for each design compared."""
    if len(answers) == 1:
        h = answers[0][1]
        return ("A fork is cheaper than a fresh sub-agent at every history" if h is None else
                "A fresh sub-agent is cheaper than a fork at every history" if h == 0 else
                f"A fresh sub-agent is cheaper than a fork past {_k(h)} tokens of history")
    return ("A fresh sub-agent is cheaper than a fork past " +
            ", ".join(f"{'never' if h is None else _k(h)} ({label})" for label, h in answers) + " tokens of history")


def fork_designs(f: fvs.ForkParams, lists: dict[str, list] | None = None) -> list[fvs.ForkParams]:
    """Every combination of the listed values (-p children=3,4,6), in the order given; the default
    comparison is over children 1, 2, 5, 8, 16 when no children value is named."""
    lists = dict(lists or {})
    keys = list(lists)
    return [replace(f, **dict(zip(keys, combo))) for combo in itertools.product(*(lists[k] for k in keys))] or [f]


def design_labels(f: fvs.ForkParams, lists: dict[str, list]) -> tuple[list[fvs.ForkParams], list[str]]:
    """The designs compared (default children list included) and their labels."""
    lists = lists if "children" in lists else {"children": list(fvs.DEFAULT_CHILDREN), **lists}
    designs = fork_designs(f, lists)
    varied = [k for k in lists if len(lists[k]) > 1]
    return designs, [_design_label(d, varied) for d in designs]


def fork_vs_subagent(p: Prices, f: fvs.ForkParams | None = None, lists: dict[str, list] | None = None,
                     max_history: int = 200_000) -> Study:
    """`lists`: the parameters given (-p or a scenario's `studies:`), each with its values; a list
    compares (one row and one line per combination). Every value given shows in the table and the
    reading; without `children` the study compares DEFAULT_CHILDREN."""
    f = f or fvs.ForkParams()
    given = dict(lists or {})
    lists = given if "children" in given else {"children": list(fvs.DEFAULT_CHILDREN), **given}
    designs = fork_designs(f, lists)
    varied = [k for k in lists if len(lists[k]) > 1]
    hs = list(range(0, max_history + 1, max_history // 40))
    xs = [h for h in sorted({1000, *hs, max_history}) if h >= 1000]
    table, curve, series, marks, sentences, answers = [], [], [], [], [], []
    for d in designs:
        label = _design_label(d, varied)
        h = fvs.crossing(p, d)
        answers.append((label, h))
        sub = fvs.sub_cost(p, d, fvs.sub_shape(d))
        exceeded = fvs.spawn_blocks(d.children) >= fvs.ANTHROPIC_LOOKBACK.value
        row = {k: getattr(d, k) for k in dict.fromkeys(["children", "turns", *varied, *given])}
        row.update({"sub_agent_cheaper_from": "never" if h is None else "always" if h == 0 else h,
                    "fork_at_0_history_usd": float(fvs.fork_cost(p, d, fvs.fork_shape(d, 0))),
                    "sub_agent_usd": float(sub), "lookback_exceeded": exceeded})
        table.append(row)
        for hh in hs:
            fork, _ = fvs.closed_form(p, d, hh)
            curve.append({**{k: getattr(d, k) for k in dict.fromkeys(["children", *varied])}, "history_tokens": hh,
                          "fork_usd": float(fork), "subagent_usd": float(sub)})
        series.append(Series(label, xs, [float(fvs.fork_cost(p, d, fvs.fork_shape(d, x)) / sub) for x in xs]))
        if h is not None and 1000 <= h <= max_history:
            marks.append(Mark(h, 1.0, f"{label}: {_k(h)}"))
        fork0 = float(fvs.fork_cost(p, d, fvs.fork_shape(d, 0)))
        who = (f"With {label}" + ("" if "turns" in varied else
                                  f" of {d.turns} {'turn' if d.turns == 1 else 'turns'} each"))
        if h is None:
            sentences.append(f"{who}, a fork is cheaper at every history up to {_k(fvs.MAX_HISTORY)} tokens "
                             f"(sub-agent design {usd(float(sub))}).")
        elif h == 0:
            sentences.append(f"{who}, a fresh sub-agent is cheaper at every history ({usd(float(sub))} against "
                             f"{usd(fork0)} for forks even with no history): the fork's inherited "
                             f"{_k(d.parent_static)} static prefix" + (" and the lookback miss" if exceeded else "")
                             + f" cost more than the sub-agent's {_k(d.sub_static)} static + {_k(d.task)} task.")
        else:
            sentences.append(f"{who}, a fork is cheaper while the parent's history is under {_k(h)} tokens; past "
                             f"that a fresh sub-agent ({_k(d.sub_static)} static + {_k(d.task)} task, "
                             f"{usd(float(sub))}) is cheaper" + (", sooner because the spawn exceeds the 20-block "
                                                                  "lookback" if exceeded else "") + ".")
    every = "  ".join(f"{k} {getattr(f, k)}" for k in ("turns", "parent_static", "sub_static", "task", "directive",
                                                       "call", "growth", "ttl") if k not in varied)
    chart = LineChart(_fork_answer(answers),
                      "parent history inherited by a fork (tokens, log scale)",
                      "fork cost ÷ sub-agent cost (above 1: sub-agent cheaper)",
                      series, marks, hlines=[(1.0, "break-even")], logx=True,
                      note=f"prices: {p.source}",
                      subtitle=(f"Fork vs fresh sub-agent, {f.turns} turns per child ({p.model})" if "turns" not in
                                varied else f"Fork vs fresh sub-agent ({p.model})") + f"\n{every}")
    tier = min((t for t, _ in p.rates.input.tiers), default=None) if p.rates else None
    asked = "; ".join(f"{k} {', '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in vs)}"
                      for k, vs in given.items())
    reading = (f"Asked: {asked}. " if asked else "") + " ".join(sentences) + " Every fork turn re-reads the whole history, a sub-agent's does not. " \
        + FORK_SCOPE.format(stagger=f.stagger, ttft=f.ttft) \
        + (f" A prompt over {_k(tier)} tokens pays {p.model}'s long-context rates for all its tokens (the jump "
           f"at the right of the chart)." if tier else "")
    params = asdict(f)
    for k, vs in (lists or {}).items():
        params[k] = list(vs) if len(vs) > 1 else vs[0]
    return Study("fork-vs-subagent", "Fork vs fresh sub-agent", table, curve, chart, reading, params)


#: Steady gaps (seconds) the ttl study answers for when --gaps names none.
TTL_GAPS = (60.0, 600.0, 1800.0, 5400.0)


def ttl(p: Prices, f: ttlmod.TTLParams | None = None, gaps: list[float] | None = None,
        steady: list[float] | None = None) -> Study:
    """`steady`: the gaps to answer "after how many requests do 1h writes win" for (default
    TTL_GAPS); `gaps`: observed gaps (--gaps-from), summarized and drawn under the curves."""
    f = f or ttlmod.TTLParams()
    steady = list(steady or TTL_GAPS)
    grid = sorted({*[10 * 1.25 ** i for i in range(37)], 299.0, 300.0, 3599.0, 3600.0})
    curve = ttlmod.curve(p, f, grid)
    k5, n5 = ttlmod.reads_to_pay_off(p, "5m")
    k1, n1 = ttlmod.reads_to_pay_off(p, "1h")
    payoff = [{"ttl": "5m", "write_multiplier": float(p.write_5m / p.input), "reads_to_pay_off": n5,
               "break_even_read_ratio": round(k5, 4)},
              {"ttl": "1h", "write_multiplier": float(p.write_1h / p.input), "reads_to_pay_off": n1,
               "break_even_read_ratio": round(k1, 4)}]
    wins = []
    for g in steady:
        n = ttlmod.requests_for_1h_to_win(p, g)
        per5, per1 = ttlmod.per_request(p, f, "5m", g), ttlmod.per_request(p, f, "1h", g)
        wins.append({"gap_s": g, "cost_per_request_5m_usd": float(per5), "cost_per_request_1h_usd": float(per1),
                     "requests_for_1h_to_win": n if n is not None else "never"})
    tables = [("reads before a write pays for itself", payoff),
              ("requests at a steady gap before 1h writes cost less in total than 5m", wins)]
    series = [Series("5-minute writes", grid, [r["cost_5m_usd"] for r in curve], steps=True),
              Series("1-hour writes", grid, [r["cost_1h_usd"] for r in curve], "--", steps=True),
              Series("no caching", grid, [r["cost_no_cache_usd"] for r in curve], ":")]
    chart = LineChart(f"A 5m write pays for itself after {n5} {'read' if n5 == 1 else 'reads'}, a 1h write after {n1}; "
                      "between 5 and 60 minutes idle only a 1h write is still read",
                      "gap since the previous request (seconds, log scale)", "cost of the request's prefix (USD)",
                      series, vlines=[(300, "5m TTL"), (3600, "1h TTL")], logx=True, note=f"prices: {p.source}",
                      subtitle=f"Cost per request vs idle gap, {_k(f.prefix)}-token prefix ({p.model})")
    said = ", ".join(f"{g:g} s: {'never' if r['requests_for_1h_to_win'] == 'never' else 'from request ' + str(r['requests_for_1h_to_win'])}"
                     for g, r in zip(steady, wins))
    reading = (f"A 5-minute write pays for itself after {n5} read, a 1-hour write after {n1}. At a steady gap, "
               f"1h writes cost less in total ({said}); below 5 minutes they only add the "
               f"{float(p.write_1h / p.write_5m):.1f}x first write, above an hour neither TTL helps. Counted: the "
               f"input cost of the {_k(f.prefix)}-token prefix; left out: the rest of each prompt and output tokens.")
    if gaps:
        d = ttlmod.distribution(p, f, gaps)
        tables.append(("observed gaps: expected cost per request", [d]))
        chart.rug = [g for g in gaps if g > 0]
        chart.rug_label = f"{len(gaps):,} observed gaps"
        reading += (f" On the {d['requests']:,} observed requests {d['cheaper']} is cheaper "
                    f"({usd(d['expected_5m_usd'])} vs {usd(d['expected_1h_usd'])} a request for 5m vs 1h; "
                    f"{d['share_gaps_5m_to_1h']:.0%} of gaps fall between 5 and 60 minutes).")
    table = [row for _, rows in tables for row in rows]
    return Study("ttl", "TTL choice: 5m vs 1h writes", table, curve, chart, reading,
                 {"prefix": f.prefix, "steady_gaps_s": steady}, tables)


def stagger(p: Prices, f: stg.StaggerParams | None = None) -> Study:
    f = f or stg.StaggerParams()
    delays = [round(0.25 * i, 2) for i in range(int(f.ttft * 8) + 1)]
    curve = stg.curve(p, f, delays)
    held = float(stg.held_until_first_response(p, f))
    together = float(stg.closed_form(p, f, 0.0))
    d_star = next((r["stagger_s"] for r in curve if r["writers"] == 1), None)
    table = [{"design": "all launched together", "input_cost_usd": together, "writers": stg.writers(f, 0.0),
              "last_child_delay_s": 0.0},
             {"design": "held until the first response begins (Claude Code)", "input_cost_usd": held, "writers": 1,
              "last_child_delay_s": f.ttft},
             {"design": f"staggered by {d_star:g} s" if d_star is not None else "staggered", "input_cost_usd":
              float(stg.closed_form(p, f, d_star or f.ttft)), "writers": 1,
              "last_child_delay_s": (f.children - 1) * (d_star or f.ttft)}]
    series = [Series("staggered launch", delays, [r["input_cost_usd"] for r in curve], steps=True),
              Series("held until first response", delays, [held] * len(delays), "--")]
    chart = LineChart(f"Holding the siblings until the first response begins costs {usd(held)}, "
                      f"{(1 - held / together):.0%} less than launching all {f.children} together",
                      "delay between consecutive launches (seconds)", "input cost of the first requests (USD)",
                      series, [Mark(0.0, together, f"launched together: {f.children} writes")],
                      note=f"prices: {p.source}", subtitle=f"{f.children} parallel children sharing {_k(f.shared)} "
                                                           f"tokens, ttft {f.ttft:g} s ({p.model})")
    reading = (f"Launched together, all {f.children} children pay the write ({usd(together)}); holding the "
               f"siblings until the first response begins ({f.ttft:g} s) costs {usd(held)}, "
               f"{(1 - held / together):.0%} less, for {f.ttft:g} s of latency. Counted: the input cost of each "
               f"child's first request; left out: the children's later turns and output tokens.")
    return Study("stagger", "Parallel children: simultaneous vs staggered", table, curve, chart, reading,
                 asdict(f))


def invalidation(p: Prices, f: inv.InvalidationParams | None = None) -> Study:
    f = f or inv.InvalidationParams()
    turns = list(range(1, f.turns + 1, max(1, f.turns // 50)))
    curve = inv.curve(p, f, turns)
    labels = {"tools": "tool list or system prompt change, model switch", "messages": "tool_choice / thinking / image"}
    series = [Series(labels["tools"], turns, [r["tools_usd"] for r in curve]),
              Series(labels["messages"], turns, [r["messages_usd"] for r in curve], "--")]
    table = [{"change": k, "turn": m, "extra_cost_usd": float(inv.closed_form(p, f, k, m))}
             for k in ("tools", "messages") for m in dict.fromkeys((2, max(2, f.turns // 4), max(2, f.turns // 2),
                                                                    max(2, f.turns)))]
    late = float(inv.closed_form(p, f, "tools", f.turns))
    early = float(inv.closed_form(p, f, "tools", 2))   # turn 1 has nothing cached to lose
    chart = LineChart(f"A tool list or system prompt change costs {usd(early)} extra at turn 2, {usd(late)} at turn "
                      f"{f.turns}",
                      f"turn at which the change happens ({_k(f.tools + f.system)} static, +{_k(f.growth)} a turn)",
                      "extra cost of that request (USD)", series, note=f"prices: {p.source}",
                      subtitle=f"Cost of one mid-session change ({p.model})")
    more = f", {late / early:.0f}x more" if early else ""
    reading = (f"Changing the tool list or system prompt at turn 2 costs {usd(early)} extra; at turn {f.turns} "
               f"it costs {usd(late)}{more} (at turn 1 nothing is cached yet), because everything after the "
               f"change is written again at {float(p.write(f.ttl) / p.input):.2f}x instead of read at "
               f"{float(p.read / p.input):.2f}x. Counted: the extra input cost of the changed request over the "
               "same request unchanged; left out: output tokens (later requests read the new prefix as before).")
    return Study("invalidation", "Cache-invalidation cost vs when it happens", table, curve, chart, reading,
                 asdict(f))


def minimum(p: Prices, f: mini.MinimumParams | None = None) -> Study:
    f = f or mini.MinimumParams()
    m = mini.minimum(p)
    sizes = list(range(max(50, m // 20), m + 1, max(1, m // 40)))
    curve = mini.curve(p, f, sizes)
    table = [{"model": p.model, "minimum_tokens": m, "prefix_tokens": s,
              "requests_to_pay_off": mini.requests_to_pay_off(p, s, f.ttl) or "never"}
             for s in sorted({m // 4, m // 2, (3 * m) // 4, m - 1})]
    breakeven = next((r["prefix_tokens"] for r in curve if r["saving_usd"] > 0), None)
    series = [Series(f"sent as is ({f.requests} requests)", sizes, [r["as_sent_usd"] for r in curve]),
              Series("padded to the minimum", sizes, [r["padded_usd"] for r in curve], "--")]
    marks = [Mark(breakeven, next(r["padded_usd"] for r in curve if r["prefix_tokens"] == breakeven),
                  f"padding pays from {_k(breakeven)} tokens")] if breakeven else []
    chart = LineChart(f"Nothing under {m:,} tokens is cached; over {f.requests} requests padding up to it pays from "
                      f"{_k(breakeven)} tokens" if breakeven else
                      f"Nothing under {m:,} tokens is cached, and over {f.requests} requests padding up to it never pays",
                      "prefix size (tokens)", f"cost of {f.requests} requests' prefix (USD)", series, marks,
                      vlines=[(m, "minimum")], note=f"prices: {p.source}",
                      subtitle=f"Below the {m:,}-token minimum of {p.model}")
    reading = (f"{p.model} caches nothing below {m:,} tokens. Sent {f.requests} times, a prefix of "
               + (f"{_k(breakeven)} tokens or more is cheaper padded up to the minimum." if breakeven else
                  "any size below the minimum is cheaper sent as is.")
               + " Counted: the prefix's input cost over the requests; left out: the rest of each prompt and "
                 "output tokens.")
    return Study("minimum", "Minimum cacheable length", table, curve, chart, reading,
                 asdict(f))


STUDIES: dict[str, Callable[..., Study]] = {"fork-vs-subagent": fork_vs_subagent, "ttl": ttl, "stagger": stagger,
                                            "invalidation": invalidation, "minimum": minimum}


def check_line(check: dict) -> str:
    verdict = "agree" if check["ok"] else "DISAGREE — CHECK FAILED, do not use these figures"
    return (f"closed form vs {check['against']}: {check['points']} points, largest difference "
            f"${check['max_abs_diff_usd']:.9f} (tolerance ${check['tolerance_usd']:.9f}): {verdict}")


def run_study(study: str, p, f, lists: dict, sheet_doc=None, when=None, steady=None, observed=None, gpus=None,
              latency=None):
    """(Study, check) for one study's parameters, as `breakeven` and `report` show it (`gpus`: the
    GPU catalogue api-vs-selfhosted reads, with a --gpus file's rows; `latency`: the API side's
    latency model a scenario naming it sets, else the model's default)."""
    if study == "api-vs-selfhosted":
        from prefixsim.analysis.selfhosted_study import api_vs_selfhosted   # lazy: the serving layer
        from prefixsim.serving.gpus import gpu

        g = gpu(f.gpu, gpus)
        return api_vs_selfhosted(p, f, g, latency), verify(study, p, f, sheet_doc, when, gpu=g)
    if study == "gemini-explicit":   # priced with Gemini's storage table (a sheet may override it)

        s = explicit(p, f, book=PriceBook(sheet_doc, when=when))
        check = verify(study, p, f, sheet_doc, when)
    elif study == "fork-vs-subagent":
        s = fork_vs_subagent(p, f, lists)
        check = verify(study, p, f, sheet_doc, when, design_labels(f, lists)[0])
    else:
        kwargs = {"gaps": observed, "steady": steady} if study == "ttl" else {}
        s = STUDIES[study](p, f, **kwargs)
        check = verify(study, p, f, sheet_doc, when)
    return s, check
