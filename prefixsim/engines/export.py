"""Write any replay as a Mooncake trace, so kvcache-simulator, llmtrafficlens, AIPerf or SGLang's
bench_serving can replay what prefixsim replayed.

Each line is `{timestamp (ms), input_length, output_length, hash_ids}`; hash id i names block i of
`block_size` tokens together with everything before it (the last block may be partial), and ids
are numbered 0, 1, 2, ... in order of first appearance, as in the published traces.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from prefixsim.engines.tokens import BlockTokenIds
from prefixsim.engines.trace import MOONCAKE_BLOCK, TraceRequest
from prefixsim.engines.vllm import NONE_HASH, hash_block
from prefixsim.io.fsutil import open_atomic
from prefixsim.model import Call


def _chain(ids: list[int], block_size: int, namespace: str) -> list[bytes]:
    """Chained hashes of every block including a partial tail; the namespace (model, workspace,
    salt) enters the first block, so different models never share ids."""
    first = b"\x00ns:" + namespace.encode()
    out: list[bytes] = []
    parent = NONE_HASH
    for i in range(0, len(ids), block_size):
        parent = hash_block(parent, ids[i:i + block_size], first if i == 0 else b"")
        out.append(parent)
    return out


def export_mooncake(calls_or_rows: Iterable[Any], path: str | Path, block_size: int = MOONCAKE_BLOCK,
                    encoding: str = "cl100k_base") -> int:
    """Write a replay as a Mooncake JSONL trace at `path`: calls, anything carrying a `.call`
    (runner outcomes, source records), trace requests, or Mooncake dicts.

    Calls are tokenized with `encoding` (blocks with a fixed size get content-derived ids), so their
    hash ids share a leading run exactly where the prompts share leading tokens. Timestamps are ms
    since the earliest item. Returns the number of lines written.
    """
    tokens = BlockTokenIds(encoding)
    remap: dict[Any, int] = {}
    items: list[tuple[float, int, int, list[Any]]] = []
    for item in calls_or_rows:
        item = getattr(item, "call", item)  # an Outcome or a sources Record wraps its Call
        if isinstance(item, Call):
            req = item.request
            ids = tokens.request_ids(req)
            ns = "\0".join((req.model, req.workspace, req.cache_salt))
            items.append((item.t, len(ids), item.output_tokens, list(_chain(ids, block_size, ns))))
        elif isinstance(item, TraceRequest):
            items.append((item.timestamp, item.input_length, item.output_length, list(item.keys)))
        else:
            items.append((float(item["timestamp"]) / 1000.0, int(item["input_length"]),
                          int(item.get("output_length", 0)), list(item["hash_ids"])))
    t0 = min((t for t, *_ in items), default=0.0)
    with open_atomic(path) as fh:   # an interrupted export leaves the previous file whole
        for t, n_in, n_out, keys in sorted(items, key=lambda x: x[0]):
            hash_ids = [remap.setdefault(k, len(remap)) for k in keys]
            fh.write(json.dumps({"timestamp": round((t - t0) * 1000), "input_length": n_in,
                                 "output_length": n_out, "hash_ids": hash_ids}) + "\n")
    return len(items)
