"""The scenario file format, as pydantic models (`prefixsim schema` prints their JSON Schema).

Sizes are in tokens, written as numbers or as people write them: 30K, 2k, 1.5M, 30_000 (a size
written as text would otherwise be taken as literal text, silently: `system: 30K` is 30,000 tokens,
`system: {text: 30K}` the three characters). Durations are seconds or strings like "90s", "5m", "1h", "2m30s".
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, Discriminator, Field, Tag, WithJsonSchema, field_validator

from prefixsim.engines.kvsize import MODELS as KV_MODELS, split_capacity
from prefixsim.serving.gpus import CATALOGUE as GPU_CATALOGUE
from prefixsim.errors import UserError
from prefixsim.core.tokens import TOKENIZERS
from prefixsim.providers.registry import PROVIDERS
from prefixsim.scenario.fielddocs import SHORTHAND, STEPS as STEP_LINES
from prefixsim.scenario.studynames import SCENARIO_STUDIES
from prefixsim.scenario.cache_specs import CreateCacheSpec, DeleteCacheSpec, UpdateCacheSpec

# The format's value types and limits (re-exported: other modules read the limits here).
from prefixsim.scenario.fields import (  # noqa: F401
    MAX_COUNT,
    MAX_SECONDS,
    MAX_SWEEP,
    MAX_TOKENS,
    TTL,
    Breakpoints,
    Count,
    Duration,
    Price,
    SIBLING_LAUNCH,
    Stagger,
    StepBase,
    Strict,
    Tokens,
    one_of,
    parse_duration,
    parse_size,
    size_value,
)
from prefixsim.scenario.latency_spec import LatencySpec
from prefixsim.scenario.literal import LiteralHistory, LiteralTools
from prefixsim.scenario.optimize import OptimizeSpec


def _text_or_size(v: Any) -> Any:
    """Where a field takes literal text or a size, text that reads as a size is the size."""
    return parse_size(v)


# --- the base conversation -------------------------------------------------------------------

class ToolsSpec(Strict):
    """Generated tool definitions: `count` tools of about `size` tokens each."""

    count: Count = 12
    size: Tokens = 400
    names: list[str] | None = Field(None, description="Tool names in order; generated names fill the rest.")


class TextSpec(Strict):
    """A system prompt (or other text) given by size or literally."""

    size: Tokens | None = None
    text: str | None = None


class HistorySpec(Strict):
    """`turns` turns of a tool loop: a user message, an assistant reply with a tool call, its result."""

    turns: Count = 0
    user: Tokens = 60
    assistant: Tokens = 150
    tool_use: Tokens = 60
    tool_result: Tokens = 500
    thinking: Tokens = Field(0, description="Tokens of the thinking block that opens each assistant reply while "
                                            "thinking is on (set_thinking, type enabled or adaptive); billed as "
                                            "output. Models that keep only the last turn's thinking (Sonnet 4.5, "
                                            "Haiku, Opus <= 4.1) drop it from the prompt after a new user message.")


class Conversation(Strict):
    """The conversation every request starts from: tools, system prompt and history."""

    tools: ToolsSpec | LiteralTools | None = None
    system: Annotated[TextSpec | str | Tokens | None, BeforeValidator(_text_or_size)] = None
    history: HistorySpec | LiteralHistory | None = None
    file: str | None = Field(None, description="A request body JSON file whose tools, system and messages "
                                               "are the base (path relative to the scenario file).")


# --- timeline steps ----------------------------------------------------------------------------

class RequestSpec(StepBase):
    """The parent takes `turns` turns of its tool loop."""

    turns: Count = 1
    user: Tokens | None = None
    assistant: Tokens | None = None
    tool_use: Tokens | None = None
    tool_result: Tokens | None = None


class Modification(Strict):
    """A change applied to one child only (fork) or to the parent (as a step)."""

    remove_tool: str | None = None
    add_tool: "AddToolSpec | None" = None
    reorder_tools: Literal["reverse", "rotate"] | list[str] | None = None
    reorder_keys: str | None = None
    edit_system: "EditSystemSpec | None" = None
    set_tool_choice: dict[str, Any] | None = None
    set_thinking: dict[str, Any] | None = None
    switch_model: str | None = None


class OwnStream(StepBase):
    """A step whose requests run on streams of their own (not the main conversation)."""

    ttl: TTL | None = Field(None, description="TTL of this step's cache writes. Default: the scenario's `ttl`, "
                                              "except under `breakpoints: claude_code`, where only the main "
                                              "conversation takes it and sub-agents, forks and compaction "
                                              "write 5m (Claude Code's TTL buckets).")


class ForkSpec(OwnStream):
    """N children, each the parent's exact prefix + the parent's assistant message with N tool_use
    blocks + identical placeholder tool_results + a per-child directive (seed 000)."""

    children: Count = 1
    directive: Tokens = 200
    tool_call: Tokens = 80
    stagger: Stagger = Field(SIBLING_LAUNCH, description="Seconds between sibling launches, or hold (default, as "
                             "Claude Code: the others wait for the first one's response to begin).")
    turns: Count = Field(1, description="Requests each child makes (its own tool loop).")
    result: Tokens = 300
    modify: list[Modification] = Field(default_factory=list)
    refuse: list[str] = Field(default_factory=list, description="Tools kept but refused at call time.")
    join: bool = Field(True, description="Append the call and the children's results to the parent history.")
    boundary: bool = Field(True, description="Put a breakpoint on the last placeholder result, the end of the "
                                             "prefix the children share (seed 000), when breakpoints are used.")


class SubagentSpec(OwnStream):
    """N fresh children with their own system prompt, tools and task."""

    children: Count = 1
    system: Annotated[TextSpec | str | Tokens, BeforeValidator(_text_or_size)] = 1500
    tools: ToolsSpec | LiteralTools = ToolsSpec(count=6, size=300)
    task: Tokens = 300
    turns: Count = 1
    stagger: Stagger = Field(SIBLING_LAUNCH, description="Seconds between sibling launches, or hold (default, as "
                             "Claude Code: the others wait for the first one's response to begin).")
    tool_call: Tokens = 80
    result: Tokens = 300
    join: bool = True
    distinct: bool = Field(False, description="Each child gets its own system prompt and tools "
                                              "(different agent types); by default siblings share them.")


class BtwSpec(OwnStream):
    """A side question on the full conversation, not appended to history (tools kept, none run)."""

    question: Tokens = 30
    answer: Tokens = 60


class WaitSpec(StepBase):
    """Idle time between steps: caches age, none are read."""

    seconds: Duration = 0.0


class AddToolSpec(Strict):
    """A tool added to the tool list."""

    name: str
    size: Tokens = 400
    position: Annotated[int, Field(ge=-MAX_COUNT, le=MAX_COUNT)] | None = None


class EditSystemSpec(Strict):
    """A change of the system prompt's text."""

    append: Annotated[str | Tokens | None, BeforeValidator(_text_or_size)] = None
    prepend: Annotated[str | Tokens | None, BeforeValidator(_text_or_size)] = None
    replace: Annotated[str | Tokens | None, BeforeValidator(_text_or_size)] = None


class CompactSpec(OwnStream):
    """A summary request that reads the conversation's cache, then a fresh history holding the summary."""

    instruction: Tokens = 200
    summary: Tokens = 2000


class ImageSpec(StepBase):
    """A user message with an image (images invalidate the messages layer, A-PC)."""

    size: Tokens = 1600


def _step_key(v: Any) -> str | None:
    if isinstance(v, BaseModel):  # an already-validated step (variants re-validate merged settings)
        return next(iter(type(v).model_fields))
    if isinstance(v, dict):
        keys = [k for k in v if k in STEP_KINDS]
        return keys[0] if len(keys) == 1 else None
    return None


def _single(kind: str, spec: Any) -> type:
    """A one-key step `{kind: spec}`; a scalar or null body is shorthand for the spec's main field.
    Its description is the step's line of fielddocs.py (the spec's own docstring may be a builtin's:
    `str`'s, for remove_tool)."""
    return type(f"{kind.title().replace('_', '')}Step", (Strict,), {
        "__annotations__": {kind: spec}, "__doc__": STEP_LINES[kind][0], "__step_kind__": kind})


STEP_SPECS: dict[str, type] = {
    "request": RequestSpec, "fork": ForkSpec, "subagent": SubagentSpec, "btw": BtwSpec,
    "wait": WaitSpec, "compact": CompactSpec, "add_image": ImageSpec,
    "create_cache": CreateCacheSpec, "update_cache": UpdateCacheSpec, "delete_cache": DeleteCacheSpec,
}
#: Parent-level changes take the same value as the matching Modification field.
CHANGE_STEPS = ("remove_tool", "add_tool", "reorder_tools", "reorder_keys", "edit_system",
                "set_tool_choice", "set_thinking", "switch_model", "refuse_tool_at_call_time")
STEP_KINDS = tuple(STEP_SPECS) + CHANGE_STEPS

_STEP_MODELS = {k: _single(k, v) for k, v in STEP_SPECS.items()}
_STEP_MODELS.update({
    "remove_tool": _single("remove_tool", str), "add_tool": _single("add_tool", AddToolSpec),
    "reorder_tools": _single("reorder_tools", Union[Literal["reverse", "rotate"], list[str]]),
    "reorder_keys": _single("reorder_keys", str), "edit_system": _single("edit_system", EditSystemSpec),
    "set_tool_choice": _single("set_tool_choice", Union[dict[str, Any], None]),
    "set_thinking": _single("set_thinking", Union[dict[str, Any], None]),
    "switch_model": _single("switch_model", str),
    "refuse_tool_at_call_time": _single("refuse_tool_at_call_time", str),
})


def _expand_shorthand(v: Any) -> Any:
    key = _step_key(v)
    if isinstance(v, dict) and key in SHORTHAND and len(v) == 1:
        body = v[key]
        if body is None:
            return {key: {}}
        if not isinstance(body, dict):
            return {key: {SHORTHAND[key]: body}}
    return v


_StepUnion = Annotated[
    Union[tuple(Annotated[m, Tag(k)] for k, m in _STEP_MODELS.items())],  # type: ignore[misc]
    Discriminator(_step_key, custom_error_type="step",
                  custom_error_message=f"each step is one of: {', '.join(STEP_KINDS)}"),
]
Step = Annotated[_StepUnion, BeforeValidator(_expand_shorthand)]


# --- a variant and the scenario ----------------------------------------------------------------

class EngineSpec(Strict):
    """The serving-engine cache of `provider: vllm` or `sglang` (docs/rules.md#vllm, docs/rules.md#sglang).

    A variant's `engine:` overrides the scenario's field by field, so a variant can change the
    capacity alone and keep the prefill rate.
    """

    capacity: int | float | str | None = Field(
        None, description="KV-cache capacity: tokens (200000, 1e6, '10^6', '2M', '500k'), KV memory ('4GiB', "
                          "sized by kv_model) or 'unlimited' (the default).")
    kv_model: Annotated[str, one_of(tuple(KV_MODELS))] | None = Field(None, description="Model whose layers, KV heads and head dim size a GiB capacity "
                                                   "(default: the scenario's model), e.g. llama-3.1-8b.")
    block_size: int | None = Field(None, ge=1, le=MAX_COUNT, description="vLLM tokens per block (default 16); SGLang ignores it.")
    page_size: int | None = Field(None, ge=1, le=MAX_COUNT, description="SGLang tokens per page (default 1); vLLM ignores it.")
    eviction: Literal["lru", "lfu", "fifo"] | None = Field(None, description="Eviction policy (default lru).")
    prefill_tokens_per_s: float | None = Field(None, gt=0, le=1e12, description="GPU prefill rate, tokens/s: turns cached "
                                                                       "tokens into GPU-seconds saved and times "
                                                                       "each request's prefill (default 10000).")
    decode_tokens_per_s: float | None = Field(None, gt=0, le=1e12, description="Output tokens/s of one request while it "
                                                                      "decodes (default 50): with the prefill "
                                                                      "time, how long it holds its KV.")
    lora: str | None = Field(None, description="LoRA adapter every request uses (part of every block hash).")
    cache_salt: str | None = Field(None, description="Cache salt of requests that set none (first block only).")
    gpu: Annotated[str, one_of(tuple(GPU_CATALOGUE))] | None = Field(
        None, description="A GPU of the catalogue (docs/serving.md): the KV capacity is what `gpus` of them hold "
                          "after the model's bf16 weights, the prefill and decode rates the roofline's, unless given.")
    gpus: int | None = Field(None, ge=1, le=8, description="GPUs that hold the weights, tensor-parallel: 1, 2, 4 or 8 "
                                                           "(default 1).")

    @field_validator("capacity")
    @classmethod
    def _capacity(cls, v):
        try:
            split_capacity(v)  # syntax only: a GiB capacity is sized once the run's model is known
        except UserError as e:
            raise ValueError(e.message) from None
        return v

    def over(self, base: "EngineSpec | None") -> "EngineSpec":
        """These settings on top of `base` (the scenario's): fields set here win."""
        if base is None or base is self:
            return self
        return base.model_copy(update={f: getattr(self, f) for f in self.model_fields_set})


class Settings(Strict):
    """What a variant may set; variants override the scenario's values key by key."""

    # Names checked by checks.py (did-you-mean, at the key's line); the schema lists them for editors.
    provider: Annotated[str, one_of(PROVIDERS)] | None = None
    model: str | None = None
    tokenizer: Annotated[str, one_of(TOKENIZERS)] | None = None
    ttl: TTL | None = Field(None, description="TTL of cache writes (default 5m). With `breakpoints: claude_code` it "
                                              "is the main conversation's; sub-agents, forks and compaction write "
                                              "5m as Claude Code does. With any other breakpoints every request "
                                              "writes at this TTL (the application marks its own requests).")
    breakpoints: Breakpoints | None = None
    endpoint: Literal["global", "regional", "multi-region"] | None = Field(
        None, description="Claude on Vertex AI or Bedrock: the endpoint requests go to (Vertex default global; "
                          "Bedrock default as the model id says: global. profile, us./eu. multi-region, else "
                          "regional). Regional and multi-region cost 10 % more for Sonnet 4.5 and later.")
    ttft: Duration | None = Field(None, description="Time to first token: when a write becomes readable.")
    pace: Duration | None = Field(None, description="Time between consecutive requests of one stream.")
    output: Tokens | None = Field(None, description="Output tokens of a request whose reply size is not given.")
    seed: Annotated[int, Field(ge=0, le=2 ** 63 - 1)] | None = None
    engine: EngineSpec | None = Field(None, description="Serving-engine cache settings (provider vllm or sglang).")
    latency: LatencySpec | None = Field(None, description="Time-to-first-token model: coefficients, or {from: "
                                        "fitted.json} (replay --latency-out); default per model family.")
    base: Conversation | None = None
    timeline: list[Step] | None = None


class Variant(Settings):
    """One design compared: the scenario's settings with these keys overridden."""

    name: str
    reference: bool = Field(False, description="A yardstick, not a design under review (e.g. a strawman accounting "
                                               "model to compare against): shown and labelled in the table, never "
                                               "named cheapest in the answer.")


class SweepSpec(Strict):
    """Run every variant once per value; `${param}` anywhere in the scenario takes the value."""

    param: str
    values: list[Any] | None = None
    range: list[float] | None = Field(None, description="[start, stop, step], stop included.")

    @field_validator("range")
    @classmethod
    def _three(cls, v):
        if v is not None and (len(v) != 3 or v[2] <= 0):
            raise ValueError("range is [start, stop, step] with step > 0")
        return v


class ChartSpec(Strict):
    """Draw `y` against the swept parameter, one line per variant (needs `sweep:`)."""

    x: str
    y: Literal["cost_usd", "hit_rate", "cache_read_input_tokens", "cache_creation_input_tokens"] = "cost_usd"
    title: str | None = None
    xlabel: str | None = Field(None, description="Axis label with its unit, e.g. 'stagger (seconds)'.")


class Scenario(Settings):
    """One scenario file."""

    name: str
    description: str | None = None
    question: str | None = Field(None, description="The design question in one sentence; the report opens with it "
                                                   "and its answer (the dearest first if it asks which costs most).")
    variants: list[Variant] | None = None
    sweep: SweepSpec | None = None
    chart: ChartSpec | None = None
    prices: dict[str, dict[str, Price]] | None = Field(
        None, description="Price sheet, USD per MTok: {model: {input, output, cache_read, cache_write_5m, cache_write_1h}}")
    price_date: str | None = Field(None, description="Date (YYYY-MM-DD) whose genai-prices rates apply.")
    start: str | None = Field(None, description="When t = 0 falls (ISO 8601, UTC unless an offset is given, e.g. "
                                                "2026-11-24T16:30:00Z); each request is priced at start + t, which "
                                                "matters for time-of-day prices (DeepSeek off-peak). Default: 07:00 "
                                                "UTC on the price date, a peak hour for every DeepSeek model.")
    vars: dict[str, Any] | None = Field(None, description="Values for `${name}` placeholders.")
    studies: Annotated[dict[str, dict[str, Any]], WithJsonSchema({
        "type": "object", "propertyNames": {"enum": list(SCENARIO_STUDIES)},
        "additionalProperties": {"type": "object"}})] | None = Field(
        None, description="Break-even studies of this design, drawn by `prefixsim report` with these parameters "
                          "instead of the defaults, e.g. {fork-vs-subagent: {parent_static: 30000, sub_static: 4500, "
                          "children: 4, turns: 2}}; a list compares values ({children: [3, 4, 6]}); "
                          "api-vs-selfhosted is drawn only when named, at the scenario's own sizes where it names "
                          "none ({api-vs-selfhosted: {rate: 2}}).")
    optimize: OptimizeSpec | None = Field(None, description="Design dimensions `prefixsim search` searches (every "
                                                            "combination); `run` simulates the scenario as written.")


Modification.model_rebuild()
