"""Work and memory follow the traffic, not its square (issue 12, "Scale"). No timings: the tests
count what the code does, which is exact at any size.

- Interleaved conversations: a request's lookups in the store's logs (reads applied to its entries,
  first writes it learns of) must not grow with the number of other conversations in flight.
- Fork children: N children each send N placeholder results; the blocks, digests and running totals
  the children hold must be the same objects, so distinct objects grow with N, not N x N.
"""
from pathlib import Path

from prefixsim.model import Block, Call, Layer, Request
from prefixsim.pricing import PriceBook
from prefixsim.runner import Simulator

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


def fork_objects(tmp_path: Path, n: int) -> tuple[int, int, int]:
    """Distinct block, digest and running-total objects held once a fork with `n` children ran."""
    from prefixsim.api import load_json_file
    from prefixsim.scenario.builder import Timeline
    from prefixsim.scenario.loader import load_runs

    path = tmp_path / f"fork{n}.yaml"
    path.write_text(FORK.format(n=n))
    run = load_runs(str(path))[0]
    calls = Timeline(run.settings, run.base_dir, lambda rel: load_json_file(run, rel)).play()
    sim = Simulator("anthropic", tokenizer="approx", prices=SHEET)
    sim.run(calls)
    children = [c for c in calls if c.parent]
    assert len(children) == n and all(len(c.request.blocks) >= n for c in children)   # N placeholders each
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
