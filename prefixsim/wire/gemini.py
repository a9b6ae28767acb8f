"""A Gemini `generateContent` request (REST camelCase, or the google-genai SDK's snake_case) as the
pieces the cache sees: tools (one per function declaration or built-in tool), the system
instruction, then one per content (turn), in that order. A `cachedContent` the request names is
its prefix (G-CC: "cached content ... as a prefix to the prompt"); its own tools and system
instruction live in the cache, not the request.

Sizes are left to the reader (`gemini_log`): the pieces carry the text to count; parts whose
tokens the text does not tell (inline images, files, video) are marked uncertain, so the
difference to the observed prompt count goes there first."""
from __future__ import annotations

from typing import Any

from prefixsim.errors import UserError, shown
from prefixsim.model import Layer
from prefixsim.wire.anthropic import dumps
from prefixsim.wire.openai import Piece
from prefixsim.wire.reuse import PieceMemo


def field(d: Any, camel: str, snake: str | None = None) -> Any:
    """A field in either spelling: REST camelCase or the SDK's snake_case (`cachedContent` /
    `cached_content`); None when the mapping has neither."""
    if not isinstance(d, dict):
        return None
    if camel in d:
        return d[camel]
    return d.get(snake if snake is not None else _snake(camel))


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def setting(body: dict, camel: str) -> Any:
    """A request field the SDK may put under `config` (GenerateContentConfig: system_instruction,
    tools, cached_content; CreateCachedContentConfig: contents, ttl too)."""
    value = field(body, camel)
    if value is None:
        value = field(field(body, "config"), camel)
    return value


#: Part keys whose tokens the text cannot tell (media): counted as nothing, sized by the usage.
_MEDIA = ("inlineData", "inline_data", "fileData", "file_data", "videoMetadata", "video_metadata")


def _part_text(part: Any) -> tuple[str, bool]:
    """(text to count, uncertain) of one part."""
    if isinstance(part, str):          # the SDK accepts bare strings as parts
        return part, False
    if not isinstance(part, dict):
        raise UserError(f"a content part is not an object: {shown(part)}")
    if any(k in part for k in _MEDIA):
        return "", True
    text = part.get("text")
    if isinstance(text, str):
        return text, False
    rest = {k: v for k, v in part.items() if k not in ("thoughtSignature", "thought_signature", "thought")}
    return dumps(rest).decode("utf-8", "replace"), False


def content_piece(content: Any, path: str) -> Piece:
    """One turn as one piece, rendered role first and then its parts as given (a response's content
    and the same content sent back in the next request render to the same bytes)."""
    if isinstance(content, str):       # the SDK's contents="..." shorthand: one user turn
        content = {"role": "user", "parts": [{"text": content}]}
    if not isinstance(content, dict):
        raise UserError(f"{path} is not a content object: {shown(content)}")
    parts = content.get("parts")
    if parts is None:
        parts = []
    if not isinstance(parts, list):
        raise UserError(f"{path}.parts is not a list: {shown(parts)}")
    role = content.get("role") or "user"
    if not isinstance(role, str):
        raise UserError(f"{path}.role is not text: {shown(role)}")
    texts = [_part_text(p) for p in parts]
    return Piece(Layer.MESSAGES, dumps({"role": role, "parts": parts}), path, (role, *(t for t, _ in texts)),
                 uncertain=any(u for _, u in texts))


def _content_pieces(content: Any, path: str) -> list[Piece]:
    return [content_piece(content, path)]


def _contents(value: Any, path: str, memo: PieceMemo | None = None) -> list[Piece]:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        raise UserError(f"{path} is not a list of contents: {shown(value)}")
    if memo is None:
        return [content_piece(c, f"{path}[{i}]") for i, c in enumerate(value)]
    return [p for i, c in enumerate(value) for p in memo.pieces(_content_pieces, c, f"{path}[{i}]")]


def _tools(value: Any) -> list[Piece]:
    if value is None:
        return []
    if isinstance(value, dict):   # one Tool sent bare (an older client's form, which the API served)
        value = [value]
    if not isinstance(value, list):
        raise UserError(f"tools is not a list: {shown(value)}")
    out = []
    for i, tool in enumerate(value):
        decls = field(tool, "functionDeclarations")
        if isinstance(decls, list) and decls:
            for j, d in enumerate(decls):
                data = dumps(d)
                out.append(Piece(Layer.TOOLS, data, f"tools[{i}].functionDeclarations[{j}]",
                                 (data.decode("utf-8", "replace"),), uncertain=True))
        else:   # a built-in tool (googleSearch, codeExecution, ...): its prompt is Google's, size unknown
            data = dumps(tool)
            out.append(Piece(Layer.TOOLS, data, f"tools[{i}]", (data.decode("utf-8", "replace"),), uncertain=True))
    return out


def _system(value: Any, path: str = "systemInstruction") -> list[Piece]:   # path: the memo's renderer signature
    if value is None:
        return []
    if isinstance(value, str):
        value = {"parts": [{"text": value}]}
    piece = content_piece({"role": "system", "parts": field(value, "parts") if isinstance(value, dict) else value},
                          "systemInstruction")
    return [Piece(Layer.SYSTEM, piece.data, "systemInstruction", piece.text, uncertain=piece.uncertain)]


def prefix_pieces(body: dict, memo: PieceMemo | None = None) -> list[Piece]:
    """What a request (or a cachedContents.create body) holds before its own turns: tools, then the
    system instruction. With `memo` (one per reader), a system instruction or turn rendered before is
    not rendered again (`wire.reuse`; tools are: a schema's exact key costs what encoding it does)."""
    system = setting(body, "systemInstruction")
    return _tools(setting(body, "tools")) + (memo.pieces(_system, system, "systemInstruction") if memo and system
                                             else _system(system))


def own_pieces(body: dict, memo: PieceMemo | None = None) -> list[Piece]:
    """The request's tools, system instruction and turns (without any cached content it names)."""
    if memo is not None:
        memo.turn()
    return prefix_pieces(body, memo) + _contents(setting(body, "contents"), "contents", memo)


def output_piece(response: Any, memo: PieceMemo | None = None) -> Piece | None:
    """The first candidate's content as the turn the next request sends back (None: no content)."""
    cands = field(response, "candidates")
    if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
        return None
    content = cands[0].get("content")
    if not isinstance(content, dict) or not content.get("parts"):
        return None
    turn = {"role": content.get("role") or "model", "parts": content["parts"]}
    return memo.pieces(_content_pieces, turn, "output")[0] if memo else content_piece(turn, "output")


def cache_name(value: Any) -> str | None:
    """A CachedContent's resource name as text (`cachedContents/abc`); None when absent."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise UserError(f"cachedContent is not a name: {shown(value)}")
    return value
