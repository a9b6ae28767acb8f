"""prefixsim: an offline prefix-cache simulator and cost calculator for LLM agent harnesses.

The names a notebook needs are here (`prefixsim.run_scenario(...)`, `prefixsim.open_many(...)`), each
imported on first use: heavy modules (pandas, matplotlib, tiktoken) load lazily so `prefixsim --help`
stays fast. Where each lives:

    run_scenario, run_paths   prefixsim.api            a scenario file, or files and folders, run
    open_many                 prefixsim.sources        real traffic (logs, transcripts) as Records
    Simulator                 prefixsim.core.simulator one policy, one cache: Calls in, Outcomes out
    PriceBook                 prefixsim.core.pricing   prices on a date
    get_policy                prefixsim.providers.registry  a provider's cache rules by name

The replay is `from prefixsim.replay import replay, compare` (a package of that name: an attribute
`prefixsim.replay` would be the package once it is imported, so it is not re-exported here).
"""
__version__ = "0.1.0"

#: public name -> the module that holds it
EXPORTS = {
    "run_scenario": "prefixsim.api", "run_paths": "prefixsim.api",
    "open_many": "prefixsim.sources",
    "Simulator": "prefixsim.core.simulator",
    "PriceBook": "prefixsim.core.pricing",
    "get_policy": "prefixsim.providers.registry",
}
__all__ = ["__version__", *EXPORTS]


def __getattr__(name: str):
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prefixsim' has no attribute {name!r}")
    import importlib   # lazy: start-up (`prefixsim --help` must not load the simulator's dependencies)

    return getattr(importlib.import_module(module), name)
