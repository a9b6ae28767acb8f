"""What tells a file as Claude Code's: the lines it writes, and a hook's JSON array of them. Format
detection (sources/__init__.py) and a projects folder's listing (transcript.files_for) both ask."""
from __future__ import annotations

from pathlib import Path

from prefixsim.sources import problems
from prefixsim.sources.claude_code import hookdump
from prefixsim.sources.files import not_regular


def is_transcript_line(obj: object) -> bool:
    """A JSONL line Claude Code writes."""
    return isinstance(obj, dict) and ("sessionId" in obj or obj.get("type") in (
        "file-history-snapshot", "summary", "queue-operation")) and "hash_ids" not in obj


def is_transcript_array(path: Path) -> bool:
    """A `.json` file holding a JSON array whose first elements include a Claude Code transcript line
    (what a folder of hook dumps, `logs/chat.json`, holds beside or instead of JSONL transcripts)."""
    if not hookdump.is_array_file(path) or not_regular(path) is not None:
        return False
    with problems.collecting():   # a sniff names no problem: the read that follows does
        return any(is_transcript_line(e) for _, e in hookdump.iter_elements(path, hookdump.SNIFF_ELEMENTS))
