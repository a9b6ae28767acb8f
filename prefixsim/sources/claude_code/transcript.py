"""Claude Code session transcripts -> timed calls with synthetic blocks calibrated from observed usage.

A transcript lacks the system prompt, the tools and the cache_control placement, so each request is
rebuilt from its observed sizes (usage fields, A-PC; docs/rules.md#anthropic-usage-fields-and-isolation):
B = cache_read + cache_creation is the prompt up to the last breakpoint and `input_tokens` the tail
after it. Both are properties of the request, whatever the cache held; how B splits into read and
write is what the replay predicts.

Blocks of one request: [cross-session prefix] [the session's own static part] [one block per
earlier request's growth] [tail]. Breakpoints sit on the two static blocks and the last history
block, as Claude Code marks the system prompt and the last message. The cross-session block's
digest names harness version, prompt type and model (every session of a replayed folder shares it,
one cache in time order); the own block's names the prompt family (session, main or agent type,
model). Neither names a size: when a later observation reveals a size better, the same cached
content is simply measured better.

Mechanisms read from the transcript, never from the usage of the request being predicted:
- an epoch starts at a stream's first request, after `compact_boundary`, when a user message's
  parent chain (followed through system / progress records) reaches no message, after a
  `<task-notification>` queued before the latest compaction or an MCP reconnect (the harness
  re-renders the history), or when the prompt shrinks; a new epoch keeps only the static prefix;
- a prompt whose parent is the reply of an earlier request of the stream than its latest (a rewind)
  continues from that reply: the history as that request sent it, then the reply as far as a later
  read proved it cached (an unlogged request cached it: stepped into the cache after that read);
- on models that keep only the last turn's thinking, a new user turn keeps the prompt up to the
  first request of the turn before whose response thought and was sent on (A-TH; versions.py);
- a new user turn started in another working directory (the record's `cwd`) re-renders the system
  prompt's session part, which names it: only the cross-session prefix is found (CC-PC);
- the entry a request continues from is found only within the API's 20-block lookback (A-PC),
  counted in content blocks from that entry to the last response; past it, a new epoch;
- the compaction call (`agent-acompact-*`) forks the main conversation: its blocks are the main
  stream's current blocks plus its own tail, so it reads the conversation's cache;
- sub-agents of one type share the static prefix; parallel starts see it only once the first
  response has begun (start = the prompt's last line, time to first token = the response line);
- the static sizes come from earlier observations (a partial read exposes a cached boundary, usable
  once that response has been logged: at a family's first request the cross-session prefix, later
  the session's system entry), else another session's own part, else the previous epoch, else the
  request's size minus the visible text of its first message (counted with cl100k).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from prefixsim.core.tokens import remembered_count
from prefixsim.errors import UserError, shown
from prefixsim.providers.tables import ANTHROPIC_LOOKBACK, anthropic_strips_thinking
from prefixsim.sources import problems
from prefixsim.sources.claude_code import hookdump
from prefixsim.sources.claude_code.accounts import accounts_of, in_account
from prefixsim.sources.claude_code.automatic import by_provider
from prefixsim.sources.claude_code.calibrate import Calibrator
from prefixsim.sources.claude_code.raw import Raw, _iso
from prefixsim.sources.claude_code.history import (RERENDER_MARKERS, message_of, new_history, not_yet_logged, reply_before,
                                                   through_progress)
from prefixsim.sources.claude_code.message import not_only_tool_results as _not_only_tool_results
from prefixsim.sources.claude_code.message import parts as _parts
from prefixsim.sources.claude_code.message import text_of as _text_of
from prefixsim.sources.claude_code.message import usage_of as _usage
from prefixsim.sources.claude_code.order import causal
from prefixsim.sources.claude_code.sniff import is_transcript_array
from prefixsim.sources.claude_code.thinking import TurnSettings
from prefixsim.sources.claude_code.file_notes import FileNotes
from prefixsim.sources.claude_code.generated import add, generated_chars, text_tokens
from prefixsim.sources.claude_code.versions import drops_earlier_thinking, prompt_follows_cd, suggests_prompts
from prefixsim.sources.files import check_regular, not_regular
from prefixsim.sources.jsonl import iter_jsonl
from prefixsim.sources.record import Record, check_model, first_given, request_key
from prefixsim.sources.stamps import parse_time, time_or_none

#: Record types Claude Code writes that carry no API call; any other type is named in a note, since
#: new versions add types (forward compatible, never fatal).
KNOWN_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
                         "progress", "attachment", "custom-title", "tag"})
AGENT_TOOLS = ("Task", "Agent")
THINKING = ("thinking", "redacted_thinking")


def files_for(path: Path, with_subagents: bool) -> list[tuple[Path, Path | None]]:
    """(transcript, its subagents folder or None) for a file, a session folder or a projects folder.
    In a projects folder, an entry named *.jsonl that is no regular file (a folder, a symbolic link
    to nothing, a FIFO) is skipped and named, never opened."""
    if not path.is_dir():
        check_regular(path)   # a FIFO given as a transcript would block the read
        sub = path.with_suffix("") / "subagents"
        return [(path, sub if with_subagents and sub.is_dir() else None)]
    if (path / "subagents").is_dir():
        main = path.parent / (path.name + ".jsonl")
        return [(main if main.is_file() else None, path / "subagents")]  # type: ignore[list-item]
    out = []
    for f in sorted(path.rglob("*.jsonl")):
        if f.parent.name == "subagents":
            continue
        why = not_regular(f)
        if why is not None:
            problems.skip(str(f), None, f"{why}; not read")
            continue
        sub = f.with_suffix("") / "subagents"
        out.append((f, sub if sub.is_dir() else None))
    # sessions a hook saved as JSON arrays (logs/chat.json) are transcripts too; other .json are not
    out += [(f, None) for f in sorted(path.rglob("*.json")) if is_transcript_array(f)]
    for sub in sorted(path.rglob("subagents")):
        main = sub.parent.parent / f"{sub.parent.name}.jsonl"
        if sub.is_dir() and not main.is_file() and any(sub.glob("agent-*.jsonl")):
            # sub-agents whose session's main transcript is not in the folder (deleted, not copied):
            # their calls are replayed on their own, never passed over
            problems.note(str(sub), None, f"sub-agent transcripts without their session's main transcript "
                                          f"({main.name}): replayed on their own")
            out.append((None, sub))
    return out


def session_key(root: Path, main: Path | None, sub: Path | None) -> str:
    """A session's name inside the folder `root`: its path relative to it, without `.jsonl`. The whole
    path, since a key cut short (the first 8 characters of the file name) merges the streams of two
    sessions whose names share a beginning; shortening for display is the report's business."""
    where = main.with_suffix("") if main is not None else sub.parent  # type: ignore[union-attr]
    try:
        return where.relative_to(root).as_posix() if root.is_dir() else where.name
    except ValueError:
        return where.as_posix()


def parse(path: Path | None, subagents: Path | None, seen: set[str], order_start: int = 0,
          prefix: str = "") -> list[Raw]:
    """Every API call of one session (the main file and, if given, its subagents folder).

    `prefix` goes in front of stream names, to keep several sessions' streams apart."""
    raws: list[Raw] = []
    agent_types: dict[str, str] = {}
    files: list[tuple[Path, str | None, str]] = []
    if path is not None:
        files.append((path, None, "main"))
    for f in sorted(subagents.glob("agent-*.jsonl")) if subagents else ():
        name = f.stem[len("agent-"):]
        files.append((f, name, "compaction" if name.startswith("acompact") else "agent"))
    for f, agent, kind in files:
        raws.extend(_parse_file(f, agent, kind, seen, agent_types, order_start + len(raws), prefix))
    return raws


def _parse_file(path: Path, agent: str | None, kind: str, seen: set[str], agent_types: dict[str, str],
                order_start: int, prefix: str) -> list[Raw]:
    """One pass over the file, keeping only what later lines need (a line's parent precedes it in
    an append-only transcript), so memory follows the requests, not the file size."""
    stamps: dict[str, str] = {}     # line uuid -> its timestamp (a request starts at its prompt's line)
    session = None
    roots: dict[str, str] = {}       # sidechain line uuid -> its stream (1.0.x inline sub-agents)
    first_text: dict[str, str] = {}
    pending: dict[str, str] = {}
    notes = FileNotes()   # said once the file is read
    links: dict[str, str | None] = {}    # record uuid -> its parentUuid (the chain runs through non-message records)
    said: set[str] = set()               # uuids of user / assistant messages
    progress: set[str] = set()           # uuids of `progress` records (a tool call's chain of its own)
    queued: dict[str, float] = {}        # injected text -> when the harness queued it (queue-operation)
    compacted: dict[str, float] = {}     # stream -> time of its latest compact_boundary
    requested: set[str] = set()          # streams that have made a request
    reply_of: dict[str, tuple[str, str]] = {}   # assistant line uuid -> (stream, request id it answers)
    latest: dict[str, str] = {}          # stream -> its latest request id
    forks: dict[str, str] = {}           # stream -> the earlier request whose reply its next prompt follows
    turn: dict[str, list[str]] = {}      # stream -> its requests since the latest user message that is not only tool results
    thought: set[str] = set()            # requests whose response holds a thinking block
    strips: dict[str, str] = {}          # stream -> the request whose response's thinking the next prompt drops
    sent: dict[str, int] = {}            # stream -> content blocks its history holds (thinking not counted)
    answered_at: dict[str, int] = {}     # stream -> `sent` at the end of its latest response
    responding: dict[str, str | None] = {}   # stream -> the request its latest assistant line belongs to
    prompt_end: dict[str, int] = {}      # request id -> `sent` where its prompt ended (its cache entry)
    awaited: dict[str, str] = {}         # stream -> a user line's parentUuid whose chain names a line not logged yet
    turn_cwd: dict[str, str] = {}        # stream -> working directory its latest turn was rendered in
    launched: dict[str, str] = {}        # stream -> the directory its first line names (where it started)
    settings = TurnSettings()            # the thinking setting of each stream's turns
    out: list[Raw] = []
    at: dict[str, int] = {}              # request id -> its call's index in `out` (this file's calls)
    through: dict[str, int | None] = {}  # request id -> characters its lines so far hold (generated.py)
    typed: dict[str, int] = {}           # stream -> tokens of the user text typed since its latest request
    where = str(path)   # one string shared by the file's calls: a walk keeps every call

    def stream_of(o: dict) -> tuple[str, str]:
        if agent is not None:
            return (f"compact-{agent}" if kind == "compaction" else f"agent-{agent}"), kind
        if not o.get("isSidechain"):
            return "main", "main"
        uid, parent = o.get("uuid"), o.get("parentUuid")
        if parent in roots:
            s = roots[parent]
        else:
            s = f"agent-{o.get('agentId') or len(set(roots.values())) + 1}"
        if uid:
            roots[uid] = s
        return s, "agent"

    def rename(renamed: list[tuple[str, str]]) -> None:
        for rid, setting in renamed:   # requests already made whose setting a later line showed
            if rid in at:
                out[at[rid]] = replace(out[at[rid]], thinking=setting)

    def one(n: int, o: object) -> Raw | None:
        """The call a line records, if any; whatever its values raise skips it (`problems.guarded`)."""
        nonlocal session
        if not isinstance(o, dict):
            raise UserError("a transcript line is a JSON object")
        if isinstance(o.get("uuid"), str) and isinstance(o.get("timestamp"), str):
            stamps[o["uuid"]] = o["timestamp"]
        session = session or (o.get("sessionId") if isinstance(o.get("sessionId"), str) else None)
        typ = o.get("type")
        uid = o.get("uuid")
        if isinstance(uid, str):
            if typ in ("user", "assistant"):
                said.add(uid)
            elif typ == "progress":
                progress.add(uid)
            links[uid] = o.get("parentUuid") if isinstance(o.get("parentUuid"), str) else None
        if typ == "queue-operation" and o.get("operation") == "enqueue" and isinstance(o.get("content"), str):
            when = time_or_none(o.get("timestamp"))   # a record with no API call: never skipped for it
            if when is not None:
                queued[o["content"].strip()] = when
        if typ not in ("user", "assistant", "system"):
            if typ not in KNOWN_TYPES:
                notes.unknown_type(shown(typ) if not isinstance(typ, str) else typ, n)
            return None
        stream, skind = stream_of(o)
        msg = o.get("message") if isinstance(o.get("message"), dict) else {}
        if typ == "system":
            if o.get("subtype") == "compact_boundary":
                pending[stream] = "compaction"
                when = time_or_none(o.get("timestamp"))
                if when is not None:
                    compacted[stream] = when
            return None
        if typ == "user":
            text = _text_of(msg)
            first_text.setdefault(stream, text)
            sent[stream] = sent.get(stream, 0) + _parts(msg.get("content"))
            says = _not_only_tool_results(msg.get("content"))   # text: a new turn for the API
            new_turn = says and not o.get("isMeta")
            version = o.get("version") if isinstance(o.get("version"), str) else ""
            if new_turn:
                rename(settings.user_line(stream, o.get("thinkingMetadata")))
                # what the user typed since the stream's latest request (Raw.said), counted only where a
                # prompt suggestion can have cached all but it (calibrate.py: Calibrator._turn_end)
                typed[stream] = typed.get(stream, 0) + (text_tokens(msg.get("content"))
                                                        if suggests_prompts(version) else 0)
            cwd = o.get("cwd") if isinstance(o.get("cwd"), str) else None
            if new_turn and cwd is not None and stream == "main" and prompt_follows_cd(version):
                if turn_cwd.get(stream, cwd) != cwd and stream in requested:
                    # The system prompt names the working directory; a turn started in another one
                    # (a `cd` that stayed) renders it anew, up to the versions that keep the launch
                    # directory (versions.py; docs/rules.md#claude-code-transcripts-parent-chain).
                    pending.setdefault(stream, "environment")
                turn_cwd[stream] = cwd
            if says and turn.get(stream):
                # A new user turn: models that keep only the last turn's thinking drop every earlier
                # response's thinking block. The prompt stays as sent up to the first request of the
                # turn just ended whose response held one and was sent on (A-TH, A-PC).
                done = turn.pop(stream)
                first = next((rid for rid in done[:-1] if rid in thought), None)
                if first is not None:
                    strips[stream] = first
            if not o.get("isMeta") and stream in requested:
                if new_history(o.get("parentUuid"), text, links, said, queued, compacted.get(stream)) \
                        or text.lstrip().startswith(RERENDER_MARKERS):
                    pending.setdefault(stream, "rerender")
                else:
                    # A prompt that follows the reply of an earlier request than the stream's latest: the
                    # user rewound the conversation (checkpoint, edit): the history returns to that reply.
                    answered = reply_before(o.get("parentUuid"), links, said, reply_of)
                    if answered is not None and through_progress(o.get("parentUuid"), links, said, progress):
                        # the chain ran through a tool call's progress to the call's line: no rewind
                        forks.pop(stream, None)
                    elif answered is not None and answered[0] == stream and answered[1] != latest.get(stream):
                        forks[stream] = answered[1]
                    elif answered is not None:
                        forks.pop(stream, None)
                    if not_yet_logged(o.get("parentUuid"), links, said) is not None:
                        awaited[stream] = o["parentUuid"]
                if new_turn and not o.get("isCompactSummary"):
                    # only the first turn after a compaction can bring a re-rendered history with it:
                    # later notifications queued before it continue the conversation as rendered then
                    compacted.pop(stream, None)
            return None
        for part in msg.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "tool_use" and part.get("name") in AGENT_TOOLS:
                inp = part.get("input") or {}
                if isinstance(inp, dict) and isinstance(inp.get("prompt"), str):
                    agent_types[inp["prompt"].strip()] = str(inp.get("subagent_type") or "agent")
        rid = request_key(first_given(o.get("requestId"), msg.get("id")), "requestId")
        if rid and isinstance(uid, str):
            reply_of[uid] = (stream, rid)
        if rid and any(isinstance(p, dict) and p.get("type") in THINKING for p in msg.get("content") or ()):
            thought.add(rid)
            rename(settings.thinking_block(stream))
        before, answered = sent.get(stream, 0), answered_at.get(stream, 0)
        parts = _parts(msg.get("content"), THINKING)
        sent[stream] = before + parts
        # One response logged as several lines, the results of its parallel tool calls between them: in
        # the prompt the response is one message and the results the next, so the response ends its own
        # parts after its start, not after the results logged among them.
        answered_at[stream] = answered + parts if rid and rid == responding.get(stream) else before + parts
        responding[stream] = rid
        if isinstance(o.get("cwd"), str):
            turn_cwd.setdefault(stream, o["cwd"])
            launched.setdefault(stream, o["cwd"])
        usage = msg.get("usage")
        if rid in at:
            # A later line of a logged request: its content blocks are not always written in time
            # order (a thinking block stamped after the tool call it precedes), and the response
            # began at the earliest of them, by which every block before it was generated
            when = time_or_none(o.get("timestamp"))
            done = out[at[rid]]
            through[rid] = add(through[rid], generated_chars(msg.get("content")))
            if when is not None and when < done.response:
                start = min(done.start, when)
                out[at[rid]] = replace(done, response=when, start=start, timestamp=_iso(start),
                                       generated=through[rid])
            return None
        if rid and rid in seen and msg.get("model") != "<synthetic>":
            notes.repeat(rid, n)   # a resumed session repeats the calls before it: counted once
            return None
        if not rid or msg.get("model") == "<synthetic>":
            # the harness's own messages ("Session limit reached", an API error shown in the
            # conversation): no API call, whether or not they carry an all-zero usage
            return None
        if not isinstance(usage, dict):
            problems.skip(where, n, f"request {rid} has no usage (nothing to compare with)")
            return None
        response = parse_time(o.get("timestamp"))
        through[rid] = generated_chars(msg.get("content"))
        parent = o.get("parentUuid")
        parent_stamp = stamps.get(parent) if isinstance(parent, str) else None
        start = min(response, parse_time(parent_stamp)) if parent_stamp else response
        used = _usage(usage)
        model = check_model(msg.get("model"), "anthropic")
        seen.add(rid)
        if stream in awaited and message_of(awaited.pop(stream), links, said) is None:   # history.not_yet_logged
            pending.setdefault(stream, "rerender")
        requested.add(stream)
        think = settings.of(stream, rid, model)
        fork, strip = forks.pop(stream, None), strips.pop(stream, None)
        version = o.get("version") if isinstance(o.get("version"), str) else ""
        strip = strip if anthropic_strips_thinking(model) and drops_earlier_thinking(version) else None
        notes.dropped_thinking(version, n, strip)
        entry = strip or (None if fork else latest.get(stream))
        if entry in prompt_end and answered - prompt_end[entry] > ANTHROPIC_LOOKBACK.value:
            # The entry this prompt continues from lies more blocks back than the API looks from the
            # breakpoints on the last two messages (A-PC): only the static prefix is found.
            pending.setdefault(stream, "lookback")
        prompt_end[rid] = before
        latest[stream] = rid
        turn.setdefault(stream, []).append(rid)
        text = first_text.get(stream, "")
        family = "main" if skind in ("main", "compaction") else \
            f"agent:{agent_types.get(text.strip(), 'agent')}:{model}"
        return Raw(rid, prefix + stream, skind, f"{session or where}/{family}", model, start, response,
                   used, _iso(start), where, n,
                   prefix + "main" if skind == "compaction" else None, pending.pop(stream, None),
                   text, order_start + len(out), f"{version}|{family}|{model}",
                   fork or strip, env=turn_cwd.get(stream, "") if skind == "main" else "", thinking=think,
                   folder=launched.get(stream, ""), generated=through[rid], said=typed.pop(stream, None),
                   stripped=strip is not None and fork is None, suggests=suggests_prompts(version))

    lines = hookdump.iter_elements(path) if hookdump.is_array_file(path) else iter_jsonl(path)
    for n, o in lines:
        raw = problems.guarded(where, n, one, n, o)
        if raw is not None:
            at[raw.request_id] = len(out)
            out.append(raw)
    notes.say(where)
    return causal(out)


def raws(path: Path, with_subagents: bool, sessions: list[tuple[Path, Path | None]] | None = None,
         prefix: str = "") -> list[Raw]:
    """Every call of the transcripts at `path` (or of `sessions` found in it), deduplicated by
    requestId, in start order. A call is a few hundred bytes: a replay keeps these and builds each
    request's blocks as it reaches it. With several sessions, each stream is named after its session
    (`session_key`); `prefix` goes in front of every stream (the caller's own qualification)."""
    seen: set[str] = set()
    out: list[Raw] = []
    sessions = files_for(path, with_subagents) if sessions is None else sessions
    for main, sub in sessions:
        own = f"{session_key(path, main, sub)}/" if len(sessions) > 1 else ""
        out.extend(parse(main, sub, seen, len(out), prefix + own))
    out.sort(key=lambda r: (r.start, r.order))
    return out


def calibrated(ordered: Sequence[Raw], names: Sequence[str] | None = None) -> Iterator[Record]:
    """Records of calls given in start order, built one at a time as they are consumed (a request holds
    its whole history; only the stream's current one is kept), each in its account's cache (accounts.py;
    `names`: accounts_of(ordered), when the caller has them)."""
    names = accounts_of(ordered) if names is None else names
    out = by_provider(ordered, Calibrator(remembered_count("cl100k_base")).step)
    return (in_account(rec, name) for name, rec in zip(names, out, strict=True)) if any(names) else out


def load(path: Path, with_subagents: bool) -> list[Record]:
    """All requests of the transcripts at `path`, deduplicated by requestId, calibrated, time-ordered."""
    return list(calibrated(raws(path, with_subagents)))
