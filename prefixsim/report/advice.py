"""The report's "What to change" section, from an `Advice`."""
from __future__ import annotations

from prefixsim.advise import Advice
from prefixsim.advise.output import tables, waterfall_figure, waterfall_title
from prefixsim.core.dollars import usd
from prefixsim.report.charts import render_both
from prefixsim.report.html import Figure, Section


def report_section(a: Advice, paths) -> Section:
    """The report's "What to change" section: the changes and the best combination, where the
    money is lost, and the waterfall."""
    shown = ", ".join(str(p) for p in paths)
    at = a.attribution
    lost = f"{usd(at.lost_usd)}" if at is not None else "nothing measured"
    if a.best is not None:
        reading = (f"The traffic costs {usd(a.total_usd)} as replayed; {lost} of it is lost to the cache. "
                   f"The cheapest change the replays show is {a.best.change}: {usd(a.best.cost_usd)}, "
                   f"{a.best.percent:.1f}% less.")
    else:
        reading = (f"The traffic costs {usd(a.total_usd)} as replayed; {lost} of it is lost to the cache. "
                   "No change the replays could test saves money.")
    figures = [Figure(waterfall_title(a), render_both(waterfall_figure(a))[0],
                      "what-to-change-waterfall", "Each bar is a replay of the same traffic with the changes so far.")] \
        if a.waterfall else []
    return Section("What to change", f"Traffic: {shown}. Every saving below is the difference between a replay "
                   "of the traffic as recorded and a replay of the same traffic with the change.", reading,
                   [(title, rows, cols) for _, title, rows, cols in tables(a) if rows], figures, anchor="what-to-change")
