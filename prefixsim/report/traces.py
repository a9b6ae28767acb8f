"""Engine trace replay results (`prefixsim.engines.trace.replay_trace`) as a terminal table and as a
hit-rate-vs-capacity chart."""
from __future__ import annotations

from prefixsim.errors import UserError
from prefixsim.report.layout import DEFAULT_WIDTH, fit, wrap_block

#: Okabe-Ito colour-blind-safe palette, as every prefixsim chart uses.
_OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")


def _fmt_capacity(c: int | None) -> str:
    return "unlimited" if c is None else f"{c:,}"


def render_text(result: dict, width: int = DEFAULT_WIDTH) -> str:
    """Plain-text summary and capacity table of a `replay_trace` result, for a terminal `width`
    columns wide (the headers wrap at their spaces: layout.fit)."""
    s = result["summary"]
    lines = [wrap_block(f"{s['format']} trace: {s['requests']:,} requests, {s['input_tokens']:,} input tokens, "
                        f"{s['blocks']:,} blocks of {s['block_size']} tokens; eviction {s['eviction']}", width, "  ")]
    points = s.get("curve") or [s]
    saved = "prefill_gpu_seconds_saved" in points[0]
    head = ["capacity (tokens)", "hit rate (tokens)", "hit rate (blocks)", "hit tokens", "evictions"]
    if saved:
        head.append("prefill saved (GPU-s)")
    body = []
    for p in points:
        row = [_fmt_capacity(p["capacity_tokens"]), f"{p['hit_rate']:.2%}", f"{p['block_hit_rate']:.2%}",
               f"{p['hit_tokens']:,}", f"{p['evictions']:,}"]
        if saved:
            row.append(f"{p['prefill_gpu_seconds_saved']:,.1f}")
        body.append(row)
    lines.append(fit(head, body, [True] * len(head), width, [False] * len(head)))
    lines.append(wrap_block("hit rate (tokens) = hit tokens / input tokens; (blocks) = hit blocks / blocks", width))
    return "\n".join(lines) + "\n"


def curve_figure(result: dict, title: str | None = None):
    """Hit rate vs capacity (log x) as a matplotlib Figure on the Agg canvas; unlimited is drawn
    as a dashed ceiling. Needs a `replay_trace` result with a curve (several capacities)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: start-up: matplotlib loads only to draw
    from matplotlib.figure import Figure  # lazy: start-up: matplotlib loads only to draw

    s = result["summary"]
    points = s.get("curve") or [s]
    finite = sorted((p for p in points if p["capacity_tokens"] is not None), key=lambda p: p["capacity_tokens"])
    ceiling = next((p for p in points if p["capacity_tokens"] is None), None)
    if not finite:
        raise UserError("a capacity curve needs at least one finite capacity")
    fig = Figure(figsize=(7, 4.2), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x = [p["capacity_tokens"] for p in finite]
    for (field, label, marker), colour in zip((("hit_rate", "token hit rate", "o"),
                                               ("block_hit_rate", "block hit rate", "s")), _OKABE_ITO):
        ax.plot(x, [100 * p[field] for p in finite], marker=marker, color=colour, label=label)
        if ceiling is not None:
            ax.axhline(100 * ceiling[field], color=colour, linestyle="--", linewidth=1,
                       label=f"{label}, unlimited ({ceiling[field]:.1%})")
    ax.set_xscale("log")
    ax.set_xlabel("cache capacity (tokens, log scale)")
    ax.set_ylabel("hit rate (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(title or f"{s['format'].capitalize()} trace: hit rate vs capacity "
                          f"({s['eviction'].upper()}, {s['block_size']}-token blocks)")
    fig.tight_layout()
    return fig
