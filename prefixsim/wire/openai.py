"""What a model sees of an OpenAI-format request (Chat Completions, Responses; DeepSeek's
OpenAI-compatible API too), block by block, and how many tokens each block takes.

A block's bytes are the model-visible fields of a message or input item, in a fixed order (role,
name, content, reasoning, tool calls, tool call id): what the chat template renders. Fields the model
never sees (a response message's `refusal: null`, `annotations: []`, a tool call's `index`, an output
item's `id` and `status`) are left out, so the assistant message a response returned and the same
message echoed back in the next request are the same block, as they are the same tokens.

Token counts follow OpenAI's chat framing (openai-cookbook "How to count tokens with tiktoken"):
each message is `<|start|>{role}<|message|>{content}<|end|>`, two special tokens and the role before
the content and one after, one more for a `name`, and the reply is primed with the assistant header.
Tool definitions come first, then instructions, then messages (O-PC: "tool definitions" are part of
the cached prefix, ahead of the conversation). The counts are calibrated to the observed usage by
the reader (`openai_log`), so what the framing gets wrong in tool schemas or images is corrected there.
"""
from __future__ import annotations

from typing import Any, Iterable

from prefixsim.model import Block, Layer
from prefixsim.wire.anthropic import dumps
from prefixsim.wire.reuse import PieceMemo

#: Special tokens around a message besides its role: start and message-separator before, end after.
FRAME_BEFORE = 2
FRAME_AFTER = 1
#: The assistant header the reply is primed with (start, role, separator).
PRIMER = 3
#: An image part's size before calibration: the low-detail cost (OpenAI vision guide, 85 tokens); the
#: observed prompt size corrects it.
IMAGE_TOKENS = 85

_TEXT_PARTS = ("text", "input_text", "output_text", "summary_text", "reasoning_text")
_IMAGE_PARTS = ("image_url", "input_image", "image")
_FILE_PARTS = ("file", "input_file", "input_audio")
#: Output items a client sends back as the model generated them. A hosted tool's call (web search,
#: code interpreter, image generation, ...) brings its results into the context mid-response, and
#: the item sent back does not hold them: the next request's prefix parts there, so the cached
#: output is taken to end before it (observed in pydantic-ai's web-search recordings).
ECHOED_ITEMS = ("message", "reasoning", "function_call", "custom_tool_call")
#: Fields of a Responses item the model does not see.
_ITEM_NOISE = ("id", "status", "prompt_cache_breakpoint")


def encoding_for(model: str) -> str:
    """The tiktoken encoding of an OpenAI model (o200k_base from GPT-4o on; cl100k_base for GPT-4 and
    GPT-3.5). DeepSeek's tokenizer is not public in tiktoken: o200k_base stands in and the observed
    usage calibrates it."""
    m = model.strip().lower().rsplit("/", 1)[-1]
    if m.startswith(("gpt-4o", "gpt-4.1", "gpt-4.5")):
        return "o200k_base"
    if m.startswith(("gpt-4", "gpt-3.5")):
        return "cl100k_base"
    return "o200k_base"


def marked(part: Any) -> bool:
    """Whether a content part carries a GPT-5.6+ `prompt_cache_breakpoint` marker."""
    return isinstance(part, dict) and "prompt_cache_breakpoint" in part


def _clean(part: Any) -> Any:
    """A content part as the model sees it: a text part is its text (Chat's `text`, Responses'
    `input_text` / `output_text` alike; annotations and logprobs are not seen), an image its source."""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return part
    if part.get("type") in _TEXT_PARTS + ("refusal",) or ("text" in part and "type" not in part):
        return part.get("text", part.get("refusal"))
    return {k: v for k, v in part.items() if k not in _ITEM_NOISE}


def _part_text(part: Any) -> tuple[str, int]:
    """(text the tokenizer counts, fixed tokens) of one content part."""
    if isinstance(part, str):
        return part, 0
    if not isinstance(part, dict):
        return dumps(part).decode("utf-8", "replace"), 0
    kind = part.get("type")
    if kind in _IMAGE_PARTS:
        return "", IMAGE_TOKENS
    for key in ("text", "refusal"):
        if isinstance(part.get(key), str):
            return part[key], 0
    return dumps(_clean(part)).decode("utf-8", "replace"), 0


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def _calls(calls: Any) -> list:
    """Tool calls as the model wrote them: id, function name, arguments (never the list `index`)."""
    out = []
    for c in calls if isinstance(calls, list) else []:
        if not isinstance(c, dict):
            out.append(c)
            continue
        fn = c.get("function") if isinstance(c.get("function"), dict) else {}
        out.append({"id": c.get("id"), "name": fn.get("name", c.get("name")),
                    "arguments": fn.get("arguments", c.get("arguments"))})
    return out


class Piece:
    """One block before sizing: its bytes, where it came from, the text to count, fixed tokens, and
    whether a breakpoint marker ends it. `role` is the role of the message it starts ("" inside one)."""

    __slots__ = ("layer", "data", "path", "text", "fixed", "mark", "reasoning", "uncertain", "ref", "lead")

    def __init__(self, layer: Layer, data: bytes, path: str, text: tuple[str, ...], fixed: int = 0, mark: bool = False,
                 reasoning: str | None = None, uncertain: bool = False, ref: str | None = None,
                 lead: int | None = None) -> None:
        self.layer, self.data, self.path, self.text, self.fixed, self.mark = layer, data, path, text, fixed, mark
        # A message's frame tokens before its texts (None: not a message piece, never compared inside)
        self.lead = lead
        self.reasoning = reasoning   # a reasoning item's key: its size is the response's reasoning_tokens
        # The count is least sure here (tool schemas as OpenAI renders them, images, files, a history
        # the log does not hold): the difference to the observed usage goes here first.
        self.uncertain = uncertain
        self.ref = ref               # a Responses item that stands for an earlier output item (by its id)

    def moved(self, path: str) -> "Piece":
        """A copy at `path` (`wire.reuse`: a message rendered once stands in every later request)."""
        return Piece(self.layer, self.data, path, self.text, self.fixed, self.mark, self.reasoning, self.uncertain,
                     self.ref, self.lead)

    def block(self, tokens: int | None = None) -> Block:
        """Sized by `tokens` (the log's observed sizes) or, without, by the tokenizer. A message piece
        stays comparable token by token when its size is fixed (an automatic cache reads inside it
        alike on every path: O-PC); a reasoning item or a reference to an earlier output is not."""
        sees = (self.lead, self.text) if tokens is not None and self.lead is not None and not self.uncertain else None
        return Block(self.layer, self.data, self.path, tokens=tokens, sees=sees)


def message_pieces(msg: Any, path: str, layer: Layer) -> list[Piece]:
    """A Chat message or a Responses message / item as pieces: one per content part of a list
    content (so a `prompt_cache_breakpoint` ends where its part ends, and marking a part changes no
    byte of the prefix), one for a text content.
    The first piece starts with the role (or the item type), which is how the policy tells message
    kinds apart. Texts are counted one by one (the role is a token of its own, never merged with the
    content's first word)."""
    if not isinstance(msg, dict):
        return [Piece(layer, dumps(msg), path, (dumps(msg).decode("utf-8", "replace"),))]
    if "role" not in msg and msg.get("type") not in (None, "message"):
        return [_item_piece(msg, path, layer)]
    role = msg.get("role")
    head: dict[str, Any] = {"role": role}
    texts: list[str] = [role] if isinstance(role, str) else []
    before = FRAME_BEFORE
    if _present(msg.get("name")):
        head["name"] = msg["name"]
        texts.append(str(msg["name"]))
        before += 1
    content = msg.get("content")
    parts = content if isinstance(content, list) else None
    tail: dict[str, Any] = {}
    extra: list[str] = []
    for key in ("reasoning_content", "refusal"):
        if _present(msg.get(key)):
            tail[key] = msg[key]
            extra.append(msg[key] if isinstance(msg[key], str) else dumps(msg[key]).decode("utf-8", "replace"))
    calls = _calls(msg.get("tool_calls"))
    if calls:
        tail["tool_calls"] = calls
        for c in calls:
            if isinstance(c, dict):
                args = c.get("arguments")
                extra.extend((str(c.get("name") or ""),
                              args if isinstance(args, str) else dumps(args).decode("utf-8", "replace")))
    if _present(msg.get("tool_call_id")):
        tail["tool_call_id"] = msg["tool_call_id"]
    if parts is None or not parts:
        body = dict(head)
        if _present(content):
            body["part"] = content   # the same bytes as a one-part list content: the same tokens
        body.update(tail)
        t, f = _part_text(content or "")
        return [Piece(layer, dumps(body), path, (*texts, t, *extra), before + FRAME_AFTER + f, uncertain=f > 0,
                      lead=before)]
    # One piece per part: the head travels with the first, the tail (calls, ids) with the last.
    out = []
    last = len(parts) - 1
    for j, p in enumerate(parts):
        t, f = _part_text(p)
        data: dict[str, Any] = dict(head) if j == 0 else {}
        data["part"] = _clean(p)
        if j == last:
            data.update(tail)
        out.append(Piece(layer, dumps(data), f"{path}.content[{j}]",
                         (*(texts if j == 0 else ()), t, *(extra if j == last else ())),
                         (before if j == 0 else 0) + (FRAME_AFTER if j == last else 0) + f, mark=marked(p),
                         uncertain=f > 0 or (isinstance(p, dict) and p.get("type") in _FILE_PARTS),
                         lead=before if j == 0 else 0))
    return out


def _item_piece(item: dict, path: str, layer: Layer) -> Piece:
    """A Responses input / output item that is not a message: function calls and their outputs,
    reasoning, hosted-tool calls. The model sees its type and payload, not its id or status."""
    kind = item.get("type")
    if kind == "item_reference":
        return Piece(layer, dumps({"type": kind, "id": item.get("id")}), path, (), uncertain=True,
                     ref=item.get("id") if isinstance(item.get("id"), str) else None)
    if kind == "reasoning":
        # The model sees the reasoning itself; the request carries it encrypted (or by id): its size
        # is the reasoning_tokens of the response that produced it (`openai_log`).
        key = item.get("encrypted_content") or item.get("id") or dumps(item.get("summary")).decode()
        summary = "".join(_part_text(p)[0] for p in item.get("summary") or [] if isinstance(item.get("summary"), list))
        bare = not item.get("encrypted_content") and isinstance(item.get("id"), str)
        return Piece(layer, dumps({"type": "reasoning", "key": key}), path, (summary,),
                     reasoning=key if isinstance(key, str) else None, ref=item["id"] if bare else None)
    body = {"type": kind, **{k: v for k, v in item.items() if k not in _ITEM_NOISE and k != "type"}}
    if kind in ("function_call", "custom_tool_call"):
        text = f"{item.get('name') or ''}{item.get('arguments') or item.get('input') or ''}"
    elif kind in ("function_call_output", "custom_tool_call_output"):
        out = item.get("output")
        text = out if isinstance(out, str) else "".join(_part_text(p)[0] for p in out) if isinstance(out, list) \
            else dumps(out).decode("utf-8", "replace")
    else:
        text = dumps(body).decode("utf-8", "replace")
    return Piece(layer, dumps(body), path, (str(kind), text), FRAME_BEFORE + FRAME_AFTER,
                 mark=any(marked(p) for p in item.get("output") or [] if isinstance(item.get("output"), list)))


def _tool_piece(tool: Any, path: str) -> list[Piece]:
    data = dumps(tool)
    return [Piece(Layer.TOOLS, data, path, (data.decode("utf-8", "replace"),), uncertain=True)]


def tool_pieces(tools: Any, memo: PieceMemo | None = None) -> list[Piece]:
    """Tool definitions in the order sent (their order is part of the prefix, O-PC "Keep tools consistent").
    With `memo`, a definition the line before sent unchanged is not encoded again (`wire.reuse` by
    identity; by content it is: a schema's exact key, a walk of its every node, costs what encoding does)."""
    out: list[Piece] = []
    for i, t in enumerate(tools if isinstance(tools, list) else []):
        out += memo.known(_tool_piece, t, f"tools[{i}]") if memo else _tool_piece(t, f"tools[{i}]")
    return out


def request_pieces(body: dict, history: Iterable[Piece] = (), memo: PieceMemo | None = None,
                   repeated: tuple[int, list[Piece]] | None = None, ends: list[int] | None = None) -> list[Piece]:
    """A Chat Completions or Responses body as pieces: tools, instructions, then the messages or
    input items; `history` (a Responses `previous_response_id` chain: the earlier input and output)
    goes between the instructions and this request's own input. With `memo` (one per reader), a
    message rendered before is not rendered again (`wire.reuse`). `repeated` (a Chat body without
    instructions or history): (k, the pieces of its tools and first k messages, which an earlier
    request rendered from the same objects: `sources.openai_repeat`), and only the messages after
    them are rendered. `ends` gets the number of pieces before each message and after the last."""
    if memo is not None:
        memo.turn()
    key = "messages" if "messages" in body else "input"
    items: Any = body.get(key)
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = items if isinstance(items, list) else []
    if repeated is not None:
        start, pieces = repeated[0], list(repeated[1])
    else:
        start, pieces = 0, tool_pieces(body.get("tools"), memo)
        if _present(body.get("instructions")):
            ins = body["instructions"]
            pieces.append(Piece(Layer.SYSTEM, dumps({"role": "developer", "instructions": ins}), "instructions",
                                ("developer", ins if isinstance(ins, str) else dumps(ins).decode("utf-8", "replace")),
                                FRAME_BEFORE + FRAME_AFTER))
        pieces.extend(history)
    for i in range(start, len(items)):
        m = items[i]
        if ends is not None:
            ends.append(len(pieces))
        system = isinstance(m, dict) and m.get("role") in ("system", "developer") and not history
        layer = Layer.SYSTEM if system else Layer.MESSAGES
        pieces += memo.pieces(message_pieces, m, f"{key}[{i}]", layer) if memo else \
            message_pieces(m, f"{key}[{i}]", layer)
    if ends is not None:
        ends.append(len(pieces))
    return _in_layer_order(pieces)


def _in_layer_order(pieces: list[Piece]) -> list[Piece]:
    """A system message after the conversation has started is a message like any other: blocks must
    come in layer order for the digest chain (render order tools -> system -> messages)."""
    seen = Layer.TOOLS
    for p in pieces:
        if p.layer < seen:
            p.layer = seen
        seen = p.layer
    return pieces


def output_pieces(response: Any, path: str = "output", memo: PieceMemo | None = None) -> list[Piece]:
    """What a response appended to the context, as the next request would send it back: Chat's
    `choices[0].message`, or the Responses `output` items (with `memo`, rendered once for the
    request that sends them back too)."""
    def render(msg: Any, where: str) -> list[Piece]:
        return memo.pieces(message_pieces, msg, where, Layer.MESSAGES) if memo else \
            message_pieces(msg, where, Layer.MESSAGES)

    if not isinstance(response, dict):
        return []
    if isinstance(response.get("output"), list):
        out: list[Piece] = []
        for i, item in enumerate(response["output"]):
            if not isinstance(item, dict) or item.get("type", "message") not in ECHOED_ITEMS:
                break
            out.extend(render(item, f"{path}[{i}]"))
        return out
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
            and isinstance(choices[0].get("message"), dict):
        return render(choices[0]["message"], path)
    return []
