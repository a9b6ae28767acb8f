"""Charts for design reviews: one style everywhere (Okabe-Ito colour-blind-safe palette, titled,
labelled axes with units, crossing points annotated), the Agg backend, byte-identical output."""
from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Sequence

from prefixsim.core.dollars import usd

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


STYLE = {
    "figure.figsize": (8.0, 4.8), "figure.dpi": 100, "savefig.dpi": 120, "font.size": 10,
    "axes.titlesize": 12, "axes.titleweight": "bold", "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "legend.frameon": False,
    "svg.hashsalt": "prefixsim", "path.simplify": False,
    # text is text: two dollar amounts in a title ("$0.0673 ... $0.5744") are not a TeX formula between them
    "text.parse_math": False,
}


def _figure(figsize: tuple[float, float] | None = None):
    """A Figure drawn by the Agg canvas, without pyplot: no backend selection, no figure manager
    (pyplot's import alone cost ~0.1 s, and nothing here is shown on a screen)."""
    import matplotlib  # lazy: start-up: matplotlib loads only to draw
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: start-up: matplotlib loads only to draw
    from matplotlib.figure import Figure  # lazy: start-up: matplotlib loads only to draw

    matplotlib.rcParams.update(STYLE)
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


#: Characters of a bold 12-point title a line on an 8-inch figure (matplotlib's own wrap=True reads
#: dollar signs as TeX whatever text.parse_math says).
TITLE_CHARS = 72


def title_lines(title: str) -> str:
    """A chart's title, its answer in a sentence, over as many lines as the figure's width takes."""
    return "\n".join(textwrap.wrap(title, TITLE_CHARS)) or title


@dataclass
class Series:
    label: str
    x: Sequence[float]
    y: Sequence[float]
    style: str = "-"
    steps: bool = False   # a quantity that jumps (writers, TTL expiry) is drawn as steps, not slopes


@dataclass
class Mark:
    """A point worth pointing at: a crossing, a TTL step."""

    x: float
    y: float
    text: str


@dataclass
class LineChart:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    marks: list[Mark] = field(default_factory=list)
    vlines: list[tuple[float, str]] = field(default_factory=list)
    hlines: list[tuple[float, str]] = field(default_factory=list)
    logx: bool = False
    note: str = ""
    rug: Sequence[float] = ()   # observed x values drawn as ticks along the bottom (e.g. real gaps)
    rug_label: str = ""
    subtitle: str = ""          # what is plotted, and a study's parameters, in small type above the note


def line_figure(c: LineChart):
    fig = _figure()
    ax = fig.subplots()
    for i, s in enumerate(c.series):
        ax.plot(s.x, s.y, s.style, color=PALETTE[i % len(PALETTE)], label=s.label, linewidth=2,
                drawstyle="steps-post" if s.steps else "default",
                marker=MARKERS[i % len(MARKERS)] if len(s.x) <= 12 else None, markersize=4)
    if c.logx:
        ax.set_xscale("log")
    ymin, ymax = ax.get_ylim()
    for x, text in c.vlines:
        ax.axvline(x, color="#777777", linestyle=":", linewidth=1)
        ax.text(x, ymax, f" {text}", rotation=90, va="top", ha="right", fontsize=8, color="#555555")
    for y, text in c.hlines:
        ax.axhline(y, color="#333333", linestyle=":", linewidth=1.2)
        ax.text(ax.get_xlim()[0], y, f" {text}", va="bottom", ha="left", fontsize=8, color="#333333")
    offsets = ((8, -16), (8, 10), (8, -30), (8, 24))   # alternate so neighbouring labels do not collide
    for i, m in enumerate(c.marks):
        ax.plot([m.x], [m.y], "o", color="#000000", markersize=6, zorder=5)
        ax.annotate(m.text, (m.x, m.y), textcoords="offset points", xytext=offsets[i % len(offsets)], fontsize=8.5,
                    bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "#999999", "alpha": 0.9})
    if c.rug:
        lo, hi = ax.get_ylim()
        ax.plot(list(c.rug), [lo + 0.02 * (hi - lo)] * len(c.rug), "|", color="#000000", alpha=0.35,
                markersize=12, label=c.rug_label or "observed")
        ax.set_ylim(lo, hi)
    ax.set_title(title_lines(c.title))
    ax.set_xlabel(c.xlabel)
    ax.set_ylabel(c.ylabel)
    ax.legend(loc="best", fontsize=8.5)
    note = "\n".join(x for x in (c.subtitle, c.note) if x)
    if note:
        fig.text(0.01, 0.01, note, fontsize=7.5, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.035 * (note.count("\n") + 1) + 0.005 if note else 0, 1, 1))
    return fig


#: Height of the band under the axes that holds a bar chart's legend (inches): the legend goes in
#: the figure's own band, so it can never cover the axis label, however few bars there are.
LEGEND_BAND = 0.42
NOTE_BAND = 0.22


def stacked_bars(title: str, labels: list[str], parts: dict[str, list[float]], ylabel: str, note: str = "",
                 total: str | Callable[[float], str] = usd, totals: list[float] | None = None):
    """One bar per design, split into its parts (cost by token class, or prefill GPU-seconds);
    `total` (a format string, or a function: dollars by default) formats the figure written at the
    end of each bar: `totals` (the table's own figures, so
    the bar reads what the table prints to the last digit), else the sum of its parts."""
    height = max(3.0, 0.5 * len(labels) + 1.6)
    fig = _figure((8.0, height))
    ax = fig.subplots()
    left = [0.0] * len(labels)
    ypos = list(range(len(labels)))[::-1]
    for i, (name, vals) in enumerate(parts.items()):
        ax.barh(ypos, vals, left=left, color=PALETTE[i % len(PALETTE)], label=name, height=0.6)
        left = [a + b for a, b in zip(left, vals)]
    for y, t, shown in zip(ypos, left, totals or left):
        ax.text(t, y, " " + (total(shown) if callable(total) else total.format(shown)), va="center", fontsize=8)
    ax.set_yticks(ypos)
    ax.set_yticklabels([_wrap(x) for x in labels], fontsize=8)
    ax.set_xlim(0, max(left + [1e-9]) * 1.22)
    ax.set_title(title)
    ax.set_xlabel(ylabel)
    ax.grid(axis="y", visible=False)
    # The legend sits in a band of its own at the foot of the figure (above the note), and the axes
    # with their label are laid out above that band.
    bottom = (NOTE_BAND if note else 0.0)
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=len(parts), fontsize=8,
               bbox_to_anchor=(0.5, bottom / height))
    if note:
        fig.text(0.01, 0.01, note, fontsize=7.5, color="#555555", ha="left", va="bottom")
    fig.tight_layout(rect=(0, (bottom + LEGEND_BAND) / height, 1, 1))
    return fig


def _wrap(label: str, width: int = 38) -> str:
    words, lines, cur = label.split(), [], ""
    for w in words:
        if len(cur) + len(w) + 1 > width and cur:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    lines.append(cur)
    return "\n".join(lines[:3])


def _bytes(fig, fmt: str) -> bytes:
    """No timestamps or software stamps in the file, so equal charts are equal files."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata={"Software": None} if fmt == "png" else {"Date": None, "Creator": None})
    return buf.getvalue()


def render_both(fig) -> tuple[bytes, bytes]:
    """(PNG, SVG) bytes of a figure."""
    return _bytes(fig, "png"), _bytes(fig, "svg")

