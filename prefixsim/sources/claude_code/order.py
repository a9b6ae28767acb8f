"""The order of a transcript's calls when its timestamps cannot be trusted: causality first."""
from __future__ import annotations

from dataclasses import replace

from prefixsim.sources.claude_code.raw import Raw, _iso

#: The least time from a request's start to its response (and so to its cache write being readable).
MIN_TTFT = 0.001


def causal(calls: list[Raw]) -> list[Raw]:
    """Causality before timestamps: a stream sends its requests one after another, and a request
    that continues the conversation holds the previous response in its prompt, so that response had
    begun (and its cache write was readable) no later than the request started. Where a transcript's
    stamps repeat or run backwards (Claude Code 1.0.5x-1.0.11x rewrote runs of lines with one stamp,
    equal to or later than the requests that follow), the order of the lines decides: each request
    starts no earlier than the one before it in its stream, and a response is readable no later than
    the next request that continues from it (a rewind continues from an earlier reply: not capped).
    Calls come in file order; stamps that already run forward are left as they are."""
    last: dict[str, int] = {}
    for k, r in enumerate(calls):
        j = last.get(r.stream)
        last[r.stream] = k
        if j is None:
            continue
        prev = calls[j]
        start = max(r.start, prev.start + MIN_TTFT)
        if start != r.start:
            r = calls[k] = replace(r, start=start, response=max(r.response, start), timestamp=_iso(start))
        if r.fork is None and prev.response > r.start:
            calls[j] = replace(prev, response=max(prev.start + MIN_TTFT, r.start))
    return calls
