"""OpenCode sessions -> the model calls they record (`Raw`, as Codex rollouts give them) -> Records.

What the source (`packages/opencode/src/session/`) says, and what is read from it:

- one model call is one step: `processor.ts` writes a `step-start` part when the stream starts a step and
  a `step-finish` part with that step's `tokens` and `cost` when it ends (`finish-step`), and copies the
  latest step's tokens onto the assistant message. Older versions ran many steps in one assistant
  message, later ones one assistant message per step; either way each `step-finish` is one request.
  An assistant message without any (an export or a version that kept only the message) is one request
  with the message's `tokens`; tokens all zero (an aborted or failed call) is no request.
- the usage (`Session.getUsage`): `tokens.input` is the uncached input for every provider in current
  versions (OpenCode subtracts `cache.read` and `cache.write` where the AI SDK counts them inside the
  input), `cache.read` / `cache.write` the cached and written tokens, `output` the response (reasoning
  included: the AI SDK's outputTokens), `reasoning` that share again. The prompt is input + cache.read +
  cache.write. Two ranges of versions stored `input` with the cached tokens inside (`_semantics`):
  every provider but Anthropic and Bedrock before 1.0.62 (the subtraction came with commit c8bda598,
  PR #4256, 2025-11-12), and Anthropic and Bedrock in 1.3.4 and 1.3.5 (AI SDK v6, c33d9996, made their
  input inclusive too; 72c77d0e, PR #19758, subtracts it from 1.3.6 on). Such a session's prompt is
  `input` itself and its uncached part input - cache.read - cache.write; which a session is, its
  recorded `version` says, or else its data.
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

import re
from dataclasses import replace
from pathlib import Path

import xxhash

from prefixsim.core.tokens import remembered_count
from prefixsim.errors import UserError, shown
from prefixsim.model import Block, Usage
from prefixsim.providers.model_ids import canonical_model
from prefixsim.sources import problems
from prefixsim.sources.claude_code.raw import _iso
from prefixsim.sources.codex.calibrate import Calibrator
from prefixsim.sources.codex.rollout import Raw
from prefixsim.sources.opencode import storage
from prefixsim.sources.opencode.session import Message, Session
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


def _counts(t: object) -> tuple[int, int, int, int]:
    """(input, cache read, cache write, output) as a `tokens` object stores them."""
    if not isinstance(t, dict):
        raise UserError("tokens is not an object")
    cache = t.get("cache") or {}
    if not isinstance(cache, dict):
        raise UserError("tokens.cache is not an object")
    return (token_count(t.get("input"), "tokens.input"), token_count(cache.get("read"), "tokens.cache.read"),
            token_count(cache.get("write"), "tokens.cache.write"), token_count(t.get("output"), "tokens.output"))


def _tokens(t: object, inclusive: bool = False) -> tuple[int, int, Usage]:
    """(prompt, output, observed usage) of a `tokens` object; `inclusive`: its `input` holds the cache
    read and write (the versions `_semantics` names), so the prompt is `input` and the uncached part
    what is left of it."""
    inp, read, write, out = _counts(t)
    if inclusive and inp >= read + write:
        inp -= read + write
    return inp + read + write, out, checked_usage(Usage(input_tokens=inp, cache_write_5m=write, cache_read=read,
                                                        output_tokens=out))


#: OpenCode provider ids whose AI SDK package reported input without the cached tokens (`getUsage`'s
#: `excludesCachedTokens`: provider metadata `anthropic` or `bedrock`, which Vertex AI's Claude shares).
EXCLUDING = frozenset({"anthropic", "amazon-bedrock", "google-vertex-anthropic"})
#: The first release whose `getUsage` subtracted the cached tokens of every other provider (c8bda598,
#: 2025-11-12; release v1.0.62, 2025-11-13), and the releases that kept Anthropic's and Bedrock's inside
#: (AI SDK v6, c33d9996, from v1.3.4, 2026-03-29; fixed by 72c77d0e in v1.3.6, the same day).
SUBTRACTS_FROM = (1, 0, 62)
EXCLUDING_INCLUSIVE = ((1, 3, 4), (1, 3, 6))
#: How far a read may pass the previous request's input before it proves that input left the reads
#: out (a few tokens of framing; a read is the previous prompt less its last tokens).
SLACK = 32


def _release(version: str | None) -> tuple[int, int, int] | None:
    """A release's (major, minor, patch); None for no version or a development build (0.0.0-…)."""
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    v = tuple(int(g) for g in m.groups()) if m else None
    return v if v and v != (0, 0, 0) else None


def _by_version(release: tuple[int, int, int], excluding: bool) -> bool:
    """Whether that release stored this provider class's `input` with the cached tokens inside."""
    if excluding:
        return EXCLUDING_INCLUSIVE[0] <= release < EXCLUDING_INCLUSIVE[1]
    return release < SUBTRACTS_FROM


def _by_data(steps: list[tuple[int, int, int]]) -> tuple[bool | None, str]:
    """(inclusive, why) from a session's (input, read, write) in request order; None where the data
    decides nothing. Inclusive input is the whole prompt, so it is never below its reads and writes, and
    a read (a prefix of what was sent before) never passes the previous request's input; uncached input
    is what the reads left, so a later read runs past the previous input by that request's own reads."""
    prev: tuple[int, int, int] | None = None
    shown = ""
    for k, (inp, read, write) in enumerate(steps, start=1):
        if inp < read + write:
            return False, f"request {k}'s input {inp:,} is below its cache read and write {read + write:,}"
        if prev is not None and prev[0] > 0 and read > prev[0] + SLACK:
            return False, f"request {k} read {read:,}, more than request {k - 1}'s whole input {prev[0]:,}"
        if not shown and prev is not None and prev[1] > SLACK and read > SLACK:
            shown = (f"each input holds its reads and writes, and request {k} read {read:,} after request "
                     f"{k - 1} read {prev[1]:,}: within that request's input {prev[0]:,}, where an uncached "
                     f"input would have left {prev[0] + prev[1]:,} cached")
        prev = (inp, read, write)
    return (True, shown) if shown else (None, "")


def _semantics(s: Session, where: str) -> dict[bool, bool]:
    """Whether each provider class of the session (Anthropic-like: True) stores `input` with the cached
    tokens inside: by the session's recorded version, or where it has none by its data, else as OpenCode
    stores it now (uncached); a note says which and why, for each class that read or wrote a cache. A
    proof in the data outweighs the version (a session created by one version and continued by another)."""
    steps: dict[bool, list[tuple[int, int, int]]] = {}
    for m in sorted(s.messages, key=lambda m: (_ms(_time_of(m.info)) or 0, str(m.info.get("id", "")))):
        if m.info.get("role") != "assistant":
            continue
        excluding = m.info.get("providerID") in EXCLUDING
        for tokens, _, _ in _steps(m):
            try:
                inp, read, write, out = _counts(tokens)
            except UserError:
                continue   # named when the message is read
            if inp or read or write or out:
                steps.setdefault(excluding, []).append((inp, read, write))
    release = _release(s.version)
    out: dict[bool, bool] = {}
    for excluding, seen in steps.items():
        found, why = _by_data(seen)
        if release is not None:
            inclusive = _by_version(release, excluding)
            reason = f"its recorded version {s.version} " + (
                ("stored Anthropic's and Bedrock's input with the cached tokens inside (1.3.4 and 1.3.5)"
                 if excluding else "stored this provider's input with the cached tokens inside (before 1.0.62)")
                if inclusive else "stores the input without them")
            if found is False and inclusive:
                inclusive, reason = False, f"{reason}, but {why} (a later version continued the session?)"
        elif found is not None:
            inclusive, reason = found, f"no recorded version; {why}"
        else:
            inclusive = False
            reason = ("no recorded version and nothing in the data decides: read as OpenCode stores it "
                      "since 1.0.62 (1.3.6 for Anthropic and Bedrock)")
        out[excluding] = inclusive
        if any(r or w for _, r, w in seen):
            kind = "Anthropic/Bedrock" if excluding else "non-Anthropic"
            problems.note(where, None, f"session {s.id}: {kind} tokens.input read as "
                          f"{'including' if inclusive else 'excluding'} the cached tokens: {reason}")
    return out


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
    inclusive = _semantics(s, s.where)
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
            prompt, output, usage = _tokens(tokens, inclusive.get(info.get("providerID") in EXCLUDING, False))
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


def _anthropic(rec: Record, splits: dict[bytes, tuple[Block, Block]]) -> Record:
    """OpenCode's cache_control on an Anthropic request: the two system messages (here the cross-session
    prefix, tools and provider prompt, and the session's own system part) and the last two messages
    (the latest blocks); Anthropic does not cache the generated output, so the reply is no `output`.
    What the request did not read or write (`input_tokens`) lies after its last breakpoint: the end of
    its last block, split off as a tail the breakpoint stops before, and split the same way wherever a
    later request sends that block (`splits`: a block's bytes -> its cached head and its tail)."""
    req = rec.call.request
    blocks = [part for b in req.blocks for part in (splits.get(b.data) or (b,))]
    tail = rec.observed.input_tokens if rec.observed is not None else 0
    last = blocks[-1] if blocks else None
    if last is not None and 0 < tail < (last.tokens or 0) and last.data not in splits:
        head = replace(last, data=last.data + b"|head", tokens=last.tokens - tail, sees=None)
        rest = replace(last, data=last.data + b"|tail", path=f"{last.path}: its end, after the last breakpoint",
                       tokens=tail, sees=None)
        splits[last.data] = (head, rest)
        blocks[-1:] = [head, rest]
    end = len(blocks) - 1 if blocks and blocks[-1].data.endswith(b"|tail") else len(blocks)
    marks = {i for i in (0, 1) if i < end and (blocks[i].tokens or 0) > 0}
    marks |= set(range(max(2, end - 2), end))
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
    splits: dict[bytes, tuple[Block, Block]] = {}
    return [_anthropic(rec, splits) if r.provider in CLAUDE else rec for r, rec in ((r, step(r)) for r in ordered)]
