"""The shape a conversation given literally must have (a `file:` request body, or a scenario's own
`tools:` / `history:` lists): the timeline builder looks tools up by name, edits system text and
appends to message content, so a list where text belongs would otherwise fail deep inside a run."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator


def conversation_problem(tools: Any, system: Any, messages: Any) -> str | None:
    """What the timeline builder cannot use in a conversation given literally (a `file:` body, or a
    scenario's own `tools:` / `history:` lists), or None: the builder looks tools up by name, edits
    system text and appends to message content, so these must have the API's types."""
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return "'tools' must be a list of tool definitions (objects)"
    for i, t in enumerate(tools):
        if "name" in t and not isinstance(t["name"], str):
            return f"tools[{i}].name must be text"
        schema = t.get("input_schema", {})
        if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
            return f"tools[{i}].input_schema must be an object whose 'properties' is an object"
    if not isinstance(system, (str, list)):
        return "'system' must be text or a list of content blocks"
    for i, part in enumerate(system if isinstance(system, list) else []):
        if not isinstance(part, dict) or not isinstance(part.get("text", ""), str):
            return f"system[{i}] must be a text block (an object whose 'text' is text)"
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "content" in m for m in messages):
        return "'messages' must be a list of objects with 'role' and 'content'"
    for i, m in enumerate(messages):
        if not isinstance(m.get("role", "user"), str):
            return f"messages[{i}].role must be text ('user' or 'assistant')"
        c = m["content"]
        if not isinstance(c, (str, list)) or (isinstance(c, list) and not all(isinstance(p, dict) for p in c)):
            return f"messages[{i}].content must be text or a list of content blocks (objects)"
    return None


def _literal_tools(v: Any) -> Any:
    """Tool definitions given literally must have the API's shape (names are text, ...)."""
    problem = conversation_problem(v, "", []) if isinstance(v, list) else None
    if problem:
        raise ValueError(problem)
    return v


def _literal_history(v: Any) -> Any:
    if isinstance(v, list):
        problem = conversation_problem([], "", [{"content": "", **m} if isinstance(m, dict) else m for m in v])
        if problem:
            raise ValueError(problem.replace("'messages'", "history").replace("messages[", "history["))
    return v


LiteralTools = Annotated[list[dict[str, Any]], AfterValidator(_literal_tools)]
LiteralHistory = Annotated[list[dict[str, Any]], AfterValidator(_literal_history)]
