"""Work and memory follow the traffic, not its square (issue 12, "Scale"). No timings: the tests
count what the code does, which is exact at any size.

- Interleaved conversations: a request's lookups in the store's logs (reads applied to its entries,
  first writes it learns of) must not grow with the number of other conversations in flight.
- Fork children: N children each send N placeholder results; the blocks, digests and running totals
  the children hold must be the same objects, so distinct objects grow with N, not N x N; and the
  containers holding them (request block tuples, digest and running-total lists) must share the
  common prefix by reference, so the references held grow with N too (issue 12, fork memory).
"""
from pathlib import Path

import pytest

from prefixsim.core.pricing import PriceBook
from prefixsim.core.simulator import Simulator
from prefixsim.model import Block, Call, Layer, Request

MODEL = "claude-sonnet-4-5"
SHEET = PriceBook({MODEL: {"input": 3, "output": 15, "cache_read": 0.3, "cache_write_5m": 3.75,
                           "cache_write_1h": 6}})


def interleaved(conversations: int, turns: int) -> list[Call]:
    """`conversations` sessions on one gateway, each growing by a turn a request, all in flight at once
    (round robin, 20 s apart within a conversation): shared tools and system prompt, Claude Code
    breakpoints (end of system, newest block)."""
    tools = Block(Layer.TOOLS, b"tools", "tools[0]", tokens=1500)
    system = Block(Layer.SYSTEM, b"system", "system[0]", "5m", tokens=2500)
    history: dict[int, list[Block]] = {c: [] for c in range(conversations)}
    calls = []
    for k in range(turns):
        for c in range(conversations):
            msgs = history[c]
            if msgs:
                msgs[-1] = msgs[-1].with_breakpoint(None)
            msgs.append(Block(Layer.MESSAGES, b"conv %d turn %d" % (c, k), f"messages[{k}]", "5m", tokens=400))
            t = 20.0 * k + c * 20.0 / conversations
            calls.append(Call(t, Request(MODEL, (tools, system, *msgs)), stream=f"user-{c}", output_tokens=50))
    return calls


def log_work(conversations: int, turns: int = 6) -> float:
    sim = Simulator("anthropic", tokenizer="approx", prices=SHEET)
    calls = interleaved(conversations, turns)
    outs = sim.run(calls)
    # every conversation reads its own history from its second request on (a live prefix per request)
    assert all(o.usage.cache_read == 4000 + 400 * (i // conversations) for i, o in enumerate(outs)
               if i >= conversations)
    return sim.store.scanned / len(calls)


def test_interleaved_conversations_cost_each_other_nothing():
    # Before: each request looked through every other conversation's reads and first writes since its
    # previous one (~3 x the conversations in flight: 60 and 240 per request here).
    small, large = log_work(20), log_work(80)
    assert small <= 3 and large <= 3, (small, large)


FORK = """name: fork-scale
model: claude-sonnet-4-5
tokenizer: cl100k_base
breakpoints: claude_code
base:
  tools: {{count: 3, size: 100}}
  system: 200
  history: {{turns: 2, user: 20, assistant: 20, tool_use: 20, tool_result: 40}}
timeline:
  - request: {{turns: 1}}
  - fork: {{children: {n}, directive: 10, tool_call: 10, turns: 1, join: false}}
"""


def fork_run(tmp_path: Path, n: int, turns: int = 1) -> tuple[list[Call], Simulator]:
    """The calls of a fork with `n` children of `turns` requests each, and the simulator that ran them."""
    from prefixsim.scenario.builder import Timeline
    from prefixsim.scenario.loader import load_json_file, load_runs

    path = tmp_path / f"fork{n}-{turns}.yaml"
    path.write_text(FORK.format(n=n).replace("turns: 1, join", f"turns: {turns}, join"))
    run = load_runs(str(path))[0]
    calls = Timeline(run.settings, run.base_dir, lambda rel: load_json_file(run, rel)).play()
    sim = Simulator("anthropic", tokenizer="approx", prices=SHEET)
    sim.run(calls)
    children = [c for c in calls if c.parent]
    assert len(children) == n and all(len(c.request.blocks) >= n for c in children)   # N placeholders each
    return calls, sim


def fork_objects(tmp_path: Path, n: int) -> tuple[int, int, int]:
    """Distinct block, digest and running-total objects held once a fork with `n` children ran."""
    calls, sim = fork_run(tmp_path, n)
    views = sim._last.values()
    return (len({id(b) for c in calls for b in c.request.blocks}),
            len({id(d) for v in views for d in v.digests[:v.n]}),
            len({id(x) for v in views for x in v.cum[:v.n]}))


def test_fork_children_share_what_they_have_in_common(tmp_path):
    # Before: every child rendered, hashed and summed its own N placeholders (n x n objects each).
    small, large = fork_objects(tmp_path, 40), fork_objects(tmp_path, 80)
    for a, b in zip(small, large):
        # 40 more children: a few objects per child (its directive, the blocks its breakpoints mark, a
        # tool_use and a placeholder more in the shared part), never 80 x 80 - 40 x 40 = 4,800
        assert b - a <= 40 * 8, (small, large)


def held(seqs) -> int:
    """References held by the containers of `seqs`, each container counted once: a plain tuple or
    list holds its length; a sequence sharing a prefix (`base`, `tail`) holds its tail, and its
    base once however many share it."""
    seen: set[int] = set()
    total = 0
    for s in seqs:
        for part in ((s.base, s.tail) if hasattr(s, "base") else (s,)):
            if id(part) not in seen:
                seen.add(id(part))
                total += len(part)
    return total


def fork_references(tmp_path: Path, n: int, turns: int) -> tuple[int, int, int, int]:
    """References held by the requests' block tuples and by the runner's digest, running-total and
    known-position lists once a fork with `n` children of `turns` requests ran."""
    calls, sim = fork_run(tmp_path, n, turns)
    views = list(sim._last.values())
    return (held(c.request.blocks for c in calls), held(v.digests for v in views),
            held(v.cum for v in views), held(v.known for v in views))


@pytest.mark.parametrize("turns", [1, 2])
def test_fork_children_share_their_common_prefix_by_reference(tmp_path, turns):
    # Before: every child's request held its own tuple of the parent's history, the spawning call and
    # the N placeholders, and its view a digest and a running-total list as long: 40 more children
    # held about 80 x (80 + 2 x 80) - 40 x (40 + 2 x 40) ~ 14,000 more references in each.
    small, large = fork_references(tmp_path, 40, turns), fork_references(tmp_path, 80, turns)
    for a, b in zip(small, large):
        # the shared base grows by 2 references a child (a tool_use and a placeholder), each child
        # holds its own few (directive, its replies, the blocks its breakpoints mark) per request
        assert b - a <= 40 * 8 * turns, (small, large)


def test_fork_children_refer_to_one_copy_of_the_prefix(tmp_path):
    calls, sim = fork_run(tmp_path, 30)
    children = [c for c in calls if c.parent]
    # the first child's request is the one the others refer to; its views' lists likewise
    first = children[0].request.blocks
    assert all(c.request.blocks.base is first for c in children[1:])
    assert all(len(c.request.blocks.tail) <= 2 for c in children[1:])   # the directive (and its marker)
    views = [sim._last[c.stream] for c in children[1:]]
    for lists in ([v.digests for v in views], [v.cum for v in views]):
        assert len({id(x.base) for x in lists}) == 1 and all(len(x.tail) <= 2 for x in lists)
    # a plain copy would do as well: equal to the tuple it stands for, item by item
    assert children[-1].request.blocks == tuple(children[-1].request.blocks)


@pytest.mark.parametrize("provider", ["anthropic", "prefix"])
def test_sharing_changes_no_outcome(tmp_path, monkeypatch, provider):
    # The same fork (children of two turns, so later turns build on shared lists) with sharing and
    # with every sequence a plain copy: identical usage, costs and causes, request by request.
    import prefixsim.core.view as incremental
    import prefixsim.scenario.builder as builder
    from prefixsim.core import sharedseq

    def outcomes():
        calls, _ = fork_run(tmp_path, 70, 2)
        sim = Simulator(provider, tokenizer="approx", prices=SHEET)
        return calls, [(o.usage, o.cost_usd, str(o.cause), o.read_blocks) for o in sim.run(calls)]

    shared_calls, shared = outcomes()
    assert any(isinstance(c.request.blocks, sharedseq.PrefixTuple) for c in shared_calls)
    flat = lambda items, like=None: tuple(items)   # noqa: E731
    monkeypatch.setattr(builder, "share_tuple", flat)
    monkeypatch.setattr(incremental, "share_list", lambda src, k, across=True: list(src)[:k])
    monkeypatch.setattr(incremental, "cut_known", lambda known, below, across=True: [j for j in known if j < below])
    flat_calls, plain = outcomes()
    assert not any(isinstance(c.request.blocks, sharedseq.PrefixTuple) for c in flat_calls)
    assert shared == plain
