"""Each closed form checked against the scenario runner: the curves we draw are the numbers
`prefixsim run` prints for the same design. For fork-vs-subagent the design is built by the scenario
builder from the study's parameters (designs.py: real rendered blocks, breakpoints, write
availability, stagger) and the closed form is evaluated at the sizes the builder made; any
difference above TOLERANCE is a failure, which the CLI reports loudly and the tests assert."""
from __future__ import annotations

from decimal import Decimal

from prefixsim.analysis import check_designs as designs
from prefixsim.analysis import fork_vs_subagent as fvs
from prefixsim.analysis import invalidation as inv
from prefixsim.analysis import minimum as mini
from prefixsim.analysis import stagger as stg
from prefixsim.analysis import ttl as ttlmod
from prefixsim.analysis.common import Prices
from prefixsim.analysis.gemini_explicit import check_pairs
from prefixsim.core.pricing import PriceBook
from prefixsim.scenario.studyparams import FORK_HISTORIES   # the parent histories each fork design is replayed at

TOLERANCE = Decimal("0.000001")


class CheckFailed(Exception):
    """A closed form and the runner disagree beyond TOLERANCE: the figures must not be used."""


def fork_points(p: Prices, f: fvs.ForkParams, history: int, sheet=None, when=None) -> list[tuple[Decimal, Decimal]]:
    """(closed form, runner) for the fork and the sub-agent design built from `f` at `history`."""
    played = designs.play(designs.fork_vs_subagent(p.model, f, history, sheet), when)
    fs, ss = designs.fork_shapes(played)
    fork_run = played["fork"].input_cost([o for s in played["fork"].streams() for o in s])
    sub_run = played["sub-agent"].input_cost([o for s in played["sub-agent"].streams() for o in s])
    return [(fvs.fork_cost(p, f, fs), fork_run), (fvs.sub_cost(p, f, ss), sub_run)]


def verify(study: str, p: Prices, f, sheet=None, when=None, designs_: list | None = None, gpu=None) -> dict:
    pairs: list[tuple[Decimal, Decimal]] = []
    against = "scenario builder + runner"
    m = p.model
    if study == "fork-vs-subagent":
        for d in designs_ or [f]:
            for h in FORK_HISTORIES:
                pairs += fork_points(p, d, h, sheet, when)
    elif study == "ttl":
        gaps = [10, 299, 300, 1200, 3599, 3600, 7200]
        for t in ("5m", "1h"):
            played = designs.play(designs.resent(m, t, f.prefix, gaps, sheet), when)["default"]
            prefix, lengths = designs.resent_sizes(played)
            pairs.append((ttlmod.cost_at(p, t, gaps, prefix, lengths), played.input_cost(played.main())))
    elif study == "stagger":
        for d in (0.0, f.ttft / 2, f.ttft):
            played = designs.play(designs.stagger(m, f, d, sheet), when)["default"]
            shared, lengths = designs.stagger_sizes(played)
            pairs.append((stg.cost_at(p, f, d, shared, lengths),
                          played.input_cost([o for s in played.streams() for o in s])))
    elif study == "invalidation":
        for kind in ("tools", "system", "messages"):
            for turn in (2, max(2, f.turns // 3)):
                played = designs.play(designs.invalidation(m, f, kind, turn, sheet), when)
                static, before, length, changed, extra = designs.invalidation_sizes(played)
                pairs.append((inv.extra_at(p, f, kind, static, before, length, changed), extra))
        # a model switch moves the session to another model's cache (and prices): checked on the
        # runner with the fixed-size requests, the builder's sessions being one model's
        book = PriceBook(sheet, when=when)
        against = "scenario builder + runner (a model switch: runner)"
        for turn in (2, max(2, f.turns // 3)):
            pairs.append((inv.closed_form(p, f, "model", turn), inv.simulate(p, book, f, "model", turn)))
    elif study == "minimum":
        for size in (f.prefix, max(mini.minimum(p), f.prefix)):
            played = designs.play(designs.resent(m, f.ttl, size, [fvs.PACE] * (f.requests - 1), sheet,
                                                 "study-minimum"), when)["default"]
            prefix, lengths = designs.resent_sizes(played)
            pairs.append((mini.cost_at(p, f, prefix, lengths), played.input_cost(played.main())))
    elif study == "gemini-explicit":
        # the no-caching and optimistic implicit lines replayed through the gemini policy
        against = "the gemini policy through the runner"
        pairs += check_pairs(p, PriceBook(sheet, when=when), f)
    elif study == "api-vs-selfhosted":
        from prefixsim.analysis import selfhosted_check as shc   # lazy: the serving layer only for its study
        from prefixsim.serving.gpus import gpu as catalogue_gpu

        against = "scenario builder + runner (API), the engine simulation (GPUs, per 1M requests)"
        pairs += shc.api_pairs(p, f, sheet, when) + shc.gpu_pairs(f, gpu or catalogue_gpu(f.gpu))
    diff = max((abs(a - b) for a, b in pairs), default=Decimal(0))
    return {"points": len(pairs), "against": against, "max_abs_diff_usd": float(diff),
            "tolerance_usd": float(TOLERANCE), "ok": bool(pairs) and diff <= TOLERANCE}
