"""Reads scenario files: safe YAML with line numbers, `${var}` substitution, sweeps, variants.

Every mistake becomes a UserError at `file:line:col` with what would be right, and every mistake of
a file is found in one pass (scenario/mistakes.py): each check runs whatever the others found.
"""
from __future__ import annotations

import difflib
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import ValidationError

from prefixsim.errors import UserError
from prefixsim.io.userfiles import MAX_YAML_BYTES
from prefixsim.io.yamlfile import MAX_NODES, load_yaml
from prefixsim.scenario.checks import check_run, provider_of_model, read_body, resolve_file, shown_path
from prefixsim.scenario.mistakes import Mistakes, locate, salvage, taken_out, validation_errors
from prefixsim.scenario.schema import Scenario, Settings, Variant
from prefixsim.scenario.studycheck import ParamError, check_study
from prefixsim.scenario.sweep import broken_sweep, check_swept, sweep_values

_SETTINGS_FIELDS = tuple(f for f in Settings.model_fields)


@dataclass(frozen=True)
class Run:
    """One variant of one scenario (at one sweep value): everything needed to simulate it."""

    scenario: Scenario
    variant: str
    settings: Settings
    sweep_value: Any
    path: str
    reference: bool = False   # a yardstick variant (`reference: true`): shown, never the answer
    @property
    def base_dir(self) -> str:
        return str(Path(self.path).parent)


def scenario_files(paths: list[str]) -> list[str]:
    """Files given, and every *.yaml / *.yml under folders given, in a stable order."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*") if f.suffix in (".yaml", ".yml") and f.is_file())
            if not found:
                raise UserError(f"{p}: no scenario files (*.yaml, *.yml) in this folder")
            out += found
        elif os.path.exists(p):
            out.append(p)
        else:
            raise UserError(f"{p}: no such file or folder")
    return out


def read_yaml(path: str) -> Any:
    """Parse one scenario file safely (no object construction), keeping node positions; the shared
    reader checks size, tags, aliases, nesting and every value (yamlfile.load_yaml)."""
    return load_yaml(path, "scenario")


def _plain(node: Any) -> Any:
    """ruamel's commented containers -> plain dicts and lists (pydantic sees plain data). Aliases are
    expanded here; load_yaml has bounded their expanded size."""
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in node.items()}
    if isinstance(node, (list, set)):
        return [_plain(v) for v in node]
    if hasattr(node, "tag") and type(node).__name__.startswith("Tagged"):
        return node.value
    if type(node).__name__ in ("ScalarFloat",):
        return float(node)
    if type(node).__name__ in ("ScalarInt", "HexInt", "OctalInt", "BinaryInt"):
        return int(node)
    if type(node).__name__ == "ScalarBoolean":
        return bool(node)
    if isinstance(node, str):
        return str(node)
    return node


#: Characters of text the `${...}` placeholders of one file may add, over all its sweep values: four
#: times the largest file read. Each value may hold placeholders of later ones, so 34 vars of
#: "${next}${next}" would double 34 times (16 G characters); the growth is counted before each
#: replacement is made, as yamlfile counts an alias's expanded size before expanding it, and a
#: whole-value placeholder adds its values to the same MAX_NODES as an alias.
MAX_SUBSTITUTED = 4 * MAX_YAML_BYTES


def _budget() -> list[int]:
    """[characters, values] the placeholders of one file may still add."""
    return [MAX_SUBSTITUTED, MAX_NODES]


def _values(v: Any, limit: int) -> int:
    """Values in `v` once expanded (counting stops past `limit`)."""
    n, stack = 0, [v]
    while stack and n <= limit:
        x = stack.pop()
        n += 1
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return n


def _substitute(node: Any, values: dict[str, Any], path: str, raw: Any = None, loc: tuple = (),
                budget: list[int] | None = None, found: Mistakes | None = None) -> Any:
    """`${name}` placeholders take their value; a whole-string placeholder keeps the value's type.
    `raw` is the parsed file, so an undefined placeholder is reported at its line. `budget`: what the
    file's placeholders may still add (`_budget`). `found`: undefined placeholders are added to it
    (and left as written) instead of raised, so the file's other mistakes are found too."""
    budget = _budget() if budget is None else budget
    if isinstance(node, dict):
        return {k: _substitute(v, values, path, raw, (*loc, k), budget, found) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, values, path, raw, (*loc, i), budget, found) for i, v in enumerate(node)]
    if isinstance(node, str) and "${" in node:
        names = list(values)
        for j, (name, value) in enumerate(values.items()):
            token = "${" + name + "}"
            if node == token:
                budget[1] -= _values(value, budget[1])
                if budget[1] < 0:
                    raise UserError(f"the `${{...}}` placeholders expand to more than {MAX_NODES:,} values (at "
                                    f"${{{name}}}, as an alias bomb would); write the values out plainly", path,
                                    *locate(raw, loc))
                # the value's own placeholders name later vars, as they do inside a longer text
                later = {k: values[k] for k in names[j + 1:]}
                return _substitute(value, later, path, raw, loc, budget, found) if later else value
            if token not in node:
                continue
            text = str(value)
            budget[0] -= node.count(token) * max(len(text) - len(token), 0)
            if budget[0] < 0:
                raise UserError(f"the `${{...}}` placeholders expand to more than {MAX_SUBSTITUTED:,} characters "
                                f"(at ${{{name}}}: do the vars hold placeholders that double?); write the values "
                                "out plainly", path, *locate(raw, loc))
            node = node.replace(token, text)
        if "${" in node:
            start = node.index("${")
            name = node[start + 2:node.find('}', start)] if "}" in node[start:] else node[start + 2:]
            near = difflib.get_close_matches(name, list(values), n=1, cutoff=0.6)
            hint = f"did you mean ${{{near[0]}}}?" if near else f"defined: {', '.join(sorted(values)) or 'none'};"
            e = UserError(f"undefined placeholder {node[start:node.find('}', start) + 1]} ({hint} "
                          "`vars:` or `sweep: {param: ...}` define them)", path, *locate(raw, loc))
            if found is None:
                raise e
            found.add(e, unless_taken=True)   # a broken sweep's ${param} is claimed: its error was said
    return node


#: What a value the checks did not foresee raises while a file is read or played: a number out of
#: range, a wrong type, text that cannot be encoded, nesting past the stack. Named in one place.
INPUT_FAULTS = (RecursionError, OverflowError, ValueError, ArithmeticError, UnicodeError, TypeError)


@contextmanager
def input_boundary(path: str, line: int | None = None) -> Iterator[None]:
    """The loader's error boundary: inside it, a fault from the user's values (INPUT_FAULTS) becomes
    a UserError naming the file (and `line`, when the caller knows it). The checks in yamlfile,
    jsonfile and the schema locate every known case at its own line; this catches the rest, so a
    value nobody foresaw is still a one-line error, not exit 70."""
    try:
        yield
    except UserError:
        raise
    except INPUT_FAULTS as e:
        raise UserError(f"cannot use a value in this file ({type(e).__name__}: {str(e)[:160]})", path, line) from None


def load_runs(path: str, node: Any = None) -> list[Run]:
    """Every run a scenario file asks for: variants x sweep values, validated (`node`: already parsed, scenario/inline.py)."""
    with input_boundary(path):
        return _load_runs(path, node)


def _load_runs(path: str, node: Any = None) -> list[Run]:
    """Every phase's checks run whatever the earlier ones found (scenario/mistakes.py); then every
    mistake of the file is raised at once."""
    node = read_yaml(path) if node is None else node
    if not isinstance(node, dict):
        kind = "a list" if isinstance(node, list) else f"a single value ({node!r:.40})"
        raise UserError(f"the file is {kind}; a scenario is a mapping (`name: ...` and other keys)", path, 1)
    doc = _plain(node)
    found = Mistakes(path)
    try:
        param, values = sweep_values(doc, node, path)
        swept = param
    except UserError as e:   # no values to run: the rest is checked with the swept ${param} unset
        found.add(e)
        param, values, swept = None, [None], broken_sweep(doc, node, found)
    if swept is not None:
        with found.catch():
            check_swept(swept, doc, node, path)
    runs: list[Run] = []
    budget = _budget()   # the placeholders' growth, over every sweep value
    for value in values:
        with found.catch():   # a placeholder bomb ends this value's checks, not the file's report
            runs += _value_runs(doc, node, path, param, value, budget, found)
    found.check()
    return runs


def _value_runs(doc: dict, node: Any, path: str, param: str | None, value: Any, budget: list[int],
                found: Mistakes) -> list[Run]:
    """The runs of one sweep value, each check's mistakes added to `found`."""
    subst = dict(doc.get("vars") or {})
    if param is not None:
        subst[param] = value
    body = {k: v for k, v in doc.items() if k != "sweep"}
    if subst or _has_placeholder(body):
        body = _substitute(body, subst, path, node, budget=budget, found=found)
    data = {**body, "sweep": doc.get("sweep")}
    touched: set[str] = set()
    try:
        sc: Scenario | None = Scenario.model_validate(data)
    except ValidationError as e:
        for err in validation_errors(e, node, path):
            found.add(err, unless_taken=True)
        sc, touched = salvage(data, e)   # what is left is checked too
    if sc is None:
        return []
    _check_studies(sc, node, path, found)
    runs = []
    for vi, v in enumerate(sc.variants or [Variant(name="default")]):
        merged = {f: getattr(v, f) if getattr(v, f) is not None else getattr(sc, f) for f in _SETTINGS_FIELDS}
        settings = Settings.model_construct(**{**merged, "provider": merged["provider"] or provider_of_model(merged["model"])})
        # what the schema refused is not there to check: a refused provider, model or body file
        # would have its models checked as another's, an emptied timeline called empty
        own = [f"variants[{vi}].{k}" for k in ("provider", "model", "base.file")] if sc.variants else []
        with found.catch():
            check_run(settings, sc, path, *_where(node, vi if sc.variants else None),
                      check_models=not taken_out(touched, "provider", "model", "base.file", *own))
        if not taken_out(touched, "timeline", "variants"):
            with found.catch():
                _require_timeline(sc, [v], node, path, vi)
        name = v.name if param is None else f"{v.name} [{param}={value}]"
        runs.append(Run(sc, name, settings, value, path, v.reference))
    return runs


def _check_studies(sc: Scenario, node: Any, path: str, found: Mistakes) -> None:
    """A scenario's `studies:` checked as -p values are (studycheck.py), each refusal at the line of
    the parameter it names (or of its study)."""
    for name, values in (sc.studies or {}).items():
        try:
            check_study(name, values)
        except ParamError as e:
            loc = ("studies", name, e.key) if e.key is not None else ("studies", name)
            found.add(UserError(f"studies: {e.message}", path, *locate(node, loc)))


def _require_timeline(sc: Scenario, variants: list[Variant], node: Any, path: str, first: int = 0) -> None:
    """A scenario without steps would run 0 requests and print an empty table: say so instead."""
    for i, v in enumerate(variants, first):
        if v.timeline or (v.timeline is None and sc.timeline):
            continue
        own = sc.variants is not None and v.timeline is not None
        line, col = locate(node, ("variants", i, "timeline") if own else ("timeline",))
        if line is None:   # no timeline key at all: point at the scenario's name
            line, col = locate(node, ("name",))[0], None
        whose = f"variant {v.name!r} has" if own else "the scenario has"
        what = "no `timeline:`" if (v.timeline if own else sc.timeline) is None else "an empty `timeline:`"
        raise UserError(f"{whose} {what}, so nothing would run; add steps, e.g. `timeline: [request: 3]`",
                        path, line, col)


def _has_placeholder(node: Any) -> bool:
    if isinstance(node, dict):
        return any(_has_placeholder(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_placeholder(v) for v in node)
    return isinstance(node, str) and "${" in node


def _where(node: Any, variant_index: int | None) -> tuple[Callable, Callable]:
    """Locators for a variant's merged settings: a key the variant sets is found in the variant,
    any other in the scenario itself."""
    def where(dotted: str) -> tuple[int | None, int | None]:
        parts = tuple(dotted.split("."))
        if variant_index is not None:
            v = node["variants"][variant_index]
            if isinstance(v, dict) and parts[0] in v:
                return locate(node, ("variants", variant_index, *parts))
        return locate(node, parts)

    def step_where(k: int) -> tuple[int | None, int | None]:
        line, col = where("timeline")
        inner = ("variants", variant_index, "timeline", k) if variant_index is not None and \
            "timeline" in (node["variants"][variant_index] or {}) else ("timeline", k)
        found = locate(node, inner)
        return found if found[0] is not None else (line, col)

    return where, step_where


def load_json_file(run: Run, rel: str) -> dict:
    """A `file:` reference: relative to the scenario, and never outside the scenario's folder tree."""
    try:
        return read_body(resolve_file(run.path, rel), shown_path(run.path, rel))
    except UserError as e:
        raise e if e.path else e.located(run.path) from None
