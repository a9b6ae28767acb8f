"""A study's designs as scenario files, played by the scenario builder and replayed by the runner
exactly as `prefixsim run` would: real rendered blocks (tool_use, placeholder results, directives,
tool loops), real breakpoints, write availability after the first token and sibling stagger.

This is the independent side of every check (verify.py): the closed forms assume a shape, the
builder makes one from the same parameters, and the runner decides who reads what by the rules.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from prefixsim.analysis.fork_vs_subagent import PACE, ForkShape, SubShape
from prefixsim.core.pricing import MTOK
from prefixsim.core.tokens import TokenCounter, get_tokenizer
from prefixsim.errors import UserError
from prefixsim.model import Outcome
from prefixsim.providers.registry import claude_platform
from prefixsim.scenario.loader import load_runs
from prefixsim.scenario.simulate import simulate

#: The studies size text with the seeds' estimate (4 characters a token): exact sizes, no BPE cost.
TOKENIZER = "approx"


@dataclass
class Played:
    """One variant's replayed requests, by stream in the order the builder made them."""

    outcomes: list[Outcome]
    rates: object   # the runner's Rates for the model (tiered)

    def streams(self, skip: str = "main") -> list[list[Outcome]]:
        by: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            if o.call.stream != skip:
                by.setdefault(o.call.stream, []).append(o)
        return list(by.values())

    def main(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.call.stream == "main"]

    def input_cost(self, outcomes: list[Outcome]) -> Decimal:
        """What `run` charges for these requests, less their output tokens."""
        r = self.rates
        return sum((o.cost_usd - o.usage.output_tokens * r.output.at(o.usage.prompt_tokens) / MTOK  # type: ignore[attr-defined]
                    for o in outcomes), Decimal(0))


_COUNTER = TokenCounter(get_tokenizer(TOKENIZER))


def breakpoint_sizes(o: Outcome) -> list[int]:
    """Prompt tokens up to each breakpoint of the request (cumulative), in order."""
    out, total = [], 0
    for b in o.call.request.blocks:
        total += _COUNTER.count(b)
        if b.breakpoint:
            out.append(total)
    return out


class TooLarge(UserError):
    """The scenario builder refuses the design (its scale limits): the study cannot be checked."""


def play(doc: dict, price_date=None) -> dict[str, Played]:
    """Write the scenario document to a temporary file, load it as `prefixsim run` does and replay
    every variant; {variant name: Played}."""
    with tempfile.TemporaryDirectory(prefix="prefixsim-study-") as tmp:
        path = Path(tmp) / f"{doc['name']}.yaml"
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")   # JSON is YAML
        out = {}
        try:
            runs = load_runs(str(path))
        except UserError as e:
            why = e.message.split("; lower")[0]
            raise TooLarge(f"{doc['name'][len('study-'):]}: too large to check the closed form against the scenario "
                           f"runner (the builder's limit: {why}); lower children, turns or sizes") from None
        for run in runs:
            res = simulate(run, price_date)
            model = next(iter(res.rates))
            out[run.variant] = Played(list(res.outcomes), res.rates[model])
        return out


def common(model: str, ttl: str, ttft: float, sheet: dict | None, name: str) -> dict:
    """Settings every study scenario shares: Anthropic's rules on the Claude platform the model's id
    names (a Bedrock id runs Bedrock's, as `prefixsim run` would), the study's TTL on every breakpoint
    (an application marking its own requests, not Claude Code's 5m-for-children preset)."""
    doc = {"name": name, "provider": claude_platform(model), "model": model, "tokenizer": TOKENIZER,
           "breakpoints": ["system", "last_message"], "ttl": ttl, "ttft": ttft}
    if sheet:
        doc["prices"] = sheet
    return doc


# --- fork vs sub-agent -----------------------------------------------------------------------------
def loop_sizes(growth: int) -> dict:
    """One tool-loop turn of `growth` tokens: a reply (text + tool_use) and the tool's result. The
    parent's history is made of the same turns, so it comes in whole turns of `growth`."""
    assistant, tool_use = max(1, growth // 5), max(1, growth // 10)
    return {"user": 50, "assistant": assistant, "tool_use": tool_use,
            "tool_result": max(1, growth - assistant - tool_use)}


def fork_vs_subagent(model: str, f, history: int, sheet: dict | None = None) -> dict:
    """The parent's turn (which writes its prompt), then N fork children or N sub-agents, each a
    K-request loop, siblings `stagger` apart: a scenario with the variants `fork` and `sub-agent`."""
    turns = round(history / f.growth)
    doc = common(model, f.ttl, f.ttft, sheet, "study-fork-vs-subagent")
    doc.update(pace=PACE, output=1,
               base={"system": f.parent_static, "history": {"turns": turns, **loop_sizes(f.growth)}})
    parent = {"request": {"label": "parent turn", "assistant": 0, "tool_use": 0}}
    doc["variants"] = [
        {"name": "fork", "timeline": [parent, {"fork": {
            "label": "fork", "children": f.children, "directive": f.directive, "tool_call": f.call,
            "stagger": f.stagger, "turns": f.turns, "join": False}}]},
        {"name": "sub-agent", "timeline": [parent, {"subagent": {
            "label": "sub", "children": f.children, "system": f.sub_static, "tools": [], "task": f.task,
            "stagger": f.stagger, "turns": f.turns, "join": False}}]}]
    return doc


def fork_scenario_text(model: str, designs: list, labels: list[str], history: int, sheet: dict | None = None) -> str:
    """The designs at `history` tokens as one scenario file for `prefixsim run`: variants `fork, LABEL`
    and `sub-agent, LABEL`, each with its own sizes. The children's streams are named fork.* and sub.*;
    the `main` stream is the parent's own turn, which the study leaves out."""
    out = None
    for f, label in zip(designs, labels):
        doc = fork_vs_subagent(model, f, history, sheet)
        if out is None:
            out = {k: v for k, v in doc.items() if k not in ("variants", "base", "ttl", "ttft")}
            out["name"] = "fork-vs-subagent-study"
            out["description"] = (f"The fork-vs-subagent study's designs at {history:,} tokens of parent history, as "
                                  "its check replays them. The study counts the fork.* and sub.* streams' input "
                                  "cost: not `main` (the parent's turn) and not output tokens.")
            out["variants"] = []
        for v in doc["variants"]:
            out["variants"].append({"name": f"{v['name']}, {label}", "ttl": doc["ttl"], "ttft": doc["ttft"],
                                    "base": doc["base"], "timeline": v["timeline"]})
    return json.dumps(out, indent=1) + "\n"


def fork_shapes(played: dict[str, Played]):
    """The sizes the builder made, read off the requests: (ForkShape, SubShape)."""
    fork, sub = played["fork"], played["sub-agent"]
    children = fork.streams()
    static, shared = breakpoint_sizes(children[0][0])[:2]
    lengths = lambda streams: tuple(tuple(o.usage.prompt_tokens for o in s) for s in streams)  # noqa: E731
    fs = ForkShape(static, fork.main()[-1].usage.prompt_tokens, shared, lengths(children))
    subs = sub.streams()
    return fs, SubShape(breakpoint_sizes(subs[0][0])[0], lengths(subs))


def _stream(played: Played, name: str) -> list[Outcome]:
    return [o for o in played.outcomes if o.call.stream == name]


# --- stagger -------------------------------------------------------------------------------------------
def stagger(model: str, f, delay: float, sheet: dict | None = None) -> dict:
    """N sub-agents of one type (a shared system prompt of `shared` tokens, tasks of `task`), one
    request each, launched `delay` seconds apart from t = 0."""
    doc = common(model, f.ttl, f.ttft, sheet, "study-stagger")
    doc["timeline"] = [{"subagent": {"label": "child", "children": f.children, "system": f.shared, "tools": [],
                                     "task": f.task, "stagger": delay, "turns": 1, "join": False}}]
    return doc


def stagger_sizes(played: Played) -> tuple[int, list[int]]:
    kids = played.streams()
    return breakpoint_sizes(kids[0][0])[0], [s[0].usage.prompt_tokens for s in kids]


# --- ttl and minimum: one prefix, re-sent -------------------------------------------------------------
def resent(model: str, ttl: str, prefix: int, gaps: list[float], sheet: dict | None = None,
           name: str = "study-ttl") -> dict:
    """A `prefix`-token system prompt with a breakpoint (and none after it), sent once and then once
    after each gap (seconds) in a short conversation."""
    doc = common(model, ttl, 0.0, sheet, name)
    doc.update(breakpoints=["system"], pace=0, output=1, base={"system": prefix})
    turn = {"user": 20, "assistant": 20, "tool_use": 0}
    doc["timeline"] = [{"request": turn}] + [{"request": {**turn, "after": g}} for g in gaps]
    return doc


def resent_sizes(played: Played) -> tuple[int, list[int]]:
    main = played.main()
    return breakpoint_sizes(main[0])[0], [o.usage.prompt_tokens for o in main]


# --- invalidation ------------------------------------------------------------------------------------
CHANGES = {"tools": {"reorder_tools": "reverse"}, "messages": {"set_tool_choice": {"type": "any"}}}


def invalidation(model: str, f, kind: str, turn: int, sheet: dict | None = None) -> dict:
    """A session of `turn` requests (tools split over 4 definitions, a system prompt, loop turns of
    `growth`); variant `changed` makes the change just before the last request, keeping every size:
    the tools reversed, the system prompt replaced by one of the same size, or tool_choice set."""
    doc = common(model, f.ttl, 1.0, sheet, "study-invalidation")
    doc.update(output=1, base={"tools": {"count": 4, "size": max(46, f.tools // 4)}, "system": f.system,
                               "history": {"turns": 0, **loop_sizes(f.growth)}})
    change = CHANGES.get(kind) or {"edit_system": {"replace": f.system}}
    head = [{"request": {"turns": turn - 1}}] if turn > 1 else []
    doc["variants"] = [{"name": "unchanged", "timeline": [*head, {"request": {}}]},
                       {"name": "changed", "timeline": [*head, change, {"request": {}}]}]
    return doc


def invalidation_sizes(played: dict[str, Played]) -> tuple[int, int, int, int, object]:
    """(static, previous prompt, last prompt) of the unchanged session, the changed last prompt (the
    new system text shifts the filler text after it by a few tokens), and the extra the runner
    charges for the changed session."""
    same, changed = played["unchanged"].main(), played["changed"].main()
    before = same[-2].usage.prompt_tokens if len(same) > 1 else 0
    extra = played["changed"].input_cost(changed) - played["unchanged"].input_cost(same)
    return (breakpoint_sizes(same[-1])[0], before, same[-1].usage.prompt_tokens, changed[-1].usage.prompt_tokens,
            extra)
