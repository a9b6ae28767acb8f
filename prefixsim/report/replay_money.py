"""`prefixsim replay`'s money first: what the traffic cost, what caching saved against the same traffic
with no cache, what was lost to the cache by cause, the same split by session, day, project or model
(`--by`), and a what-if split the same way. Tables fit the width as `run`'s do (report/layout.py);
the figures are replay/money.py's."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from prefixsim.replay.money import Group, Money, key_of, project_of, session_of, short_keys
from prefixsim.report.replay_grid import _usd as usd

if TYPE_CHECKING:
    from prefixsim.replay.compare import Comparison
    from prefixsim.replay.run import ReplayResult

#: Groups a default table shows, the costliest; the rest are summed on one row (--requests shows all).
MAX_GROUPS = 8
#: What a group table's key column is called, per --by.
TITLE = {"session": "session", "day": "day, UTC", "project": "project", "model": "model"}
LOST = ("lost: what reading every prefix an earlier request wrote would have saved, as the provider's rules "
        "allow (`prefixsim advise` says what to change)")


def _share(part: Decimal, whole: Decimal) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _span(result: ReplayResult) -> str:
    """"533 requests in 47 sessions, 20 projects, 5 models, 2025-09-03 to 2026-02-12 (UTC)"."""
    rows = result.rows
    days = sorted({d for d in (key_of(r, "day") for r in rows) if d != "no time"})

    def count(n: int, what: str) -> str:
        return f"{n:,} {what}{'' if n == 1 else 's'}"

    places = {(r.stream, r.path) for r in rows}   # each distinct place named once (a session has many rows)
    parts = [count(len({session_of(st, path) for st, path in places}), "session"),
             count(len({project_of(path) for path in {path for _, path in places}}), "project"),
             count(len({r.model for r in rows}), "model")]
    when = "" if not days else f", {days[0]}" + ("" if len(days) == 1 else f" to {days[-1]}") + " UTC"
    s = result.summary
    window = (f"; {count(s.left_out, 'request')} outside {s.window} left out of the sums (all are replayed: an "
              "earlier one still warms the cache)") if s.window else ""
    return f"{count(len(rows), 'request')}, " + ", ".join(parts) + when + window


def headline(result: ReplayResult, m: Money, grid, wrap, markdown: bool) -> list[str]:
    """The money in four lines, then the loss by cause."""
    s, t = result.summary, m.total
    side = "" if s.output_in_cost else " (prompt side)"
    what = ("the observed usage at list prices" if not m.predicted else
            f"the observed usage at list prices, {m.predicted:,} requests without usage at prefixsim's prediction")
    unpriced = f"; {t.unpriced:,} request{'s' if t.unpriced > 1 else ''} of unpriced models left out" if t.unpriced else ""
    rows = [["cost", usd(t.cost), what + side + unpriced],
            ["without a cache", usd(t.no_cache), "the same requests with caching off"],
            ["caching saved", usd(t.saved), f"{_share(t.saved, t.no_cache)} of the no-cache cost"],
            ["lost to the cache", usd(t.lost), f"{_share(t.lost, t.cost)} of the cost"
             + (", by cause below" if any(lost for *_, lost in m.lost_by_cause) else "")]
            if m.measured else ["lost to the cache", "n/a", "not measured (replay measures it)"]]
    out = [wrap(_span(result)) + "\n\n", grid(["", "", ""], rows, markdown, headless=True, left=(0, 2))]
    misses = [[k, f"{n:,}", usd(c), usd(lost) if m.measured else "n/a"]
              for k, n, c, lost in m.lost_by_cause]
    if misses:
        out += ["\nmisses by cause\n", grid(["cause", "misses", "cost $", "lost $"], misses, markdown, left=(0,)),
                wrap(LOST) + "\n"]
    return out


def _rows(m: Money, every: bool) -> tuple[list[Group], Group | None]:
    """The groups shown (the costliest MAX_GROUPS, in the table's order) and the rest summed."""
    if every or len(m.groups) <= MAX_GROUPS + 1:
        return list(m.groups), None
    top = set(sorted(m.groups, key=lambda g: (-g.cost, g.key))[:MAX_GROUPS])
    shown = [g for g in m.groups if g in top]
    rest = [g for g in m.groups if g not in top]
    plural = {"day": "days", "model": "models", "session": "sessions", "project": "projects"}[m.by]
    summed = Group(f"{len(rest):,} more {plural}", sum(g.requests for g in rest), sum((g.cost for g in rest), Decimal(0)),
                   sum((g.no_cache for g in rest), Decimal(0)), sum((g.lost for g in rest), Decimal(0)),
                   sum(g.prompt for g in rest), sum(g.read for g in rest), sum(g.unpriced for g in rest))
    return shown, summed


def by_table(m: Money, grid, wrap, markdown: bool, every: bool) -> list[str]:
    """The money split by --by: one row per group, the rest summed, the total."""
    shown, rest = _rows(m, every)
    # names told apart among every session, shown or summed (the same name for the same session everywhere)
    name = short_keys([g.key for g in m.groups]) if m.by == "session" else {g.key: g.key for g in shown}

    def row(g: Group, key: str) -> list[str]:
        share = g.read_share
        return [key, f"{g.requests:,}", "n/a" if share is None else f"{100 * share:.1f}%", usd(g.cost),
                usd(g.no_cache), usd(g.saved), usd(g.lost) if m.measured else "n/a"]

    body = [row(g, name[g.key]) for g in shown] + ([row(rest, rest.key)] if rest else []) + [row(m.total, "TOTAL")]
    more = "" if rest is None else "; --requests shows every one"
    return ["\n" + wrap(f"by {TITLE[m.by]} (--by session|day|project|model{more})") + "\n",
            grid([TITLE[m.by].split(",")[0], "reqs", "hit", "cost $", "no-cache $", "saved $", "lost $"], body, markdown,
                 drops=(4, 2, 1, 5), left=(0,))]


def what_if_by(what_if: Comparison, by: str, grid, markdown: bool) -> list[str]:
    """A what-if's cost difference split by --by, as the money is."""
    acc: dict[str, list] = {}
    for which, res in ((0, what_if.base), (1, what_if.variant)):
        for r in res.rows:
            a = acc.setdefault(key_of(r, by), [Decimal(0), Decimal(0)])
            a[which] += r.cost_predicted
    keys = sorted(acc, key=lambda k: (k if by == "day" else "", -abs(acc[k][1] - acc[k][0]), k))
    name = short_keys(keys) if by == "session" else {k: k for k in keys}
    t = what_if.total

    def row(key: str, base: Decimal, other: Decimal) -> list[str]:
        d = other - base
        return [key, usd(base), usd(other), f"{'+' if d >= 0 else '-'}{usd(abs(d))}"]

    shown = keys if len(keys) <= MAX_GROUPS + 1 else keys[:MAX_GROUPS]
    body = [row(name[k], *acc[k]) for k in shown]
    if len(shown) < len(keys):
        rest = keys[len(shown):]
        body.append(row(f"{len(rest):,} more", sum((acc[k][0] for k in rest), Decimal(0)),
                        sum((acc[k][1] for k in rest), Decimal(0))))
    body.append(row("TOTAL", t.cost_base, t.cost_variant))
    return [grid([TITLE[by].split(",")[0], "cost $", "what-if $", "difference"], body, markdown, left=(0,))]


def by_rows(m: Money) -> list[dict]:
    """`--format csv`: the money table's rows, every group (none summed into "N more") and no TOTAL,
    dollars unrounded (lost_usd empty where no loss was measured)."""
    out = []
    for g in m.groups:
        share = g.read_share
        out.append({m.by: g.key, "requests": g.requests, "hit_rate": "" if share is None else round(share, 4),
                    "cost_usd": g.cost, "cost_no_cache_usd": g.no_cache, "saved_usd": g.saved,
                    "lost_usd": g.lost if m.measured else "", "unpriced_requests": g.unpriced})
    return out

