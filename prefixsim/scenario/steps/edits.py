"""Edit steps: parent-level changes to the tools, the system prompt and the request settings (each
the same operation a fork child's `modify` makes), and a tool refused at call time."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prefixsim.errors import UserError
from prefixsim.scenario.schema import CHANGE_STEPS, Modification
from prefixsim.scenario.state import Conv
from prefixsim.scenario.steps.registry import step

if TYPE_CHECKING:
    from prefixsim.scenario.builder import Timeline


def _change_step(field: str):
    """The parent-level step `field`: the Modification of that one field, applied to the parent."""
    def change(tl: Timeline, conv: Conv, value, k: int) -> Conv:
        modify(tl, conv, Modification(**{field: value}))
        return conv
    change.__name__ = field
    return change


# Each change step whose value is a Modification field's (schema.CHANGE_STEPS) is that modification.
for _field in CHANGE_STEPS:
    if _field in Modification.model_fields:
        step(_field)(_change_step(_field))


@step("refuse_tool_at_call_time")
def refuse_tool_at_call_time(tl: Timeline, conv: Conv, name: str, k: int) -> Conv:
    """The tool stays defined (in the prefix); its calls from now on are answered with a refusal."""
    tool_named(conv, name)
    conv.refused.add(name)
    return conv


def tool_named(conv: Conv, name: str) -> int:
    """Index of the tool called `name`; a user error naming the tools there are when none is."""
    for i, t in enumerate(conv.tools):
        if t.get("name") == name:
            return i
    raise UserError(f"no tool named {name!r} (tools: {', '.join(t.get('name', '?') for t in conv.tools)})")


def modify(tl: Timeline, conv: Conv, mod: Modification) -> None:
    """Apply a Modification (a fork child's `modify`, or one parent-level change step) to `conv`."""
    if mod.remove_tool is not None:
        i = tool_named(conv, mod.remove_tool)
        conv.set_tools(conv.tools[:i] + conv.tools[i + 1:])
    if mod.add_tool is not None:
        tools = list(conv.tools)
        pos = len(tools) if mod.add_tool.position is None else mod.add_tool.position
        tools.insert(pos, tl.make_tool(mod.add_tool.name, mod.add_tool.size))
        conv.set_tools(tools)
    if mod.reorder_tools is not None:
        r = mod.reorder_tools
        if r == "reverse":
            conv.set_tools(conv.tools[::-1])
        elif r == "rotate":
            conv.set_tools(conv.tools[1:] + conv.tools[:1])
        else:
            order = [tool_named(conv, n) for n in r]
            rest = [t for i, t in enumerate(conv.tools) if i not in order]
            conv.set_tools([conv.tools[i] for i in order] + rest)
    if mod.reorder_keys is not None:
        i = tool_named(conv, mod.reorder_keys)
        tool = conv.tools[i]
        schema = tool.get("input_schema", {})
        props = schema.get("properties", {})
        new_schema = {**schema, "properties": dict(reversed(list(props.items())))}
        reordered = {k: (new_schema if k == "input_schema" else v) for k, v in reversed(list(tool.items()))}
        conv.set_tools(conv.tools[:i] + [reordered] + conv.tools[i + 1:])
    if mod.edit_system is not None:
        e = mod.edit_system
        system = [dict(p) for p in conv.system] or [{"type": "text", "text": ""}]

        def as_text(v):
            return v if isinstance(v, str) else tl.text(v)
        if e.replace is not None:
            system = [{"type": "text", "text": as_text(e.replace)}]
        if e.prepend is not None:
            system[0]["text"] = as_text(e.prepend) + "\n" + system[0]["text"]
        if e.append is not None:
            system[-1]["text"] = system[-1]["text"] + "\n" + as_text(e.append)
        conv.set_system(system)
    if mod.set_tool_choice is not None or "set_tool_choice" in mod.model_fields_set:
        conv.tool_choice = mod.set_tool_choice
    if mod.set_thinking is not None or "set_thinking" in mod.model_fields_set:
        conv.thinking = mod.set_thinking
    if mod.switch_model is not None:
        conv.model = mod.switch_model
