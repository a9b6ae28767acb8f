"""Importers of real traffic. `detect(path)` names a path's format; `load(path)` yields Records.

Formats: `FORMAT_LINES`, one line each (transcripts and session files of Claude Code, Codex CLI,
Gemini CLI and OpenCode; API logs and cassettes of every provider; observability and gateway exports;
the engine traces mooncake and bailian, which `prefixsim replay` hands to `prefixsim.engines.trace`).
A file no reader can place is refused naming them, never read as another format.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path

from prefixsim.core.tokens import remembered_count
from prefixsim.errors import UserError
from prefixsim.io.input_formats import FORMAT_LINES, FORMATS
from prefixsim.sources import problems
from prefixsim.sources.claude_code import hookdump as _hookdump
from prefixsim.sources.claude_code import sniff as _sniff
from prefixsim.sources.files import open_regular, suffix
from prefixsim.sources.record import Record
from prefixsim.sources.traffic import Head, Part, Seen, Traffic

#: Formats read by the OpenAI-format reader (Chat Completions / Responses), and the provider each forces.
OPENAI_FORMATS = {"openai": None, "deepseek": "deepseek", "cohere": "cohere"}
#: Suffixes of recorded HTTP cassettes.
CASSETTES = (".yaml", ".yml")
TRACE_FORMATS = ("mooncake", "bailian")
#: Observability and gateway exports (sources/otel.py, sources/gateway_logs.py).
EXPORT_FORMATS = ("otel", "litellm", "langfuse")
_SNIFF_LINES = 20


def _classify(obj: object) -> str | None:
    if not isinstance(obj, dict):
        return None
    if "hash_ids" in obj:
        if {"chat_id", "parent_chat_id", "turn"} <= obj.keys():
            return "bailian"
        if "input_length" in obj:
            return "mooncake"
    if "resourceSpans" in obj or "resourceLogs" in obj:   # an OTLP JSON export request
        return "otel"
    gateway = _gateway_kind(obj)
    if gateway:
        return gateway
    if "sessionId" in obj and "projectHash" in obj:   # Gemini CLI's metadata line (a transcript has no projectHash)
        return "gemini-cli"
    if _sniff.is_transcript_line(obj):
        return "claude-code"
    if "payload" in obj:   # every Codex rollout line has one (rollout.is_rollout_line)
        from prefixsim.sources.codex import rollout   # lazy: a request log's replay never loads the Codex reader
        if rollout.is_rollout_line(obj):
            return "codex"
    # lazy: a transcript replay never loads the API-log readers, a log's replay those it does not ask
    from prefixsim.sources import bedrock_log, openai_log, routers

    if bedrock_log.looks_converse(obj):   # before OpenAI's: a Converse body has `messages` too
        return "bedrock"
    if routers.cohere_shape(openai_log.split(obj)[1]):   # before OpenAI's and Anthropic's: its body is like both
        return "cohere"
    if openai_log.looks_openai(obj):
        return "openai"
    from prefixsim.sources import anthropic_log, gemini_log   # lazy: as above
    if gemini_log.looks_gemini(obj):
        return "gemini"
    body = anthropic_log.split_entry(obj)[0]
    if body is not None and anthropic_log.looks_anthropic(body, anthropic_log.split_entry(obj)[1]):
        return "anthropic"
    return None   # a body no reader places: refused by `detect`, naming the formats it knows


def _gateway_kind(obj: dict) -> str | None:
    from prefixsim.sources import gateway_logs   # lazy: a transcript replay never loads it
    return gateway_logs.kind_of(obj)


def _kinds(p: Path) -> Iterator[str]:
    """The format of each of a file's first lines that tells one. A line that does not parse, or
    whose values trip the classifier, is left for the reader to name."""
    with open_regular(p) as fh:
        for n, raw in enumerate(fh, start=1):
            if n > _SNIFF_LINES:
                break
            try:
                kind = _classify(json.loads(raw.decode("utf-8")))
            except problems.LINE_ERRORS:
                continue  # a corrupt line is reported (and skipped) when the file is read
            if kind:
                yield kind


def sniff(p: Path) -> str | None:
    """The format of one file judged from its first lines (None: cannot tell)."""
    return next(_kinds(p), None)


def detect(path: str | Path) -> str:
    """The format of a file or folder, judged from its first lines (folders: Claude Code projects)."""
    p = Path(path)
    if not p.exists():
        raise UserError("no such file or folder", str(p))
    if _opencode(p):
        return "opencode"
    if p.is_dir():
        if (p / "subagents").is_dir():
            return "claude-code"
        first = next(iter(sorted(p.rglob("*.jsonl"))), None)
        if first is not None:   # a Codex sessions folder, else Claude Code projects
            return "codex" if first.is_file() and sniff(first) == "codex" else "claude-code"
        if any(_sniff.is_transcript_array(f) for f in sorted(p.rglob("*.json"))):
            return "claude-code"   # sessions a hook saved as JSON arrays (logs/chat.json)
        raise UserError("folder holds no .jsonl transcripts (nor JSON arrays of transcript lines a hook saved)", str(p))
    if suffix(p) in CASSETTES or (suffix(p) == ".json" and _cassette_json(p)):
        from prefixsim.sources import cassette_kinds   # lazy: a transcript replay never loads the API-log readers

        return cassette_kinds.kind_of(p)
    if suffix(p) == ".json" and _gemini_cli_json(p):
        return "gemini-cli"
    kind = _array_kind(p) if _hookdump.is_array_file(p) else sniff(p)
    if kind:
        return kind
    from prefixsim.sources import gateway_logs, otel   # lazy: a transcript replay never loads them

    # One pretty-printed document, whose lines tell nothing: an OTLP export, a Langfuse export or a
    # LiteLLM payload, told from its head.
    kind = otel.sniff_document(p) and "otel" or gateway_logs.sniff_document(p)
    if kind:
        return kind
    raise UserError(f"cannot tell the format from the first {_SNIFF_LINES} lines (known: {', '.join(FORMATS)}); "
                    "use --source", str(p))


def _looks(p: Path) -> str:
    """What a path given with the wrong --source looks like, for the refusal."""
    try:
        return f"it looks like {detect(p)}"
    except UserError:
        return "its format is not one prefixsim reads"


def _opencode(p: Path) -> bool:
    """OpenCode's data dir or storage folder, its database, an `opencode export` document, or an event
    stream (any name: a client keeps it as .json, .jsonl or the SSE text)."""
    from prefixsim.sources.opencode import events, storage   # lazy: other replays never load them

    if p.is_dir():
        return storage.storage_root(p) is not None or storage.database(p) is not None
    return p.is_file() and (storage.is_database(p) or (suffix(p) == ".json" and (
        storage.is_export(p) or storage.session_file(p) is not None)) or events.is_events(p))


def _gemini_cli_json(p: Path) -> bool:
    """A whole Gemini CLI session (`ConversationRecord`): an object that opens with its session fields."""
    with open_regular(p) as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"{") and b'"sessionId"' in head and b'"projectHash"' in head


def _array_kind(p: Path) -> str | None:
    """A JSON array whose elements are Claude Code transcript lines (a hook's `logs/chat.json`) is a
    transcript; an array of anything else (another hook's payloads) tells nothing."""
    for _, element in _hookdump.iter_elements(p, _hookdump.SNIFF_ELEMENTS):
        gateway = _gateway_kind(element) if isinstance(element, dict) else None
        if gateway:   # a Langfuse or LiteLLM export as one array: its items carry a sessionId too
            return gateway
        if _sniff.is_transcript_line(element):
            return "claude-code"
    return None


def _cassette_json(p: Path) -> bool:
    """A `.json` file that is a whole cassette document (vcrpy's JSON serializer), not JSON Lines."""
    with open_regular(p) as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"{") and any(k.encode() in head for k in ('"interactions"', '"http_interactions"'))


def _is_cassette(p: Path) -> bool:
    return suffix(p) in CASSETTES or (suffix(p) == ".json" and p.is_file() and _cassette_json(p))


#: Formats one reader reads alike, so a --source among them is a choice of rules, not a wrong format.
_SAME_READER = (frozenset(OPENAI_FORMATS),)


def _format(p: Path, source: str | None) -> str:
    fmt = source or detect(p)
    if fmt not in FORMATS:
        raise UserError(f"unknown source format {fmt!r} (valid: {', '.join(FORMATS)})")
    if source and p.is_file():
        try:   # a log is the user's format when any of its first lines is
            shown = {detect(p)} if _is_cassette(p) else set(_kinds(p))
        except UserError:   # a file whose format cannot be told is read as the user says
            shown = {source}
        same = {source}.union(*(g for g in _SAME_READER if source in g))
        looks = sorted(shown)[0] if shown and not shown & same else source
        if looks != source:
            raise UserError(f"--source {source}, but the file looks like {looks} ({FORMAT_LINES[looks]}); "
                            f"use --source {looks} or leave --source out", str(p))
    if fmt in TRACE_FORMATS:
        raise UserError(f"{fmt} traces are replayed by the engine trace replay, not as API traffic", str(p))
    return fmt


def _read(p: Path, fmt: str) -> list[Record]:
    """One request log or cassette, whole (its records in file order). A cassette that records calls
    of several APIs (a test that talks to Gemini, then OpenAI) is read by each API's reader."""
    records = _read_one(p, fmt)
    if _is_cassette(p) and fmt in _CASSETTE_KINDS:
        from prefixsim.sources import cassette_kinds   # lazy: as in detect

        for kind in sorted(k for k in cassette_kinds.held(p) if k in _CASSETTE_KINDS and k != _reader(fmt)):
            records = [*records, *_read_one(p, kind)]
    if _is_cassette(p):   # a test's recording may start on the cache its previous run left
        from prefixsim.sources.earlier_run import warmed   # lazy: as in detect

        records = warmed(records)
    return records


#: The cassette readers: each reads only the interactions of its API (openai, deepseek and cohere are one).
_CASSETTE_KINDS = ("gemini", "bedrock", "openai", "anthropic", "realtime")


def _reader(fmt: str) -> str:
    return "openai" if fmt in OPENAI_FORMATS else fmt


def _read_one(p: Path, fmt: str) -> list[Record]:
    from prefixsim.sources import anthropic_log   # lazy: a transcript replay never loads the API-log readers

    # counts remembered across runs: a replay of a log read before builds no encoding (~0.25 s)
    sizer = anthropic_log.Sizer(remembered_count("cl100k_base"))
    if fmt == "gemini-cli":
        from prefixsim.sources import gemini_cli   # lazy: other replays never load it
        return gemini_cli.load(p)
    if fmt == "opencode":
        from prefixsim.sources.opencode import steps, storage   # lazy: other replays never load them
        if not _opencode(p):
            raise UserError(f"{storage.NOT_OPENCODE}; {_looks(p)}", str(p))
        return steps.load(p)
    if fmt == "bedrock":
        from prefixsim.sources import bedrock_log   # lazy: only a Bedrock file loads its reader

        return (bedrock_log.load_cassette if _is_cassette(p) else bedrock_log.load_jsonl)(p, sizer)
    if fmt == "otel":
        from prefixsim.sources import otel   # lazy: other replays never load it
        return otel.load(p, sizer)
    if fmt == "realtime":
        from prefixsim.sources import realtime   # lazy: other replays never load it
        return realtime.load_cassette(p)
    if fmt in ("litellm", "langfuse"):
        from prefixsim.sources import gateway_logs   # lazy: other replays never load it
        return gateway_logs.load(p, fmt, sizer)
    if fmt == "gemini":   # read whole: a cache's storage time is known only at its delete or expiry
        from prefixsim.sources import gemini_log   # lazy: only a Gemini file loads its reader
        return (gemini_log.load_cassette if _is_cassette(p) else gemini_log.load_jsonl)(p, sizer)
    if fmt in OPENAI_FORMATS:
        from prefixsim.sources import openai_cassette, openai_log   # lazy: only an OpenAI-format file loads them
        read = openai_cassette.load_cassette if _is_cassette(p) else openai_log.load_jsonl
        return read(p, sizer, OPENAI_FORMATS[fmt])
    if suffix(p) in (".yaml", ".yml"):
        return anthropic_log.load_cassette(p, sizer)
    return anthropic_log.load_jsonl(p, sizer)


def load(path: str | Path, source: str | None = None, with_subagents: bool | None = None) -> list[Record]:
    """The requests at `path` as Records: a log or cassette in file order, transcripts in time order.
    A single Claude Code .jsonl is that file only unless `with_subagents`; a session or projects
    folder includes sub-agents (and the API logs a projects folder holds)."""
    p = Path(path)
    fmt = _format(p, source)
    if fmt == "claude-code" and p.is_dir():
        return list(Traffic(_parts(p, fmt, with_subagents, Seen()), rebase=False))
    if fmt == "claude-code":
        from prefixsim.sources.claude_code import transcript   # lazy: a log's replay never loads the transcript reader
        return transcript.load(p, bool(with_subagents))
    if fmt == "codex":
        from prefixsim.sources.codex import sessions   # lazy: other replays never load it
        return sessions.load(p)
    return _read(p, fmt)


#: Request logs larger than this are walked by re-reading each line at its offset: memory then follows
#: the number of requests, not the bytes of the bodies, at about half the speed (each line is rendered
#: twice). Smaller logs keep their parsed records and the full speed.
STREAM_LOGS_OVER = 256 * 1024 * 1024


def _stream_log(p: Path) -> bool:
    return p.stat().st_size > STREAM_LOGS_OVER


def _folder(p: Path, with_subagents: bool) -> tuple[list[tuple[Path, Path | None]], list[tuple[Path, str]]]:
    """A projects folder's transcripts, and the request logs it also holds (path, format): an API log
    dropped among transcripts is replayed as what it is, never read as a transcript with no calls.
    A file of another kind (an engine trace) is skipped and named."""
    from prefixsim.sources.claude_code import transcript   # lazy: as in load

    sessions, logs = [], []
    for main, sub in transcript.files_for(p, with_subagents):
        kind = None if main is None else problems.guarded(str(main), None, sniff, main)
        if kind in ("anthropic", "gemini", "bedrock", *OPENAI_FORMATS, *EXPORT_FORMATS):
            logs.append((main, kind))
        elif kind in TRACE_FORMATS:
            problems.skip(str(main), None, f"a {kind} engine trace, not a Claude Code transcript; "
                                           "replay it on its own")
        else:   # a transcript, or a file whose first lines tell nothing: its reader names its lines
            sessions.append((main, sub))
    return sessions, logs


def _parts(p: Path, fmt: str, with_subagents: bool | None, seen: Seen, prefix: str = "") -> list[Part]:
    """The requests at `p` that no earlier path had (`Seen`), one Part per source; `prefix` qualifies
    their stream names."""
    if fmt not in ("claude-code", "codex") and p.is_file() and not seen.first_read(p):
        return []
    if fmt in ("anthropic", *OPENAI_FORMATS) and not _is_cassette(p) and _stream_log(p):
        # lazy: a transcript replay never loads the API-log readers
        from prefixsim.sources import anthropic_log, api_log, openai_log

        kind = openai_log if fmt in OPENAI_FORMATS else anthropic_log
        sizer = anthropic_log.Sizer(remembered_count("cl100k_base"), share=False)
        line = partial(openai_log.line_record, provider=OPENAI_FORMATS[fmt]) if fmt in OPENAI_FORMATS \
            else anthropic_log.line_record
        return [api_log.part(p, kind.request_id, line, sizer, kind.line_time).qualified(prefix)]
    if fmt == "codex":
        return [_codex_part(p, seen, prefix)]
    if fmt != "claude-code":   # a cassette: YAML is parsed whole anyway
        return [Part.of(_read(p, fmt)).qualified(prefix)]
    from prefixsim.sources.claude_code import transcript as _transcript   # lazy: as in load
    from prefixsim.sources.claude_code.accounts import accounts_of   # lazy: as in load

    subagents = p.is_dir() if with_subagents is None else with_subagents
    sessions, logs = _folder(p, subagents) if p.is_dir() else (None, [])
    parts: list[Part] = []
    for log, kind in logs:
        # Each file in the folder names its own streams once the folder holds more than one.
        own = f"{_transcript.session_key(p, log, None)}.jsonl/" if len(logs) + len(sessions or ()) > 1 else ""
        parts.extend(_parts(log, kind, None, seen, prefix + own))
    if sessions == []:
        return parts
    alone = prefix
    if logs and sessions and len(sessions) == 1:   # a lone session beside logs: its "main" is not theirs
        alone += f"{_transcript.session_key(p, *sessions[0])}/"
    raws = _transcript.raws(p, subagents, sessions, alone)
    # Every call still shapes its stream's blocks; a request another path had is only left out.
    dropped = seen.repeats(raws)
    # a transcript's namespace: its model's (it names the provider) in its account's cache (accounts.py)
    names = accounts_of(raws)   # once, for the heads and every walk
    heads = [Head(r.start, r.timestamp, r.stream, r.usage.cache_write_1h > 0, False, ("claude-code", r.model, who))
             for r, who in zip(raws, names) if r.request_id not in dropped]
    parts.append(Part(heads, lambda: (x for x in _transcript.calibrated(raws, names) if x.request_id not in dropped)))
    return parts


def _codex_part(p: Path, seen: set[str], prefix: str) -> Part:
    """Codex rollouts as one Part: their raw calls kept, each request's blocks built when walked."""
    from prefixsim.sources.codex import sessions   # lazy: other replays never load it

    raws = [r for r in sessions.raws(p, prefix) if r.request_id not in seen]
    seen.update(r.request_id for r in raws)
    heads = [Head(r.start, r.timestamp, r.stream, False, True, ("codex", r.model)) for r in raws]
    return Part(heads, lambda: sessions.calibrated(raws))


def open_many(paths: Sequence[str | Path], source: str | None = None,
              errors: list[UserError] | None = None) -> Traffic:
    """Several paths in one replay, as Traffic: read once, walked in time order as often as needed,
    times in seconds from the first request (each record keeps its absolute ISO timestamp). A
    transcript given together with its session folder includes the sub-agents; request ids already
    seen are skipped. With several paths, each path's streams are named after it (two files' "main"
    streams are two streams). With an `errors` list, a path that fails is recorded there and the
    others are still read; without one, the first failure raises."""
    given = [Path(x) for x in paths]
    folders = {x.resolve() for x in given if x.is_dir()}
    read = [p for p in given if not (p.is_dir() and p.parent.joinpath(p.name + ".jsonl") in given)]
    parts: list[Part] = []
    seen = Seen()
    for p in read:
        sub = p.is_file() and p.with_suffix("").resolve() in folders
        try:
            parts.extend(_parts(p, _format(p, source), True if sub else None, seen,
                                f"{p.as_posix()}/" if len(read) > 1 else ""))
        except UserError as e:
            if errors is None:
                raise
            errors.append(e.located(str(p)))
    return Traffic(parts)


def load_many(paths: Sequence[str | Path], source: str | None = None,
              errors: list[UserError] | None = None) -> list[Record]:
    """`open_many` as a list: every request in memory at once (small inputs, notebooks)."""
    return list(open_many(paths, source, errors))


__all__ = ["FORMATS", "TRACE_FORMATS", "Record", "Traffic", "detect", "load", "load_many", "open_many"]
