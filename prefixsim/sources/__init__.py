"""Importers of real traffic. `detect(path)` names a path's format; `load(path)` yields Records.

Formats: claude-code (session transcripts: a .jsonl, a session folder, a projects folder),
anthropic (Messages API JSONL logs and VCR cassettes), openai (Chat Completions / Responses logs),
and the serving-engine traces mooncake and bailian, which `prefixsim replay` hands to
`prefixsim.engines.trace`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ..errors import UserError
from .record import Record
from .traffic import Head, Part, Traffic

FORMATS = ("claude-code", "anthropic", "openai", "mooncake", "bailian")
TRACE_FORMATS = ("mooncake", "bailian")
_SNIFF_LINES = 20


def _classify(obj: object) -> str | None:
    from . import anthropic_log, claude_code, openai_log

    if not isinstance(obj, dict):
        return None
    if "hash_ids" in obj:
        if {"chat_id", "parent_chat_id", "turn"} <= obj.keys():
            return "bailian"
        if "input_length" in obj:
            return "mooncake"
    if claude_code.is_transcript_line(obj):
        return "claude-code"
    if openai_log.looks_openai(obj):
        return "openai"
    if anthropic_log.split_entry(obj)[0] is not None:
        return "anthropic"
    return None


def detect(path: str | Path) -> str:
    """The format of a file or folder, judged from its first lines (folders: Claude Code projects)."""
    p = Path(path)
    if not p.exists():
        raise UserError("no such file or folder", str(p))
    if p.is_dir():
        if (p / "subagents").is_dir() or any(p.rglob("*.jsonl")):
            return "claude-code"
        raise UserError("folder holds no .jsonl transcripts", str(p))
    if p.suffix in (".yaml", ".yml"):
        return "anthropic"
    with p.open("rb") as fh:
        for n, raw in enumerate(fh, start=1):
            if n > _SNIFF_LINES:
                break
            try:
                kind = _classify(json.loads(raw.decode("utf-8")))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue  # a corrupt line is reported (and skipped) when the file is read
            if kind:
                return kind
    raise UserError(f"cannot tell the format from the first {_SNIFF_LINES} lines (known: {', '.join(FORMATS)}); "
                    "use --source", str(p))


def _format(p: Path, source: str | None) -> str:
    fmt = source or detect(p)
    if fmt not in FORMATS:
        raise UserError(f"unknown source format {fmt!r} (valid: {', '.join(FORMATS)})")
    if fmt in TRACE_FORMATS:
        raise UserError(f"{fmt} traces are replayed by the engine trace replay, not as API traffic", str(p))
    return fmt


def load(path: str | Path, source: str | None = None, with_subagents: bool | None = None) -> list[Record]:
    """The requests at `path` as time-ordered Records. A single Claude Code .jsonl is that file only
    unless `with_subagents`; a session or projects folder includes sub-agents."""
    from . import anthropic_log, claude_code, openai_log
    from ..tokenize import get_tokenizer

    p = Path(path)
    fmt = _format(p, source)
    if fmt == "claude-code":
        return claude_code.load(p, p.is_dir() if with_subagents is None else with_subagents)
    sizer = anthropic_log.Sizer(get_tokenizer("cl100k_base").count_text)
    if fmt == "openai":
        return openai_log.load_jsonl(p, sizer)
    if p.suffix in (".yaml", ".yml"):
        return anthropic_log.load_cassette(p, sizer)
    return anthropic_log.load_jsonl(p, sizer)


#: Request logs larger than this are walked by re-reading each line at its offset: memory then follows
#: the number of requests, not the bytes of the bodies, at about half the speed (each line is rendered
#: twice). Smaller logs keep their parsed records and the full speed.
STREAM_LOGS_OVER = 256 * 1024 * 1024


def _stream_log(p: Path) -> bool:
    return p.stat().st_size > STREAM_LOGS_OVER


def _part(p: Path, source: str | None, with_subagents: bool | None, seen: set[str]) -> Part:
    """The requests at `p` whose id no earlier path had (`seen` gains this path's ids)."""
    from . import anthropic_log, api_log, claude_code, openai_log
    from ..tokenize import get_tokenizer

    fmt = _format(p, source)
    if fmt in ("anthropic", "openai") and p.suffix not in (".yaml", ".yml") and _stream_log(p):
        kind = openai_log if fmt == "openai" else anthropic_log
        sizer = anthropic_log.Sizer(get_tokenizer("cl100k_base").count_text, share=False)
        return api_log.part(p, kind.request_id, kind.line_record, sizer, seen)
    if fmt != "claude-code":   # a cassette: YAML is parsed whole anyway
        kept = []
        for r in load(p, source, with_subagents):
            if r.request_id not in seen:
                seen.add(r.request_id)
                kept.append(r)
        return Part.of(kept)
    raws = claude_code.raws(p, p.is_dir() if with_subagents is None else with_subagents)
    # Every call still shapes its stream's blocks; a request another path had is only left out.
    dropped = {r.request_id for r in raws if r.request_id in seen}
    seen.update(r.request_id for r in raws)
    heads = [Head(r.start, r.timestamp, r.stream, r.usage.cache_write_1h > 0, False)
             for r in raws if r.request_id not in dropped]
    return Part(heads, lambda: (x for x in claude_code.calibrated(raws) if x.request_id not in dropped))


def open_many(paths: Sequence[str | Path], source: str | None = None,
              errors: list[UserError] | None = None) -> Traffic:
    """Several paths in one replay, as Traffic: read once, walked in time order as often as needed,
    times in seconds from the first request (each record keeps its absolute ISO timestamp). A
    transcript given together with its session folder includes the sub-agents; request ids already
    seen are skipped. With an `errors` list, a path that fails is recorded there and the others are
    still read; without one, the first failure raises."""
    given = [Path(x) for x in paths]
    folders = {x.resolve() for x in given if x.is_dir()}
    parts: list[Part] = []
    seen: set[str] = set()
    for p in given:
        if p.is_dir() and p.parent.joinpath(p.name + ".jsonl") in given:
            continue
        sub = p.is_file() and p.with_suffix("").resolve() in folders
        try:
            parts.append(_part(p, source, True if sub else None, seen))
        except UserError as e:
            if errors is None:
                raise
            errors.append(e.located(str(p)))
    return Traffic(parts)


def load_many(paths: Sequence[str | Path], source: str | None = None,
              errors: list[UserError] | None = None) -> list[Record]:
    """`open_many` as a list: every request in memory at once (small inputs, notebooks)."""
    return list(open_many(paths, source, errors))


__all__ = ["FORMATS", "Record", "TRACE_FORMATS", "Traffic", "detect", "load", "load_many", "open_many"]
