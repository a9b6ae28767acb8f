"""Which break-even studies the design-review page draws, and with which parameters: each scenario's
`studies:` (one chart per scenario naming a study), else the design scenario's own sizes
(report/study_sizes.py), else the study's defaults, with the report's -p on top. api-vs-selfhosted
is drawn only for a scenario that names it, at that scenario's sizes where its `studies:` leaves a
parameter out."""
from __future__ import annotations

import dataclasses

from prefixsim.errors import UserError
from prefixsim.scenario.loader import load_runs
from prefixsim.scenario.studycheck import as_lists, study_params
from prefixsim.scenario.studynames import SCENARIO_STUDIES, SERVING_STUDIES
from prefixsim.scenario.studyparams import DEFAULT_CHILDREN, LIST_STUDIES, params_class


def _given(params: tuple[str, ...] | list[str]) -> dict[str, dict[str, list[str]]]:
    """-p KEY=VALUE (for every study with KEY) or STUDY.KEY=VALUE (for one), by study."""
    given: dict[str, dict[str, list[str]]] = {n: {} for n in SCENARIO_STUDIES}
    for pair in params:
        key, sep, value = pair.partition("=")
        study, dot, field = key.strip().rpartition(".")
        field = field.replace("-", "_")
        several = "," in value   # a list compares designs: only the studies that compare take it
        targets = [study] if dot else [n for n in SCENARIO_STUDIES
                                       if field in {f.name for f in dataclasses.fields(params_class(n))}
                                       and (not several or n in LIST_STUDIES)]
        if not sep or (dot and study not in SCENARIO_STUDIES) or not targets:
            raise UserError(f"--param {pair!r}: KEY=VALUE (for every study with KEY) or STUDY.KEY=VALUE, "
                            f"STUDY one of {', '.join(SCENARIO_STUDIES)}")
        for t in targets:
            given[t][field] = [v.strip() for v in value.split(",")]
    return given


def study_designs(files: list[str], params: tuple[str, ...] | list[str] = (),
                  sized: tuple[str, dict[str, dict]] | None = None, serving: dict[str, dict] | None = None):
    """(study, label, params, lists, caption) for every study chart of the report: the parameters each
    scenario's `studies:` names (one chart per scenario that names the study), else the sizes of the
    design scenario (`sized`: its name and report/study_sizes.py's parameters), else the defaults,
    each with the report's -p values on top (KEY=VALUE for every study that has KEY, or
    STUDY.KEY=VALUE for one). A serving study (api-vs-selfhosted) runs only where a scenario names
    it, with that scenario's sizes (`serving`: by scenario name, study_sizes.serving_sizes) under what
    its `studies:` gives. The caption says where the parameters come from."""
    given = _given(params)
    named: dict[str, list[tuple[str, dict]]] = {n: [] for n in SCENARIO_STUDIES}
    for path in files:
        sc = load_runs(path)[0].scenario
        for n, values in (sc.studies or {}).items():
            named[n].append((sc.name, as_lists(values or {})))
    out = []
    for n in SCENARIO_STUDIES:
        if n in SERVING_STUDIES and not named[n]:
            continue
        where = f"--param ({n})"
        own = as_lists(sized[1].get(n, {})) if sized is not None and not named[n] else {}
        for label, values in named[n] or [("", own)]:
            read = {k: v for k, v in as_lists((serving or {}).get(label, {})).items() if k not in values} \
                if n in SERVING_STUDIES else {}
            try:
                f, lists = study_params(n, {**read, **values, **given[n]}, where=where)
            except UserError:
                if not own and not read:
                    raise
                own = read = {}   # the scenario's sizes fall outside the study's ranges: its defaults, said so
                f, lists = study_params(n, {**values, **given[n]}, where=where)
            listed = {"children": list(DEFAULT_CHILDREN), **lists} if n == "fork-vs-subagent" and \
                "children" not in lists else lists
            shown_ = {**dataclasses.asdict(f), **{k: ", ".join(map(str, v)) for k, v in listed.items()}}
            text = "; ".join(f"{k} {v}" for k, v in shown_.items())
            sizes = f" and its sizes ({', '.join(read)} read from it)" if read else ""
            if label:
                caption = f"Parameters from the `studies:` of scenario {label}{sizes}" + \
                    (" and -p" if given[n] else "") + f": {text}."
            elif own and sized is not None:
                caption = (f"No scenario names this study (`studies:`), so it runs at the sizes of scenario "
                           f"{sized[0]} ({', '.join(own)} read from it)"
                           + (" with -p" if given[n] else "") + f": {text}.")
            else:
                caption = ("No scenario names this study (`studies:`), so it uses the defaults"
                           + (" with -p" if given[n] else "") + f": {text}.")
            out.append((n, label, f, lists, caption))
    return out
