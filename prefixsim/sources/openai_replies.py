"""A log of OpenAI-format requests that kept each request's usage but not its response: the reply a
request generated is read from the next request of its stream, which sends it back (`openai_log`,
`openai_cassette`)."""
from __future__ import annotations

from dataclasses import replace

from prefixsim.model import Block
from prefixsim.providers.tables import canonical_model
from prefixsim.sources.record import Record

#: Models whose Chat replies start with reasoning the client never sends back (OpenAI's reasoning
#: models): a reply inferred from the next request would not be what the cache holds.
_HIDDEN_REASONING = ("o1", "o3", "o4", "gpt-5", "gpt-6")


def inferred_outputs(records: list[Record]) -> list[Record]:
    """A log that kept the usage but not the response: the reply each request generated is the
    assistant message the next request of its stream sends back right after it, when there is one
    (its size: the completion tokens). Without it the cache would seem to stop at the prompt."""
    last: dict[str, int] = {}
    out = list(records)
    for k, rec in enumerate(out):
        i = last.get(rec.call.stream)
        last[rec.call.stream] = k
        if i is None:
            continue
        prev = out[i]
        pr, req = prev.call.request, rec.call.request
        n = len(pr.blocks)
        if (pr.output or prev.observed is None or not prev.observed.output_tokens or len(req.blocks) <= n
                or canonical_model(pr.model) != canonical_model(req.model)
                or (prev.provider == "openai" and canonical_model(pr.model).startswith(_HIDDEN_REASONING))
                or not req.blocks[n].data.startswith(b'{"role":"assistant"')
                or any(a.key != b.key for a, b in zip(pr.blocks, req.blocks[:n]))):
            continue
        echo = req.blocks[n]
        reply = Block(echo.layer, echo.data, echo.path, tokens=prev.observed.output_tokens, sees=echo.sees)
        out[i] = replace(prev, call=replace(prev.call, request=replace(pr, output=(reply,))))
    return out
