"""`replay --latency`'s text: each model id's fitted latency model, its residuals, the held-back
check against a constant, and the wall time to first token caching saved (replay/latency.py)."""
from __future__ import annotations

import textwrap

from prefixsim.latency.fit import HOLD
from prefixsim.replay.latency import LatencyFits
from prefixsim.report.layout import wrap_block

def _s(x: float) -> str:
    return f"{x:,.2f} s" if abs(x) < 100 else f"{x:,.0f} s"


def latency_text(fits: LatencyFits, width: int) -> str:
    out = ["", "time to first token (overhead + a x uncached + b x cached tokens; uncached: input and cache "
               "writes), fitted per model id to each request's start and its first response line, least absolute "
               "deviations; a transcript writes that line once its content block is complete, so the block's "
               "generation (g x its characters) is fitted beside it and left out of the time to first token"]
    if fits.untimed:
        out.append(f"{fits.untimed:,} requests not fitted: their source logs no response time (only Claude Code "
                   "transcripts and Codex rollouts time a request)")
    if fits.unobserved:
        out.append(f"{fits.unobserved:,} timed requests not fitted: no observed usage")
    if not fits.fits:
        out.append("nothing to fit: no timed request (in the --since / --until window, when one is given)")
    for f in fits.fits:
        out.append("")
        head = f"{f.model}: {f.n:,} requests"
        if f.repeated:
            head += f", {f.repeated:,} with equal start and response stamps left out"
        if f.ungenerated:
            head += (f", {f.ungenerated:,} left out whose first line holds a block the transcript does not show "
                     "(thinking logged without its text)")
        out.append(head)
        if f.latency is None:
            out.append(f"  no fit: {f.refused}")
            continue
        lm = f.latency
        fixed = f" ({'; '.join(f.notes)})" if f.notes else ""
        out.append(f"  fit        {lm.overhead_s:.3g} s + {lm.uncached_s_per_1k:.3g} s/1K uncached + "
                   f"{lm.cached_s_per_1k:.3g} s/1K cached, on {f.used:,} requests{fixed}")
        if f.generation_s_per_1k > 0:
            chars = 1000 / f.generation_s_per_1k
            out.append(f"  generated  the first line's block at {chars:,.0f} characters/s (about {chars / 4:,.0f} "
                       f"tokens/s at 4 a token; g {f.generation_s_per_1k:.3g} s/1K characters), not part of the time "
                       "to first token")
        r = {k: round(v, 2) + 0.0 for k, v in f.residuals.items()}   # + 0.0: no "-0.00"
        out.append(f"  residuals  measured - fitted: p5 {r['p5']:+.2f} s, p50 {r['p50']:+.2f} s, p95 {r['p95']:+.2f} s")
        verdict = "beats it" if f.beats_constant else \
            "does not beat it: these times carry too little of the prompt's size to fit (queueing and time the " \
            "log does not show sit in them); trust the fit's coefficients no more than a constant"
        out.append(f"  held back  each request once ({f.held:,}, {HOLD} folds by position), predicted by the fit on "
                   f"the others: median absolute error {f.mae_held:.3f} s; a constant (the others' median, about "
                   f"{f.constant:.2f} s) {f.mae_constant:.3f} s: {verdict}")
        with_cache, without = fits.saved[f.model]
        saved = without - with_cache
        share = f" ({saved / without:.1%})" if without else ""
        out.append(f"  wall time  {_s(with_cache)} to first token in all; {_s(without)} without the cache's reads "
                   f"(the fit, every read token computed): caching saved {_s(saved)}{share}")
    return "\n".join(_wrap(line, width) for line in out) + "\n"


def _wrap(line: str, width: int) -> str:
    """A line at `width`: a model's figure lines keep their indent and continue under their text."""
    if not line.startswith("  "):
        return wrap_block(line, width) if line else ""
    return "\n".join(textwrap.wrap(line.strip(), width, initial_indent="  ", subsequent_indent=" " * 13,
                                    break_on_hyphens=False))
