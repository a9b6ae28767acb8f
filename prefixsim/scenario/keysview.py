"""`prefixsim schema --keys`: the scenario format's JSON Schema as a page a person reads, one block
per section (the scenario's own keys, each step, each nested part), each key with its type, default,
one line and example.

Read from the JSON Schema itself (not the models), so the page and what an editor completes are the
same facts."""
from __future__ import annotations

import json
from typing import Any, Callable

from prefixsim.errors import UserError
from prefixsim.io.suggest import unknown

#: Section names of the nested parts, as a scenario file names their key (the model names are code's).
SECTION_OF = {
    "Conversation": "base", "ToolsSpec": "tools", "TextSpec": "text", "HistorySpec": "history",
    "Modification": "modify", "AddToolSpec": "add_tool", "EditSystemSpec": "edit_system",
    "EngineSpec": "engine", "LatencySpec": "latency", "Variant": "variants", "SweepSpec": "sweep", "ChartSpec": "chart",
    "OptimizeSpec": "optimize", "RequestSpec": "request", "ForkSpec": "fork", "SubagentSpec": "subagent",
    "BtwSpec": "btw", "WaitSpec": "wait", "CompactSpec": "compact", "ImageSpec": "add_image",
    "CreateCacheSpec": "create_cache", "UpdateCacheSpec": "update_cache", "DeleteCacheSpec": "delete_cache",
}


def _ref_name(ref: str) -> str:
    name = ref.rsplit("/", 1)[-1]
    return SECTION_OF.get(name, name)


def type_of(prop: dict[str, Any]) -> str:
    """A JSON Schema type as a short phrase: `5m | 1h`, `tokens`, `list of fork | subagent`, `{engine}`
    (a closed set's values apart, so a long one wraps between them)."""
    if "$ref" in prop:
        return "{" + _ref_name(prop["$ref"]) + "}"
    if "enum" in prop:
        return " | ".join(str(v) for v in prop["enum"])
    if "const" in prop:
        return str(prop["const"])
    if prop.get("format") == "duration":   # fields.py _DURATION_SCHEMA
        return "duration or hold" if any(p.get("const") == "hold" for p in prop["anyOf"]) else "duration"
    if "anyOf" in prop:
        parts = [type_of(p) for p in prop["anyOf"] if p.get("type") != "null"]
        if any(p.get("pattern") for p in prop["anyOf"]) and "integer" in parts:
            return "tokens"   # fields.py _SIZE_SCHEMA: a count, or text such as 30K
        return " or ".join(dict.fromkeys(parts))
    kind = prop.get("type")
    if kind == "array":
        return "list of " + type_of(prop.get("items", {})) if prop.get("items") else "list"
    if kind == "object":
        names = prop.get("propertyNames", {}).get("enum")
        return "map of " + " | ".join(names) if names else "map"
    return str(kind or "any")


def _line(prop: dict[str, Any]) -> str:
    return " ".join(prop.get("description", "").split())


def _example(v: Any) -> str:
    return json.dumps(v, separators=(", ", ": "))


def sections(schema: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Section name -> (its one line, its properties), the scenario's own keys first."""
    out = {"scenario": (_line(schema), schema["properties"])}
    for name, d in schema.get("$defs", {}).items():
        if name in SECTION_OF and "properties" in d:
            out[SECTION_OF[name]] = (_line(d), d["properties"])
    out["steps"] = ("The step kinds of a timeline, each a one-key mapping.",
                    {k: p for d in schema.get("$defs", {}).values() if d.get("examples") and len(d["properties"]) == 1
                     for k, p in [(next(iter(d["properties"])), {**next(iter(d["properties"].values())),
                                                                 "description": d.get("description", ""),
                                                                 "examples": d["examples"]})]})
    return out


def _unwrapped(text: str, first: str, rest: str) -> str:
    return first + text


def render(schema: dict[str, Any], only: str | None = None,
           wrap: Callable[[str, str, str], str] = _unwrapped) -> str:
    """The page (or its section `only`); `wrap(text, first-line indent, continuation indent)` lays
    out each line (the command's: at the terminal's width, report/layout.py; by default one line each)."""
    secs = sections(schema)
    if only is not None and only not in secs:
        raise UserError(unknown("section", only, secs, show=len(secs)))
    out = []
    for name, (line, props) in secs.items():
        if only is not None and name != only:
            continue
        out.append(wrap(f"{name}: {line}", "", "    ") if line else f"{name}:")
        for key, prop in props.items():
            default = f", default {_example(prop['default'])}" if prop.get("default") is not None else ""
            out.append(wrap(f"{key} ({type_of(prop)}{default})", "  ", "      "))
            out.append(wrap(_line(prop), "      ", "      "))
            if prop.get("examples"):
                out.append(wrap(f"e.g. {_example(prop['examples'][0])}", "      ", "          "))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
