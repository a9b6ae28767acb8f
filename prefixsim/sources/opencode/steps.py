"""OpenCode sessions -> the model calls they record (`Raw`, as Codex rollouts give them) -> Records.

What the source (`packages/opencode/src/session/`) says, and what is read from it:

- one model call is one step: `processor.ts` writes a `step-start` part when the stream starts a step and
  a `step-finish` part with that step's `tokens` and `cost` when it ends (`finish-step`), and copies the
  latest step's tokens onto the assistant message. Older versions ran many steps in one assistant
  message, later ones one assistant message per step; either way each `step-finish` is one request.
  An assistant message without any (an export or a version that kept only the message) is one request
  with the message's `tokens`; tokens all zero (an aborted or failed call) is no request.
- the usage (`Session.getUsage`): `tokens.input` is the uncached input for every provider (OpenCode
  subtracts `cache.read` and `cache.write` where the provider counts them inside the input: all but
  Anthropic and Bedrock), `cache.read` / `cache.write` the cached and written tokens, `output` the
  response (reasoning included: the AI SDK's outputTokens), `reasoning` that share again. The prompt is
  input + cache.read + cache.write.
- a step starts at its assistant message's `time.created` (the first step) or when the previous step's
  tools finished (`state.time.end`: their results are what the next step sends); its response begins at
  its first text or reasoning part.
- a session with a `parentID` is a sub-agent's (the `task` tool's child session): a stream of its own.
- compaction: an assistant message with `summary: true` is the summarizing call (it continues the
  conversation); the history after it starts from the summary (`MessageV2.filterCompacted`), so the
  next request starts a new epoch.
- a revert deletes the reverted messages when the next prompt is sent; what is left is replayed as is.

The provider's rules follow `providerID` and `modelID` (`_rules`); OpenCode marks Anthropic requests
with cache_control (`ProviderTransform.applyCaching`) on its first two system messages and last two
non-system messages, which `_anthropic` places on the rebuilt blocks.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import xxhash

from prefixsim.core.tokens import remembered_count
from prefixsim.errors import UserError, shown
from prefixsim.model import Usage
from prefixsim.providers.model_ids import canonical_model
from prefixsim.sources import problems
from prefixsim.sources.claude_code.calibrate import _iso
from prefixsim.sources.codex.calibrate import Calibrator
from prefixsim.sources.codex.rollout import Raw
from prefixsim.sources.opencode import storage
from prefixsim.sources.opencode.storage import Message, Session
from prefixsim.sources.record import Record, check_model, checked_usage, token_count

#: OpenCode provider ids whose rules are known by name (any other: judged by the model id).
PROVIDERS = {"anthropic": "anthropic", "openai": "openai", "google": "gemini", "google-vertex": "gemini",
             "deepseek": "deepseek", "amazon-bedrock": "bedrock", "google-vertex-anthropic": "vertex"}
#: The providers whose requests carry OpenCode's cache_control (Claude on each platform).
CLAUDE = frozenset({"anthropic", "bedrock", "vertex"})


def _rules(provider: object, model: object) -> tuple[str, str]:
    """(provider whose cache rules apply, model id they know). A router's or gateway's id
    (`openrouter` with `anthropic/claude-sonnet-4.5`) names the model's vendor; a model no rules know
    raises UserError, so that request is skipped and named."""
    if not isinstance(model, str) or not model:
        raise UserError(f"assistant message has no modelID (modelID: {shown(model)})")
    name = canonical_model(model)
    known = PROVIDERS.get(provider) if isinstance(provider, str) else None
    if "claude" in name:
        # routers spell versions with a dot (claude-sonnet-4.5); Bedrock and Vertex keep their own rules
        name = canonical_model(name.replace(".", "-"))
        known = known if known in ("bedrock", "vertex") else "anthropic"
    elif known is None or known in ("bedrock", "vertex"):
        if name.startswith(("gpt-", "o1", "o3", "o4", "codex")):
            known = "openai"
        elif name.startswith("gemini"):
            known = "gemini"
        elif name.startswith("deepseek"):
            known = "deepseek"
        else:
            raise UserError(f"no cache rules for provider {shown(provider)} model {model!r}")
    return known, check_model(name, known)


def _tokens(t: object) -> tuple[int, int, Usage]:
    """(prompt, output, observed usage) of a `tokens` object."""
    if not isinstance(t, dict):
        raise UserError("tokens is not an object")
    cache = t.get("cache") or {}
    if not isinstance(cache, dict):
        raise UserError("tokens.cache is not an object")
    inp = token_count(t.get("input"), "tokens.input")
    read = token_count(cache.get("read"), "tokens.cache.read")
    write = token_count(cache.get("write"), "tokens.cache.write")
    out = token_count(t.get("output"), "tokens.output")
    return inp + read + write, out, checked_usage(Usage(input_tokens=inp, cache_write_5m=write, cache_read=read,
                                                        output_tokens=out))


def _ms(value: object) -> float | None:
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _part_time(p: dict, key: str) -> float | None:
    t = p.get("time")
    if p.get("type") == "tool":
        state = p.get("state")
        t = state.get("time") if isinstance(state, dict) else None
    return _ms(t.get(key)) if isinstance(t, dict) else None


def _text(parts: list[dict]) -> str:
    return "\n".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str))


def _steps(m: Message) -> list[tuple[dict, float | None, float | None]]:
    """(tokens, when its tools finished, when its response began) of each step of an assistant message."""
    out: list[tuple[dict, float | None, float | None]] = []
    ended: float | None = None
    began: float | None = None
    for p in m.parts:
        typ = p.get("type")
        if typ == "step-start":
            ended = began = None
        elif typ in ("text", "reasoning", "tool"):
            if began is None:
                began = _part_time(p, "start")
            end = _part_time(p, "end") if typ == "tool" else None
            if end is not None:
                ended = max(ended or end, end)
        elif typ == "step-finish":
            out.append((p.get("tokens"), ended, began))
            ended = began = None
    if not out and isinstance(m.info.get("tokens"), dict):
        out.append((m.info["tokens"], None, began))
    return out


def parse(s: Session, stream: str, kind: str, seen: set[str], order: int) -> list[Raw]:
    """Every model call of one session, in message order. `seen` holds request keys already read: a
    forked session's copies of its parent's messages (same times, same tokens) are read once."""
    out: list[Raw] = []
    st: dict = {"turn": False, "first": "", "event": None, "at": _ms(s.created)}
    messages = sorted(s.messages, key=lambda m: (_ms(_time_of(m.info)) or 0, str(m.info.get("id", ""))))

    def one(m: Message) -> None:
        info = m.info
        role = info.get("role")
        created = _ms(_time_of(info))
        if role == "user":
            st.update(turn=True, at=created or st["at"])
            if not st["first"]:
                st["first"] = _text(m.parts)
            return
        if role != "assistant":
            raise UserError(f"message of unknown role {shown(role)}")
        provider, model = None, None
        mine: list[Raw] = []   # kept only once the whole message reads: a message is skipped whole
        state = dict(st)
        for i, (tokens, ended, began) in enumerate(_steps(m)):
            prompt, output, usage = _tokens(tokens)
            if prompt == 0 and output == 0:
                continue   # an aborted or failed step: no usage to compare
            provider, model = (provider, model) if provider else _rules(info.get("providerID"), info.get("modelID"))
            start = (created if i == 0 else None) or state["at"] or created or 0.0
            response = began if began is not None and began >= start else start
            rid = "opencode-" + xxhash.xxh3_64_hexdigest(repr((info.get("time"), i, usage, model)).encode())
            state["at"] = ended if ended is not None else response
            if rid in seen or any(r.request_id == rid for r in mine):
                state.update(turn=False, event=None)
                continue
            agent = str(info.get("agent") or info.get("mode") or "")
            mine.append(Raw(rid, stream, kind, s.id, f"opencode|{provider}|{model}|{agent}", model, start, response,
                            usage, prompt, output, _iso(start), m.where, 0, order + len(out) + len(mine),
                            state["turn"], False, state["event"], 0, state["first"], None, provider))
            state.update(turn=False, event=None)
        if info.get("summary") is True:
            state["event"] = "compaction"   # the next request sends the summary, not the history
        done = info.get("time", {}).get("completed") if isinstance(info.get("time"), dict) else None
        state["at"] = max(state["at"] or 0, _ms(done) or 0) or state["at"]
        st.update(state)
        seen.update(r.request_id for r in mine)
        out.extend(mine)

    for m in messages:
        problems.guarded(m.where, None, one, m, where=m.label)
    return out


def _time_of(info: dict) -> object:
    t = info.get("time")
    return t.get("created") if isinstance(t, dict) else None


def raws(sessions: list[Session]) -> list[Raw]:
    """Every call of the sessions, each once, in start order; streams: `main` for a lone session, else
    the session id, a sub-agent's under its parent's (`<parent>/agent-<id>`)."""
    ids = {s.id: s for s in sessions}

    def name(s: Session, depth: int = 0) -> str:
        own = "main" if len(sessions) == 1 else s.id
        if s.parent in ids and depth < 32:
            return f"{name(ids[s.parent], depth + 1)}/agent-{s.id}"
        return own

    seen: set[str] = set()
    out: list[Raw] = []
    for s in sessions:
        out.extend(parse(s, name(s), "agent" if s.parent else "main", seen, len(out)))
    out.sort(key=lambda r: (r.start, r.order))
    return out


def _anthropic(rec: Record) -> Record:
    """OpenCode's cache_control on an Anthropic request: the two system messages (here the cross-session
    prefix, tools and provider prompt, and the session's own system part) and the last two messages
    (the latest blocks); Anthropic does not cache the generated output, so the reply is no `output`."""
    req = rec.call.request
    blocks = list(req.blocks)
    marks = {i for i in (0, 1) if i < len(blocks) and (blocks[i].tokens or 0) > 0}
    marks |= {i for i in range(max(2, len(blocks) - 2), len(blocks))}
    for i in marks:
        blocks[i] = blocks[i].with_breakpoint("5m")
    call = replace(rec.call, request=replace(req, blocks=tuple(blocks), output=()))
    return replace(rec, call=call)


def load(path: Path) -> list[Record]:
    """The requests of the OpenCode sessions at `path`, rebuilt and time-ordered."""
    return records(raws(storage.load(path)))


def records(ordered: list[Raw]) -> list[Record]:
    """Records of calls given in start order, their prompts rebuilt (`Calibrator`), Anthropic's marked."""
    step = Calibrator(remembered_count("cl100k_base")).step
    return [_anthropic(rec) if r.provider in CLAUDE else rec for r, rec in ((r, step(r)) for r in ordered)]
