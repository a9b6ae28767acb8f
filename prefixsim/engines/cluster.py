"""Several cache nodes behind a router: each node's local hit rate against one pooled global cache.

The Mooncake paper (FAST'25, Figure 10) compares local caches, where a request reuses only the KV
of the node it lands on, with a global cache (Mooncake Store) that pools every node's memory, so any
node reuses any cached prefix. Here the local side is N block pools of `capacity` tokens each, fed
by a routing policy; the global side is one pool of N x `capacity` tokens that sees every request.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import xxhash

from prefixsim.engines.trace import Trace, TraceRequest, load_trace, replay_request, totals, trace_block_size
from prefixsim.engines.vllm import BlockPool
from prefixsim.errors import UserError

ROUTINGS = ("round_robin", "prefix_hash", "least_loaded")


class Router:
    """Picks a node per request.

    round_robin: request i goes to node i mod N. prefix_hash: a hash of the first `prefix_blocks`
    block keys picks the node, so requests sharing that prefix meet on one node. least_loaded: the
    node with the least prefill work so far (uncached tokens it computed; lowest index on ties),
    a time-free stand-in for shortest queue.
    """

    def __init__(self, routing: str, nodes: int, prefix_blocks: int = 2) -> None:
        if routing not in ROUTINGS:
            raise UserError(f"unknown routing {routing!r} (valid: {', '.join(ROUTINGS)})")
        if nodes < 1:
            raise UserError("need at least one node")
        self.routing, self.nodes, self.prefix_blocks = routing, nodes, prefix_blocks
        self.load = [0] * nodes
        self._next = 0

    def pick(self, req: TraceRequest) -> int:
        if self.routing == "round_robin":
            n, self._next = self._next, (self._next + 1) % self.nodes
            return n
        if self.routing == "prefix_hash":
            head = repr(req.keys[: self.prefix_blocks]).encode()
            return xxhash.xxh3_64_intdigest(head) % self.nodes
        return min(range(self.nodes), key=self.load.__getitem__)

    def done(self, node: int, computed_tokens: int) -> None:
        self.load[node] += computed_tokens


def _rates(t) -> dict:
    return {"requests": t.requests, "hit_rate": round(t.hit_rate, 6), "block_hit_rate": round(t.block_hit_rate, 6),
            "hit_tokens": t.hit_tokens}


def replay_cluster(trace: Trace | str | Path | Sequence[str | Path], nodes: int, capacity: int | None,
                   routing: str = "round_robin", eviction: str = "lru", block_size: int | None = None,
                   prefix_blocks: int = 2) -> dict:
    """Replay a trace on `nodes` local caches of `capacity` tokens each (None: unlimited) under
    `routing`, next to one global cache of nodes x capacity. Returns a JSON-ready dict with
    token- and block-weighted hit rates for both and per node."""
    if not isinstance(trace, Trace):
        trace = load_trace(trace)
    bs = trace_block_size(trace, block_size)
    per_node = None if capacity is None else capacity // bs
    pools = [BlockPool(per_node, eviction) for _ in range(nodes)]
    pooled = BlockPool(None if per_node is None else per_node * nodes, eviction)
    router = Router(routing, nodes, prefix_blocks)
    local: list[list] = [[] for _ in range(nodes)]
    shared = []
    for req in trace.requests:
        n = router.pick(req)
        r = replay_request(pools[n], req, bs)
        router.done(n, req.input_length - r.hit_tokens)
        local[n].append(r)
        shared.append(replay_request(pooled, req, bs))
    all_local = totals(r for rows in local for r in rows)
    return {"nodes": nodes, "routing": routing, "capacity_per_node_tokens": capacity, "block_size": bs,
            "eviction": eviction,
            "local": {**_rates(all_local), "per_node": [_rates(totals(rows)) for rows in local]},
            "global": _rates(totals(shared))}


def compare_routings(trace: Trace | str | Path | Sequence[str | Path], nodes: int, capacity: int | None,
                     eviction: str = "lru", block_size: int | None = None) -> list[dict]:
    """`replay_cluster` under every routing policy, for a local-vs-global table."""
    if not isinstance(trace, Trace):
        trace = load_trace(trace)
    return [replay_cluster(trace, nodes, capacity, r, eviction, block_size) for r in ROUTINGS]


def render_cluster_text(results: Sequence[dict]) -> str:
    """A table of local vs global token hit rates, one line per routing policy."""
    head = ("routing", "nodes", "capacity/node", "local hit", "global hit", "local blocks", "global blocks")
    body = []
    for r in results:
        cap = r["capacity_per_node_tokens"]
        body.append((r["routing"], str(r["nodes"]), "unlimited" if cap is None else f"{cap:,}",
                     f"{r['local']['hit_rate']:.2%}", f"{r['global']['hit_rate']:.2%}",
                     f"{r['local']['block_hit_rate']:.2%}", f"{r['global']['block_hit_rate']:.2%}"))
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) for c, w in zip(b, widths)) for b in body]
    lines.append("hit = hit tokens / input tokens (token-weighted); global = one pool of nodes x capacity")
    return "\n".join(lines)
