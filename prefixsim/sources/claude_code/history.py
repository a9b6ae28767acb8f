"""Whether a user line of a transcript continues the conversation or starts its history anew: its
parent chain, the notifications the harness queued, the commands after which it re-renders."""
from __future__ import annotations

INJECTED_PREFIXES = ("<task-notification>",)
#: Local-command output after which the harness re-renders the history: `/mcp` reconnecting an MCP
#: server changes the tool context its first message carries (observed; docs/rules.md#claude-code-transcripts-parent-chain).
RERENDER_MARKERS = ("<local-command-stdout>Reconnected to",)


def new_history(parent: object, text: str, links: dict[str, str | None], said: set[str],
                 queued: dict[str, float], compacted: float | None) -> bool:
    """Whether a user message of a stream that has made requests starts a new history rather than
    continuing the conversation. Its `parentUuid` may name a non-message record (`system`:
    stop_hook_summary, turn_duration, local_command; `progress`; …) whose own parent leads back to a
    message: the conversation goes on through them. A chain that reaches no message starts anew.
    A `<task-notification>` continues as well, except one the harness queued before the stream's
    latest compaction and delivered as the first turn after it: it came with the history re-rendered
    (observed: read the static entry only; docs/rules.md#claude-code-transcripts-parent-chain)."""
    if message_of(parent, links, said) is None:
        return not_yet_logged(parent, links, said) is None
    if text.lstrip().startswith(INJECTED_PREFIXES):
        when = queued.get(text.strip())
        return when is not None and compacted is not None and when < compacted
    return False


def _chain_end(parent: object, links: dict[str, str | None], said: set[str]) -> object:
    """Where a `parentUuid` chain through non-message records stops: a message (in `said`), a record
    no line has named yet (in neither), a non-id, or, past 10,000 hops (a cycle), the record reached."""
    hops = 0
    while isinstance(parent, str) and parent not in said and parent in links and hops < 10_000:
        parent = links[parent]
        hops += 1
    return parent


def message_of(parent: object, links: dict[str, str | None], said: set[str]) -> str | None:
    """The message a `parentUuid` leads to through non-message records (None: the chain reaches none)."""
    end = _chain_end(parent, links, said)
    return end if isinstance(end, str) and (end in said or end in links) else None


def not_yet_logged(parent: object, links: dict[str, str | None], said: set[str]) -> str | None:
    """The record a `parentUuid` chain stops at because no line has named it yet, if so. 2.1.x logs the
    result of a response's first tool call before the response's later lines (parallel calls): the
    result's parent is a line further down. Only once that line is read is it known whether the
    chain reaches a message (the stream's next request decides); until then it is no new history."""
    end = _chain_end(parent, links, said)
    return end if isinstance(end, str) and end not in said and end not in links else None


def through_progress(parent: object, links: dict[str, str | None], said: set[str], progress: set[str]) -> bool:
    """Whether a `parentUuid` chain reaches its message through a `progress` record. A tool call's
    progress (a hook's, a sub-agent's) is logged as a chain of its own hanging off the line that made
    the call, and the turn's closing records (`stop_hook_summary`) can follow it: the message such a
    chain reaches is where the call was made, not the reply the next prompt follows."""
    hops = 0
    while isinstance(parent, str) and parent not in said and parent in links and hops < 10_000:
        if parent in progress:
            return True
        parent = links[parent]
        hops += 1
    return False


def reply_before(parent: object, links: dict[str, str | None], said: set[str],
                 reply_of: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """(stream, request id) of the latest response in the chain a `parentUuid` starts, passing over
    user messages: a message typed after an interrupted one (a user line, then `[Request interrupted
    by user]`, no response) follows the reply before them, and those user lines stay in its history."""
    m = message_of(parent, links, said)
    hops = 0
    while m is not None and m not in reply_of and hops < 10_000:
        m = message_of(links.get(m), links, said)
        hops += 1
    return reply_of.get(m) if m is not None else None
