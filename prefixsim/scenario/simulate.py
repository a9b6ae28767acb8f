"""One resolved scenario variant through the simulator (its provider, prices, tokenizer and timeline)
to a VariantResult, and one file's variants collected into a ScenarioResult. The library entry
points (api.py) and the process pool (parallel.py) both call these."""
from __future__ import annotations

import datetime as dt
import json

from prefixsim.core.invariants import summary_matches_rows
from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.engines import ENGINES
from prefixsim.engines.policy import engine_options
from prefixsim.errors import UserError
from prefixsim.providers.registry import get_policy
from prefixsim.providers.tables import (
    ANTHROPIC_CONFIG_LAYER,
    ANTHROPIC_KEEPS_THINKING,
    CLAUDE_CODE_OTHER_TTL,
    NO_AUTOMATIC,
    THINKING_LAYER,
    canonical_model,
)
from prefixsim.scenario.builder import Timeline
from prefixsim.scenario.critical import Latency, critical_waits
from prefixsim.scenario.checks import clock_overrun, model_switches, parse_start
from prefixsim.scenario.latency_book import latency_book
from prefixsim.scenario.loader import Run, _where, input_boundary, load_json_file, locate, read_yaml
from prefixsim.scenario.results import ScenarioResult, VariantResult


def _price_date(run: Run, override: dt.date | None) -> dt.date | None:
    """The --price-date given, else the scenario's own (already checked when the file was loaded)."""
    if override is not None or not run.scenario.price_date:
        return override
    return dt.date.fromisoformat(run.scenario.price_date)


def _start(run: Run, price_date: dt.date | None, start: dt.datetime | None) -> tuple[dt.date | None, dt.datetime | None]:
    """(date, start) of the clock: a --start given wins over the scenario's `start:`; a date given
    (--price-date, else --start's own) wins over the scenario's `price_date:` and `start:` date."""
    sc_start = parse_start(run.scenario.start) if run.scenario.start else None
    if start is not None:
        return price_date or start.date(), start
    return _price_date(run, price_date), sc_start


def simulate(run: Run, price_date: dt.date | None = None, start: dt.datetime | None = None) -> VariantResult:
    """Play one run's timeline and replay its calls through the provider rules; a request is priced at
    the clock's start plus its t (`start`, default 07:00 UTC on the price date)."""
    try:
        with input_boundary(run.path):   # the run's own values (a `file:` body) reach the builder here
            return _simulate(run, price_date, start)
    except UserError as e:
        raise _locate(e, run) from None


def _simulate(run: Run, price_date: dt.date | None, start: dt.datetime | None) -> VariantResult:
    s = run.settings
    timeline = Timeline(s, run.base_dir, lambda rel: load_json_file(run, rel))
    calls = timeline.play()
    if (s.provider or "anthropic") in NO_AUTOMATIC and any(c.request.auto_cache for c in calls):
        raise UserError(f"breakpoints: automatic on {s.provider}: Bedrock does not support automatic caching "
                        f"({NO_AUTOMATIC[s.provider].source}); use breakpoints: last_message or "
                        "system_and_tools").at("setting", "breakpoints")
    when, at = _start(run, price_date, start)
    provider, tokenizer = s.provider or "anthropic", s.tokenizer or "cl100k_base"
    if s.endpoint and provider not in ("vertex", "bedrock"):
        raise UserError(f"endpoint: {s.endpoint} applies to provider vertex or bedrock (Claude on a cloud), "
                        f"not {provider}").at("setting", "endpoint")
    prices = PriceBook(run.scenario.prices, sheet_source=f"price sheet in {run.path}", when=when, start=at,
                       designs=True, endpoint=s.endpoint)
    _check_clock(run, prices.start, max((c.t for c in calls), default=0.0), price_date, start)
    _price_models(calls, timeline.step_of, prices, provider, s)
    policy = None
    if provider in ENGINES:  # a serving engine's cache is set up by `engine:`; the provider APIs ignore it
        spec = s.engine.over(run.scenario.engine) if s.engine else None
        if spec is not None and spec.gpu:
            spec = _gpu_sized(spec, s.model)
        policy = get_policy(provider, **engine_options(provider, spec, s.model, tokenizer))
    sim = Simulator(provider, tokenizer=tokenizer, ttft=1.0 if s.ttft is None else s.ttft, prices=prices,
                    policy=policy)
    outcomes = _run(sim, calls, timeline.step_of)
    models = sorted({c.request.model for c in calls})
    optimistic = None
    if policy is None and any(sim.policy.has_range(m) for m in models):
        # the rule's retention is a documented range: the same calls under its optimistic end
        alt = Simulator(provider, tokenizer=tokenizer, ttft=1.0 if s.ttft is None else s.ttft, prices=prices,
                        policy=get_policy(provider, "optimistic"))
        optimistic = _run(alt, calls, timeline.step_of)
    assumptions = {"tokenizer": tokenizer}
    if policy is None:  # a serving engine has no TTL, no breakpoints and no wait for the first token
        assumptions["time to first token"] = f"{1.0 if s.ttft is None else s.ttft:g} s"
        if provider not in ("openai", "deepseek", "gemini"):   # automatic caches have no breakpoints or ttl setting
            assumptions.update({"breakpoints": str(s.breakpoints or "last_message"), "ttl": s.ttl or "5m"})
            buckets = _ttl_buckets(s)
            if buckets:
                assumptions["ttl by stream"] = buckets
    for m in models:
        assumptions.update({f"{k} [{m}]" if len(models) > 1 else k: v
                            for k, v in sim.policy.describe(m).items()})
        assumptions[f"prices [{m}]"] = _price_line(prices, m, sim.provider)
        mine = [c.request.layer_params for c in calls if c.request.model == m]
        if any(lp[0] for lp in mine):
            row = ANTHROPIC_CONFIG_LAYER[canonical_model(m)]
            assumptions[f"effort change [{m}]"] = f"invalidates tools, system and messages ({row.source})"
        if ANTHROPIC_CONFIG_LAYER.get(canonical_model(m), THINKING_LAYER).value == "tools" and len(
                {json.dumps(json.loads(lp[2]).get("thinking") if lp[2] else None, sort_keys=True) for lp in mine}) > 1:
            # on models that take effort the documentation leaves it open (tables.THINKING_LAYER)
            assumptions[f"thinking change [{m}]"] = f"invalidates the messages only ({THINKING_LAYER.source})"
        keeps = ANTHROPIC_KEEPS_THINKING.get(canonical_model(m))
        if keeps is not None and any(b'"thinking"' in lp[0] + lp[2] for lp in mine):
            assumptions[f"earlier turns' thinking [{m}]"] = keeps.source
        hours = prices.windows(m, sim.provider)
        if hours:   # the price depends on the hour: say when t = 0 falls and what each hour costs
            assumptions["clock start"] = f"{prices.start:%Y-%m-%dT%H:%M:%SZ} (t = 0)"
            assumptions[f"time-of-day prices [{m}]"] = hours
    latency = _latency(run, outcomes, timeline.step_of, policy)
    if latency is not None:
        assumptions["latency"] = latency.source
    return VariantResult(run.scenario.name, run.variant, outcomes, assumptions,
                         run.scenario.sweep.param if run.scenario.sweep else None, run.sweep_value,
                         self_hosted=policy is not None,
                         prefill_rate=policy.prefill_tokens_per_s if policy is not None else None,
                         optimistic=optimistic,
                         bound="measured" if optimistic is not None and any(
                             "measured" in sim.policy.describe(m) for m in models) else "pessimistic",
                         rates={m: prices.rates(m, sim.provider) for m in models}, latency=latency,
                         reference=run.reference)


def _latency(run: Run, outcomes: list, step_of: list[int], policy) -> Latency | None:
    """Each request's time to first token under the variant's latency model, and each turn's wait
    on the critical path (scenario/critical.py); None for an engine with no prefill rate."""
    book = latency_book(run.settings.latency, run.path, policy.prefill_tokens_per_s if policy is not None else None,
                        engine=policy is not None)
    if book is None or len(outcomes) != len(step_of):
        return None
    try:
        ttft = [book.for_model(o.call.request.model).of(o.usage) for o in outcomes]
    except UserError as e:   # a fitted file without the variant's model
        raise e.at("setting", "latency") from None
    sources = dict.fromkeys(f"{m}: {book.for_model(m).line()} ({book.for_model(m).source})"
                            for m in sorted({o.call.request.model for o in outcomes}))
    return Latency(tuple(round(t, 6) for t in ttft),
                   critical_waits(run.settings.timeline or [], [o.call.stream for o in outcomes], step_of, ttft),
                   "; ".join(sources))


def _run(sim: Simulator, calls: list, step_of: list[int]) -> list:
    """`sim.run(calls)`; a request the rules refuse is marked with the step that made it."""
    try:
        return sim.run(calls)
    except UserError as e:
        if e.site is not None and e.site[0] == "call":
            e.site = ("step", step_of[int(e.site[1])])
        raise


def _price_models(calls, step_of: list[int], prices: PriceBook, provider: str, s) -> None:
    """Each model the calls use priced on the run's date before anything runs (a dated snapshot before
    it has no price), a refusal at the line that names the model: its key, or the step switching to it."""
    seen: set[str] = set()
    for i, c in enumerate(calls):
        model = c.request.model
        if model in seen:
            continue
        seen.add(model)
        try:
            prices.rates(model, provider)
        except UserError as e:
            switched = [k for k, step in enumerate(s.timeline or []) if k <= step_of[i] and model in model_switches(step)]
            raise (e.at("step", switched[-1]) if switched else e.at("setting", "model")) from None


def _ttl_buckets(s) -> str | None:
    """Under the claude_code preset a TTL other than 5m is the main conversation's only (CC-PC)."""
    ttl = s.ttl or "5m"
    if s.breakpoints != "claude_code" or ttl == CLAUDE_CODE_OTHER_TTL.value:
        return None
    return (f"{ttl} main conversation; {CLAUDE_CODE_OTHER_TTL.value} sub-agents, forks, compaction unless a step "
            f"sets its own ({CLAUDE_CODE_OTHER_TTL.source})")


def _price_line(prices: PriceBook, model: str, provider: str) -> str:
    r = prices.rates(model, provider)
    per = r.per_mtok()
    return (f"USD/MTok input {per['input']}, output {per['output']}, cache read {per['cache_read']}, "
            f"5m write {per['cache_write_5m']}, 1h write {per['cache_write_1h']} — {r.source}")


def _check_clock(run: Run, t0: dt.datetime, last: float, price_date: dt.date | None,
                 start: dt.datetime | None) -> None:
    """Every request's time of day (t0 + t) is on the clock; if not, the option or key that set t0 is
    named (--start wins over --price-date over the scenario's `start:` over its `price_date:`)."""
    why = clock_overrun(t0, last)
    if why is None:
        return
    if start is not None or price_date is not None:
        option = f"--start {start:%Y-%m-%dT%H:%M:%SZ}" if start is not None else f"--price-date {price_date}"
        raise UserError(f"{option}: {why}; give an earlier one", run.path)
    key = "start" if run.scenario.start else "price_date" if run.scenario.price_date else None
    if key is None:
        raise UserError(f"timeline: {why}", run.path)
    line, col = locate(read_yaml(run.path), (key,))
    raise UserError(f"{key}: {why}; give an earlier one", run.path, line, col)


def _locate(e: UserError, run: Run) -> UserError:
    """A mistake found while simulating points at its step or setting (`UserError.site`), else at the
    variant (or the scenario) that caused it."""
    if e.path:
        return e
    node = read_yaml(run.path)
    line = col = None
    index = None
    if isinstance(node, dict) and node.get("variants"):
        for i, v in enumerate(node["variants"]):
            if isinstance(v, dict) and v.get("name") == run.variant.split(" [")[0]:
                index = i
                line, _ = locate(node, ("variants", i))
    if e.site is not None and isinstance(node, dict):
        where, step_where = _where(node, index)
        kind, at = e.site
        found = step_where(int(at)) if kind == "step" else where(str(at)) if kind == "setting" else (None, None)
        if found[0] is not None:
            line, col = found
    if line is None:
        line, _ = locate(node, ("name",))
    return e.located(run.path, line, col)


def collect(path: str, runs: list[Run], results: list[VariantResult]) -> ScenarioResult:
    """One scenario file's result from the results of its runs (in their order)."""
    for v in results:   # the summary a report shows is the sum of the rows it lists (a bug otherwise)
        summary_matches_rows(*v.figures(), v.rows(), v.outcomes)
    sc = runs[0].scenario
    return ScenarioResult(sc.name, path, sc.description, results, sc.chart, sc.question)


def _gpu_sized(spec, model: str | None):
    """`engine: {gpu:, gpus:}`: the capacity, and the rates not given, from the GPUs' roofline."""
    from prefixsim.serving.engine_spec import sized   # lazy: the serving layer only for a sized engine

    if spec.capacity is not None:
        raise UserError("engine: give capacity or gpu, not both (gpu sizes the KV cache from the GPUs' HBM)"
                        ).at("setting", "engine")
    try:
        g = sized(spec.gpu, spec.gpus, spec.kv_model or model)
    except UserError as e:
        raise e.at("setting", "engine") from None
    return spec.model_copy(update={"capacity": g.capacity,
                                   "prefill_tokens_per_s": spec.prefill_tokens_per_s or g.prefill_tokens_per_s,
                                   "decode_tokens_per_s": spec.decode_tokens_per_s or g.decode_tokens_per_s})
