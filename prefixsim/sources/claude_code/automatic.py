"""Claude Code served by a provider whose cache is automatic (docs/rules.md#claude-code-on-an-automatic-cache).

With `ANTHROPIC_BASE_URL` at DeepSeek's Anthropic endpoint, Claude Code logs `deepseek-v4-pro`, and
the cache is DeepSeek's: no breakpoints, every prompt cached with the reply it generated (in 64-token
units), nothing reported as written. The breakpoint calibration (calibrate.py) reads a request's
cached size from its read and write, which here lag one request behind; this rebuild takes each
request's prompt as the previous one of its stream, then that one's reply when the prompt grew by at
least the reply, then what is new. A prompt shorter than the previous one (a compaction, a rewind)
starts the stream's history afresh. The provider's own rules then decide the read.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from prefixsim.model import Block, Call, Layer, Request
from prefixsim.providers.registry import family_provider
from prefixsim.sources.record import Record

#: Providers whose cache is automatic (prompt and reply kept, no breakpoints): a Claude Code transcript
#: of one of their models is rebuilt here.
AUTOMATIC = frozenset({"deepseek"})


def served_automatically(model: str) -> str | None:
    """The provider an automatic cache of which serves `model`, else None (Claude's breakpoint rules)."""
    p = family_provider(model, strict=True)
    return p if p in AUTOMATIC else None


@dataclass
class _Stream:
    blocks: list[Block] = field(default_factory=list)
    size: int = 0
    reply: Block | None = None
    epoch: int = 0


class Automatic:
    """Records of one automatic provider's Claude Code calls, given in start order."""

    def __init__(self) -> None:
        self.streams: dict[str, _Stream] = {}

    def step(self, r, provider: str) -> Record:
        u = r.usage
        size = u.input_tokens + u.cache_read + u.cache_creation
        st = self.streams.setdefault(r.stream, _Stream())
        if st.blocks and size >= st.size:
            blocks = list(st.blocks)
            grown = size - st.size
            if st.reply is not None and grown >= (st.reply.tokens or 0):
                blocks.append(st.reply)
                grown -= st.reply.tokens or 0
        else:   # the stream's first request, or a prompt shorter than the last: its history anew
            st.epoch += 1 if st.blocks else 0
            blocks, grown = [], size
        if grown:
            blocks.append(Block(Layer.MESSAGES, f"cc-auto|{r.stream}|{st.epoch}|{r.request_id}".encode(),
                                f"messages added before {r.request_id}", tokens=grown))
        st.blocks, st.size = blocks, size
        reply = (Block(Layer.MESSAGES, f"cc-auto-reply|{r.request_id}".encode(), f"{r.request_id} reply",
                       tokens=u.output_tokens),) if u.output_tokens else ()
        st.reply = reply[0] if reply else None
        request = Request(model=r.model, blocks=tuple(blocks), output=reply)
        call = Call(t=r.start, request=request, stream=r.stream, label=r.request_id, output_tokens=0,
                    ttft=max(r.response - r.start, 0.001), parent=r.parent,
                    event="compaction" if r.event == "compaction" else None)
        return Record(call, r.request_id, r.timestamp, u, r.path, r.line, output_final=False,
                      main=r.kind == "main", provider=provider, timed=True, generated=r.generated)


def by_provider(ordered: Iterable, breakpoints: Callable[..., Record]) -> Iterator[Record]:
    """Each call as a Record: under Claude's breakpoint calibration (`breakpoints`), or rebuilt here when
    its model is another provider's with an automatic cache."""
    auto = Automatic()
    for r in ordered:
        p = served_automatically(r.model)
        yield breakpoints(r) if p is None else auto.step(r, p)
