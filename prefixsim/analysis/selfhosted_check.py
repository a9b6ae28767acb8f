"""The api-vs-selfhosted closed forms checked against the runner, as every study is (verify.py):

- the API side: a cold session built by the scenario builder (real rendered turns, breakpoints on the
  system prompt and the last message) and replayed by the runner, against the closed form at the
  sizes the builder made; and a warm session (a second session after the first wrote the static
  prefix) of fixed-size requests through the runner, against the closed form;
- the GPU side: a warm session on the engine simulation with unlimited KV reads what engine_reads
  says, priced as the replica's cost of 1M requests at full load."""
from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from prefixsim.analysis import check_designs as designs
from prefixsim.analysis import selfhosted as sh
from prefixsim.analysis.common import Prices
from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.scenario.studyparams import SelfHostedParams
from prefixsim.serving.capacity import Load, throughput
from prefixsim.serving.enginehit import engine_hit
from prefixsim.serving.gpus import Gpu
from prefixsim.serving.models import open_model
from prefixsim.serving.roofline import TP_SIZES, Efficiency, Replica

MILLION = 1_000_000
#: Turns of a session the engine check replays.
CHECK_TURNS = 20


def cold_session(model: str, f: SelfHostedParams, sheet: dict | None = None) -> dict:
    """One session of the design as a scenario: the static prefix as the system prompt, `turns` loop
    turns of `growth` tokens, a turn every `pace` seconds."""
    doc = designs.common(model, f.ttl, 1.0, sheet, "study-api-vs-selfhosted")
    doc.update(output=f.output, pace=f.pace,
               base={"system": f.static, "history": {"turns": 0, **designs.loop_sizes(f.growth)}})
    doc["timeline"] = [{"request": {"turns": f.turns}}]
    return doc


def api_pairs(p: Prices, f: SelfHostedParams, sheet=None, when=None) -> list[tuple[Decimal, Decimal]]:
    played = designs.play(cold_session(p.model, f, sheet), when)["default"]
    main = played.main()
    static = designs.breakpoint_sizes(main[0])[0]
    closed = sh.session_cost(p, f, static, [o.usage.prompt_tokens for o in main], warm=False,
                             outputs=[o.usage.output_tokens for o in main])
    pairs = [(closed, sum((o.cost_usd for o in main), Decimal(0)))]
    # warm: the second session starts once the first one's first response made its write readable
    calls = sh.session_calls(p.model, f, 2, 1.5)
    sim = Simulator(p.provider, tokenizer="approx", ttft=1.0, prices=PriceBook(sheet, when=when))
    warm = sum((o.cost_usd for o in sim.run(calls) if o.call.stream == "s1"), Decimal(0))
    pairs.append((sh.session_cost(p, f, f.static, sh.lengths(f)), warm))
    return pairs


def gpu_pairs(f: SelfHostedParams, gpu: Gpu) -> list[tuple[Decimal, Decimal]]:
    """The cost of 1M requests at full load on the smallest replica that holds one, from the reads
    engine_reads says and from the reads the engine simulation gave (a token's difference shows), on
    the session's first CHECK_TURNS turns (the same rule at every turn; a long session would hash
    millions of blocks)."""
    f = replace(f, turns=min(f.turns, CHECK_TURNS))
    m = engine_hit(sh.session_calls(f.open_model, f, 2, 1.5), f.engine, None, 1e9, 1e9)
    simulated = [o.usage.cache_read for o in m.outcomes if o.call.stream == "s1"]
    closed = sh.engine_reads(f)
    model, eff = open_model(f.open_model), Efficiency(f.compute_efficiency, f.memory_efficiency)
    need = closed.prompts[-1] + f.output
    replica = next((r for r in (Replica(gpu, model, tp, f.dtype, eff) for tp in TP_SIZES) if r.kv_tokens >= need), None)
    if replica is None:
        return []   # sh.points refuses the design, in one line
    prompt = sum(closed.prompts) / len(closed.prompts)
    usd_per_s = replica.tp * (f.gpu_hour_usd or gpu.usd_per_hour) / 3600
    out = [usd_per_s * MILLION * throughput(replica, Load(prompt, sum(reads) / sum(closed.prompts), f.output),
                                            f.max_batch).seconds for reads in (closed.reads, simulated)]
    return [(Decimal(repr(out[0])), Decimal(repr(out[1])))]
