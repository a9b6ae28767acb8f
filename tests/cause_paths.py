"""Shared helpers of the cause tests (issue 37): one conversation of OpenAI-format bodies driven down
both paths a user meets, so that a cause is pinned in each.

- the scenario path: the bodies rendered (`render_openai`) and sized by the tokenizer, stepped through
  a `Simulator` with the provider's policy, as `prefixsim run` steps a scenario's calls;
- the replay path: the same bodies written to a log whose usage is what the scenario path computed,
  loaded and replayed (`prefixsim replay`), with the blocks sized from that usage.

Sizes are set in tokens: `sized(model, n)` gives a user text that makes a body exactly `n` tokens.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.model import Call, Cause
from prefixsim.providers.registry import get_policy
from prefixsim.replay import replay
from prefixsim.replay.whatif import WhatIf
from prefixsim.sources import load
from prefixsim.sources.openai_log import render_openai
from prefixsim.wire.openai import encoding_for

START = dt.datetime(2026, 11, 2, 9, 0, 0, tzinfo=dt.timezone.utc)
SYSTEM = "You answer questions about the document the user gives. Be brief and exact."


@dataclass
class Step:
    t: float
    messages: list[dict]
    stream: str = "main"
    model: str = ""    # "" = the conversation's
    event: str | None = None   # a scenario's timeline event (compaction): the scenario path only


@dataclass
class Conversation:
    """Bodies of one model sent to `uri` (the host names the provider, "" = by the model's family)."""

    provider: str
    model: str
    uri: str = ""
    steps: list[Step] = field(default_factory=list)

    def send(self, t: float, *messages: dict, stream: str = "main", model: str = "",
             event: str | None = None) -> "Conversation":
        self.steps.append(Step(t, list(messages), stream, model, event))
        return self

    def body(self, s: Step) -> dict:
        return {"model": s.model or self.model, "messages": s.messages}


def system(text: str = SYSTEM) -> dict:
    return {"role": "system", "content": text}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


def sized(model: str, n: int, *before: dict, head: str = "Q") -> dict:
    """A user message that makes `before + [it]` exactly `n` prompt tokens (ValueError if `n` is too
    small for the frame): " cache" is one token in o200k_base and cl100k_base alike."""
    enc = get_tokenizer(encoding_for(model))
    base = _prompt(enc, [*before, user(head)])
    if n < base:
        raise ValueError(f"{n} < {base}")
    msg = user(head + " cache" * (n - base))
    assert _prompt(enc, [*before, msg]) == n, (n, _prompt(enc, [*before, msg]))
    return msg


def _prompt(enc, messages: list[dict]) -> int:
    c = TokenCounter(enc)
    return sum(c.count(b) for b in render_openai({"model": "gpt-4o", "messages": messages}).blocks)


def scenario_sim(provider: str, model: str, store_capacity: int | None = None, also: tuple[str, ...] = (),
                 **policy_options) -> Simulator:
    """The scenario path's simulator; a price sheet for the model, which genai-prices may not price
    (the causes do not depend on prices)."""
    policy = get_policy(provider, listed_only=False, **policy_options)
    sheet = {m: {"input": 1.0, "output": 2.0, "cache_read": 0.1, "cache_write_5m": 1.25, "cache_write_1h": 2.0}
             for m in (model, *also)}
    return Simulator(provider, tokenizer=encoding_for(model), policy=policy, prices=PriceBook(sheet),
                     capacity=store_capacity)


def scenario(conv: Conversation, store_capacity: int | None = None, **policy_options) -> tuple[list[Cause], list]:
    """Every step's cause through the scenario path, and the outcomes; `store_capacity`: the store's,
    in tokens (None: unbounded); `policy_options`: a serving engine's settings (capacity, block_size)."""
    sim = scenario_sim(conv.provider, conv.model, store_capacity, tuple(s.model for s in conv.steps if s.model),
                       **policy_options)
    outs = [sim.step(Call(t=s.t, request=render_openai(conv.body(s)), stream=s.stream, event=s.event))
            for s in conv.steps]
    return [o.cause for o in outs], outs


def log_of(conv: Conversation, outs: list, path: Path) -> Path:
    """The conversation as an OpenAI-format log whose usage is what the scenario path computed."""
    lines = []
    for i, (s, o) in enumerate(zip(conv.steps, outs)):
        stamp = (START + dt.timedelta(seconds=s.t)).isoformat().replace("+00:00", "Z")
        lines.append({"id": f"r{i}", "timestamp": stamp, "uri": conv.uri, "request": conv.body(s),
                      "response": {"model": s.model or conv.model, "usage": {
                          "prompt_tokens": o.usage.prompt_tokens, "completion_tokens": 0,
                          "prompt_tokens_details": {"cached_tokens": o.usage.cache_read}}}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def replayed(conv: Conversation, outs: list, tmp_path: Path) -> tuple[list[Cause], list]:
    """Every step's cause on replay of the log of the same bodies, and the rows."""
    # a serving engine replays the log as a what-if (`prefixsim replay --provider vllm`)
    variant = WhatIf(provider=conv.provider) if conv.provider in ("vllm", "sglang") else WhatIf()
    rows = replay(load(log_of(conv, outs, tmp_path / "log.jsonl")), variant).rows
    assert [r.provider for r in rows] == [conv.provider] * len(rows)
    return [r.cause for r in rows], rows


def both(conv: Conversation, tmp_path: Path, same_reads: bool = True) -> tuple[list[Cause], list[Cause], list, list]:
    """Causes in the scenario path and on replay, with the outcomes and rows. `same_reads`: the
    replay predicts what the scenario computed, request by request (False where a read ends at a
    block boundary that the two paths size a few tokens apart: the scenario path counts a block's
    rendering, the replay what the model sees)."""
    causes, outs = scenario(conv)
    again, rows = replayed(conv, outs, tmp_path)
    if same_reads:
        assert [r.predicted.cache_read for r in rows] == [o.usage.cache_read for o in outs]
    return causes, again, outs, rows
