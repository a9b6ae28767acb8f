"""Claude requests for the cause tests (issue 37), written once and driven down both paths a user
takes: the simulator a scenario runs (`Simulator.run`, blocks sized as the case says) and the replay
of a Messages API log of the same bodies (`replay(load(log))`, blocks sized from the logged usage),
on the Claude API, Bedrock and Vertex (a cloud's log line carries the URL it was sent to).

A request is a list of text blocks `(name, tokens, ttl)`; `name` starting with "tool" makes the block
a tool definition, "system" a block of `system`, every other name a content block of one user
message (given in that order, the order the API renders them); `extra` adds body fields (tool_choice). Each block's text
says its name and is as long as its size, so cl100k counts it near its size; a log sizes a block the
first time it appears from the request's observed total, exactly when it is the request's only new
block (`exact` checks that the replay's sizes are the case's)."""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, replace
from pathlib import Path

from conftest import PRICE_DATE

from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.model import Call, Outcome, Request
from prefixsim.replay import replay
from prefixsim.replay.run import ReplayRow
from prefixsim.sources import load
from prefixsim.wire.anthropic import render_anthropic

PLATFORMS = ("anthropic", "bedrock", "vertex")
#: The model ids each platform's URL names (the log's request carries no model on the clouds).
CLOUD_IDS = {"bedrock": {"claude-sonnet-4-5": "global.anthropic.claude-sonnet-4-5-20250929-v1%3A0",
                         "claude-opus-4-1": "us.anthropic.claude-opus-4-1-20250805-v1%3A0",
                         "claude-sonnet-3-7": "us.anthropic.claude-3-7-sonnet-20250219-v1%3A0"},
             "vertex": {"claude-sonnet-4-5": "claude-sonnet-4-5@20250929",
                        "claude-opus-4-1": "claude-opus-4-1@20250805",
                        "claude-sonnet-3-7": "claude-3-7-sonnet@20250219"}}
EPOCH = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.timezone.utc)
#: What a rendered content block's bytes hold before its text: the message's role on its first
#: block, then the block's type (wire/anthropic.py); a parting's byte offset counts them.
FIRST_BLOCK_HEAD = len(b'{"role":"user"}{"type":"text","text":"')
BLOCK_HEAD = len(b'{"type":"text","text":"')


@dataclass(frozen=True)
class Req:
    t: float
    blocks: tuple[tuple[str, int, str | None], ...]
    stream: str = "a"
    model: str = "claude-sonnet-4-5"
    extra: tuple[tuple[str, object], ...] = ()


def req(t: float, *blocks: tuple, stream: str = "a", model: str = "claude-sonnet-4-5", **extra: object) -> Req:
    """`blocks`: (name, tokens) or (name, tokens, ttl)."""
    return Req(t, tuple((b[0], b[1], b[2] if len(b) > 2 else None) for b in blocks), stream, model,
               tuple(extra.items()))


def _text(name: str, tokens: int) -> str:
    return " ".join([name] + ["w"] * max(tokens - 1, 0))


def _content(name: str, tokens: int, ttl: str | None) -> dict:
    c: dict = {"type": "text", "text": _text(name, tokens)}
    if ttl:
        c["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl == "1h" else {})}
    return c


def _tool(name: str, tokens: int, ttl: str | None) -> dict:
    t: dict = {"name": name, "description": _text(name, tokens), "input_schema": {"type": "object"}}
    if ttl:
        t["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl == "1h" else {})}
    return t


def body(r: Req, platform: str = "anthropic") -> dict:
    tools = [_tool(*b) for b in r.blocks if b[0].startswith("tool")]
    system = [_content(*b) for b in r.blocks if b[0].startswith("system")]
    user = [_content(*b) for b in r.blocks if not b[0].startswith(("system", "tool"))]
    out: dict = {"max_tokens": 10, "messages": [{"role": "user", "content": user}],
                 "metadata": {"user_id": r.stream}, **dict(r.extra)}
    if tools:
        out["tools"] = tools
    if system:
        out["system"] = system
    if platform == "anthropic":
        out["model"] = r.model
    else:
        out["anthropic_version"] = "bedrock-2023-05-31" if platform == "bedrock" else "vertex-2023-10-16"
    return out


def _url(platform: str, model: str) -> str | None:
    if platform == "bedrock":
        return f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{CLOUD_IDS['bedrock'][model]}/invoke"
    if platform == "vertex":
        return ("https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/"
                f"{CLOUD_IDS['vertex'][model]}:rawPredict")
    return None


def request_of(r: Req) -> Request:
    """The body rendered as the API renders it, each block of the size the case gives."""
    rendered = render_anthropic({**body(r), "model": r.model})
    assert len(rendered.blocks) == len(r.blocks)   # one block per text, in the case's order
    return replace(rendered, blocks=tuple(replace(b, tokens=n) for b, (_, n, _) in zip(rendered.blocks, r.blocks)))


def simulated(platform: str, reqs: list[Req], capacity: int | None = None) -> list[Outcome]:
    """The requests through the simulator a scenario runs, each block of the size the case gives."""
    calls = [Call(r.t, request_of(r), stream=r.stream, label=f"r{k}", ttft=1.0) for k, r in enumerate(reqs)]
    sim = Simulator(platform, tokenizer="approx", prices=PriceBook(when=PRICE_DATE), capacity=capacity)
    return sim.run(calls)


def log_of(tmp_path: Path, platform: str, reqs: list[Req]) -> Path:
    """A JSONL log of the bodies, each with a usage whose total is the request's size (all of it
    written: the observation does not enter the prediction, only the sizes)."""
    lines = []
    for k, r in enumerate(reqs):
        total = sum(n for _, n, _ in r.blocks)
        stamp = (EPOCH + dt.timedelta(seconds=r.t)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line: dict = {"id": f"r{k}", "timestamp": stamp, "request": body(r, platform),
                      "response": {"usage": {"input_tokens": 0, "cache_creation_input_tokens": total,
                                             "cache_read_input_tokens": 0, "output_tokens": 1}}}
        url = _url(platform, r.model)
        if url:
            line["url"] = url
        lines.append(json.dumps(line) + "\n")
    path = tmp_path / f"{platform}.jsonl"
    path.write_text("".join(lines))
    return path


def replayed(tmp_path: Path, platform: str, reqs: list[Req], exact: bool = True) -> list[ReplayRow]:
    """The log of the same bodies replayed; with `exact`, its blocks first checked to have the case's sizes."""
    path = log_of(tmp_path, platform, reqs)
    records = load(path)
    assert [rec.provider for rec in records] == [platform] * len(reqs)
    if exact:
        assert [[b.tokens for b in rec.call.request.blocks] for rec in records] == \
            [[n for _, n, _ in r.blocks] for r in reqs]
    rows = replay(records).rows
    return sorted(rows, key=lambda row: int(row.request_id[1:]))


def causes(platform: str, reqs: list[Req], tmp_path: Path | None = None, exact: bool = True) -> list[str]:
    """Each request's cause as printed, from the simulator; with `tmp_path`, from the replay too, which
    must print the same (the times excepted: a log's are the epoch's, a scenario's its own clock)."""
    sim = [str(o.cause) for o in simulated(platform, reqs)]
    if tmp_path is not None:
        rep = [str(row.cause) for row in replayed(tmp_path, platform, reqs, exact)]
        assert rep == sim, (rep, sim)
    return sim


def epoch(t: float) -> float:
    """A case's time as a replayed log has it (seconds since 1970)."""
    return (EPOCH + dt.timedelta(seconds=t)).timestamp()
