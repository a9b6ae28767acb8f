"""A variant's latency models from its `latency:` section (scenario/latency_spec.py): the fitted
file it names read and checked, inline coefficients on top, each model family's default beneath."""
from __future__ import annotations

from prefixsim.errors import UserError
from prefixsim.io.jsonfile import load_json
from prefixsim.latency.defaults import default_for
from prefixsim.latency.model import LatencyBook, LatencyModel, read_fitted
from prefixsim.providers.tables import canonical_model
from prefixsim.scenario.checks import resolve_file, shown_path
from prefixsim.scenario.latency_spec import LatencySpec


def latency_book(spec: LatencySpec | None, scenario_path: str, prefill_rate: float | None = None,
                 engine: bool = False) -> LatencyBook | None:
    """The variant's latency models. A serving engine's default is its prefill rate (no overhead, cached
    tokens free; None without a rate: the API figures say nothing of a GPU of yours)."""
    override = {} if spec is None else {k: float(getattr(spec, k)) for k in ("overhead_s", "uncached_s_per_1k",
                                                                              "cached_s_per_1k")
                                        if getattr(spec, k) is not None}
    source = "the scenario's latency: section"
    models: dict[str, LatencyModel] = {}
    fallback = default_for
    if spec is not None and spec.from_ is not None:
        shown = shown_path(scenario_path, spec.from_)
        try:
            models = {canonical_model(m): lm for m, lm in
                      read_fitted(load_json(str(resolve_file(scenario_path, spec.from_)), "fitted latency model",
                                            shown=shown), shown).items()}
        except UserError as e:
            # a file that does not parse names its own line; one of the wrong shape, the latency: key
            raise (e if e.path else UserError(f"latency: {e.message}").at("setting", "latency")) from None
        fallback = None
    elif engine:
        if prefill_rate is None and len(override) < 3:
            return None
        rate = LatencyModel(0.0, 1000 / prefill_rate if prefill_rate else 0.0, 0.0,
                            source=f"engine prefill at {prefill_rate:g} tokens/s (engine.prefill_tokens_per_s)"
                            if prefill_rate else source)
        fallback = lambda _m: rate   # noqa: E731
    return LatencyBook(models, fallback, override, source, canonical_model)
