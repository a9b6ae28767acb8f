"""One line and an example for every key of the scenario format, put into its JSON Schema
(`prefixsim schema`) and shown by `prefixsim schema --keys`.

Kept apart from the models (schema.py, fields.py) so the models stay readable; a field whose
`Field(description=...)` already says more keeps that description and takes only its example here
(None). tests/scenario/test_schema_docs.py holds every key of the format to an entry here, so a new
field without one fails the tests instead of reaching an editor undocumented.
"""
from __future__ import annotations

from typing import Any

# The scalar shorthand (schema.py expands it) each step accepts: `- wait: 5m`, `- fork: 5`, `- request: 3`.
SHORTHAND = {"wait": "seconds", "fork": "children", "subagent": "children", "request": "turns",
             "btw": "question", "compact": "summary", "add_image": "size",
             "create_cache": "name", "update_cache": "name", "delete_cache": "name"}


_HOLD = "hold"

#: Model name -> {field: (one line or None to keep the field's own description, example)}.
#: A subclass's field is looked up on the classes it inherits from, in order (StepBase's `label`
#: serves every step).
FIELDS: dict[str, dict[str, tuple[str | None, Any]]] = {
    "StepBase": {
        "label": ("Name of the step in per-request tables and reports.", "read the repo"),
        "after": (None, "30s"),
        "at": (None, "5m"),
    },
    "ToolsSpec": {
        "count": ("Number of generated tool definitions.", 12),
        "size": ("Tokens of each generated tool definition.", 400),
        "names": (None, ["Read", "Edit", "Bash"]),
    },
    "TextSpec": {
        "size": ("Tokens of generated text.", "2K"),
        "text": ("Literal text, used as written.", "You are a careful code reviewer."),
    },
    "HistorySpec": {
        "turns": ("Tool-loop turns already in the conversation when the timeline starts.", 10),
        "user": ("Tokens of each user message.", 60),
        "assistant": ("Tokens of each assistant reply's text.", 150),
        "tool_use": ("Tokens of each tool call.", 60),
        "tool_result": ("Tokens of each tool result.", 500),
        "thinking": (None, 0),
    },
    "Conversation": {
        "tools": ("Tool definitions: generated ({count, size, names}) or a literal list in the API's shape.",
                  {"count": 12, "size": 400}),
        "system": ("System prompt: a size (30K), literal text, or {size} / {text}.", "30K"),
        "history": ("Conversation before the timeline: generated turns ({turns, ...}) or literal messages.",
                    {"turns": 10}),
        "file": (None, "request.json"),
    },
    "RequestSpec": {
        "turns": ("Turns of the parent's tool loop this step takes (one request each).", 3),
        "user": ("Tokens of each user message (default: the history's).", 60),
        "assistant": ("Tokens of each assistant reply (default: the history's).", 150),
        "tool_use": ("Tokens of each tool call (default: the history's).", 60),
        "tool_result": ("Tokens of each tool result (default: the history's).", 500),
    },
    "Modification": {
        "remove_tool": ("Drop the named tool from the tool list.", "Bash"),
        "add_tool": ("Add a tool {name, size, position} (default: at the end).", {"name": "Search", "size": 400}),
        "reorder_tools": ("Reorder the tools: reverse, rotate, or the names in their new order.", "reverse"),
        "reorder_keys": ("Reorder the JSON keys of the named tool's definition (different bytes, same tool).",
                         "Read"),
        "edit_system": ("Append, prepend or replace system-prompt text (a size or literal text).",
                        {"append": 200}),
        "set_tool_choice": ("Set the request's tool_choice as the API takes it (null removes it).",
                            {"type": "any"}),
        "set_thinking": ("Set the request's thinking as the API takes it (null turns it off).",
                         {"type": "enabled", "budget_tokens": 4000}),
        "switch_model": ("Send the following requests to this model.", "claude-haiku-4-5"),
    },
    "OwnStream": {"ttl": (None, "5m")},
    "ForkSpec": {
        "children": ("Children forked from the parent's exact prefix.", 4),
        "directive": ("Tokens of each child's own directive, the part that differs.", 200),
        "tool_call": ("Tokens of each tool_use block of the parent's spawning message.", 80),
        "stagger": (None, 2),
        "turns": (None, 1),
        "result": ("Tokens of each child's result joined back into the parent.", 300),
        "modify": ("Changes applied to one child each, in order (the others keep the parent's prefix).",
                   [{"remove_tool": "Bash"}]),
        "refuse": (None, ["Bash"]),
        "join": (None, True),
        "boundary": (None, True),
    },
    "SubagentSpec": {
        "children": ("Sub-agents launched.", 3),
        "system": ("The sub-agents' system prompt: a size, literal text or {size} / {text}.", 1500),
        "tools": ("The sub-agents' tools: generated ({count, size}) or a literal list.", {"count": 6, "size": 300}),
        "task": ("Tokens of each sub-agent's task message.", 300),
        "turns": ("Requests each sub-agent makes (its own tool loop).", 2),
        "stagger": (None, _HOLD),
        "tool_call": ("Tokens of each tool_use block of the parent's spawning message.", 80),
        "result": ("Tokens of each sub-agent's result joined back into the parent.", 300),
        "join": ("Append the call and the sub-agents' results to the parent history.", True),
        "distinct": (None, False),
    },
    "BtwSpec": {
        "question": ("Tokens of the side question.", 30),
        "answer": ("Tokens of its answer (not kept in the history).", 60),
    },
    "WaitSpec": {"seconds": ("Idle time before the next step (seconds or 90s, 5m, 1h).", "5m")},
    "AddToolSpec": {
        "name": ("Name of the tool added.", "Search"),
        "size": ("Tokens of its definition.", 400),
        "position": ("Index it takes in the tool list (negative counts from the end; default: last).", 0),
    },
    "EditSystemSpec": {
        "append": ("Text (or a size of generated text) added at the end of the system prompt.", 200),
        "prepend": ("Text (or a size) added at the start of the system prompt.", "Today is Monday."),
        "replace": ("Text (or a size) the whole system prompt becomes.", "4K"),
    },
    "CompactSpec": {
        "instruction": ("Tokens of the summary instruction appended to the conversation.", 200),
        "summary": ("Tokens of the summary, which becomes the fresh history.", 2000),
    },
    "ImageSpec": {"size": ("Tokens of the image.", 1600)},
    "CreateCacheSpec": {
        "name": ("Name the later update_cache and delete_cache steps refer to.", "cache"),
        "messages": (None, 4),
        "ttl": (None, "1h"),
    },
    "UpdateCacheSpec": {
        "name": ("The CachedContent whose TTL is set.", "cache"),
        "ttl": ("Time it lives from this step on (default 1 h).", "30m"),
    },
    "DeleteCacheSpec": {"name": ("The CachedContent deleted.", "cache")},
    "EngineSpec": {
        "capacity": (None, "2M"),
        "kv_model": (None, "llama-3.1-8b"),
        "block_size": (None, 16),
        "page_size": (None, 1),
        "eviction": (None, "lru"),
        "prefill_tokens_per_s": (None, 10000),
        "decode_tokens_per_s": (None, 50),
        "lora": (None, "sql-adapter"),
        "cache_salt": (None, "tenant-a"),
        "gpu": (None, "h100-sxm"),
        "gpus": (None, 4),
    },
    "Settings": {
        "provider": ("Whose cache rules and prices apply (default: the one the model's family names).",
                     "anthropic"),
        "model": ("Model id, as the provider's API names it.", "claude-sonnet-4-5"),
        "tokenizer": ("How generated text is counted in tokens.", "cl100k_base"),
        "ttl": (None, "1h"),
        "breakpoints": ("Where cache_control breakpoints go: a placement's name or a list of places.",
                        "claude_code"),
        "endpoint": (None, "global"),
        "ttft": (None, "1.5s"),
        "pace": (None, "10s"),
        "output": (None, 200),
        "seed": ("Seed of the generated text (same seed, same bytes).", 0),
        "engine": (None, {"capacity": "2M", "eviction": "lru"}),
        "latency": (None, {"from": "fitted.json"}),
        "base": ("The conversation every request starts from: tools, system prompt, history.",
                 {"system": "30K", "history": {"turns": 10}}),
        "timeline": ("The steps played in order after the base conversation.", [{"request": 3}, {"fork": 4}]),
    },
    "Variant": {"name": ("Name of the variant in tables and reports.", "fork 4 children"),
                "reference": (None, True)},
    "SweepSpec": {
        "param": ("Name of the swept parameter, used as ${name} in the scenario.", "stagger"),
        "values": ("Values the parameter takes, one run each.", [0, 2, 5]),
        "range": (None, [0, 10, 2]),
    },
    "ChartSpec": {
        "x": ("The swept parameter on the x axis.", "stagger"),
        "y": ("The quantity plotted against it.", "cost_usd"),
        "title": ("What is plotted, said under the chart (default: \"Cost by <xlabel>\"); the title states the best point.",
                  "Cost by stagger"),
        "xlabel": (None, "stagger (seconds)"),
    },
    "Scenario": {
        "name": ("Name of the scenario (its report folder is named after it).", "my-fork-design"),
        "description": ("What the scenario models, in a sentence or two.", "A code agent forks four readers."),
        "question": (None, "Fork or sub-agents for four parallel readers?"),
        "variants": ("Designs compared side by side; each overrides the scenario's settings key by key.",
                     [{"name": "1h", "ttl": "1h"}]),
        "sweep": ("Run every variant once per value of one parameter.", {"param": "children", "values": [2, 4, 8]}),
        "chart": ("Plot a quantity against the swept parameter.", {"x": "children", "y": "cost_usd"}),
        "prices": (None, {"my-model": {"input": 3, "output": 15, "cache_read": 0.3}}),
        "price_date": (None, "2026-11-01"),
        "start": (None, "2026-11-24T16:30:00Z"),
        "vars": (None, {"children": 4}),
        "studies": (None, {"fork-vs-subagent": {"children": 4}}),
        "optimize": (None, {"ttl": ["5m", "1h"], "spawn": ["fork", "subagent"]}),
    },
    "LatencySpec": {
        "from_": (None, "fitted.json"),
        "overhead_s": (None, 0.5),
        "uncached_s_per_1k": (None, 0.1),
        "cached_s_per_1k": (None, 0.02),
    },
    "OptimizeSpec": {
        "ttl": ("TTLs a design may take.", ["5m", "1h"]),
        "breakpoints": ("Breakpoint placements a design may take.", ["claude_code", "last_message"]),
        "stagger": ("Sibling staggers a design may take (seconds or hold).", [0, _HOLD]),
        "spawn": ("Step kinds every fork and subagent step may become.", ["fork", "subagent"]),
    },
}

#: Step kind -> (one line, example of the step as written in a timeline).
STEPS: dict[str, tuple[str, Any]] = {
    "request": ("The parent takes turns of its tool loop (one request each).", {"request": 3}),
    "fork": ("Children that share the parent's exact prefix, each with its own directive.", {"fork": 4}),
    "subagent": ("Fresh children with their own system prompt, tools and task.", {"subagent": {"children": 3}}),
    "btw": ("A side question on the full conversation, not kept in its history.", {"btw": 30}),
    "wait": ("Idle time: caches age, none are read.", {"wait": "5m"}),
    "compact": ("Summarise the conversation and continue from the summary.", {"compact": 2000}),
    "add_image": ("A user message with an image (it invalidates the messages layer).", {"add_image": 1600}),
    "create_cache": ("Gemini: create an explicit CachedContent of the conversation so far.",
                     {"create_cache": {"name": "docs", "ttl": "1h"}}),
    "update_cache": ("Gemini: set a live CachedContent's TTL from now.", {"update_cache": {"name": "docs"}}),
    "delete_cache": ("Gemini: delete a live CachedContent; its storage stops.", {"delete_cache": "docs"}),
    "remove_tool": ("Drop the named tool from the parent's tool list.", {"remove_tool": "Bash"}),
    "add_tool": ("Add a tool to the parent's tool list.", {"add_tool": {"name": "Search", "size": 400}}),
    "reorder_tools": ("Reorder the parent's tools: reverse, rotate or names in order.", {"reorder_tools": "reverse"}),
    "reorder_keys": ("Reorder the JSON keys of one tool's definition.", {"reorder_keys": "Read"}),
    "edit_system": ("Change the parent's system prompt.", {"edit_system": {"append": 200}}),
    "set_tool_choice": ("Set the parent's tool_choice (null removes it).", {"set_tool_choice": {"type": "any"}}),
    "set_thinking": ("Turn extended thinking on or off for the parent.",
                     {"set_thinking": {"type": "enabled", "budget_tokens": 4000}}),
    "switch_model": ("Send the parent's following requests to another model.", {"switch_model": "claude-haiku-4-5"}),
    "refuse_tool_at_call_time": ("Keep a tool defined but refuse its calls from here on.",
                                 {"refuse_tool_at_call_time": "Bash"}),
}


def field_doc(model: type, name: str) -> tuple[str | None, Any] | None:
    """The (one line, example) of `model`'s field `name`, from the first class of its MRO listed."""
    for cls in model.__mro__:
        entry = FIELDS.get(cls.__name__, {}).get(name)
        if entry is not None:
            return entry
    return None


def document(schema: dict[str, Any], model: type) -> None:
    """pydantic's json_schema_extra hook: give each property its line and example."""
    step = getattr(model, "__step_kind__", None)
    # The schema names a field by its alias (`from`); the table, as the model does (`from_`).
    fields = {(f.alias or k): k for k, f in getattr(model, "model_fields", {}).items()}
    for name, prop in schema.get("properties", {}).items():
        entry = STEPS.get(name) if step == name else field_doc(model, fields.get(name, name))
        if entry is None:
            continue
        line, example = entry
        if line and not prop.get("description"):
            prop["description"] = line
        prop["examples"] = [_step_body(name, example[name]) if step == name else example]
    if step is not None:
        schema["examples"] = [STEPS[step][1]]


def _step_body(kind: str, body: Any) -> Any:
    """A step's example body as its spec takes it: the shorthand `fork: 4` is `{children: 4}`."""
    return {SHORTHAND[kind]: body} if kind in SHORTHAND and not isinstance(body, dict) else body
