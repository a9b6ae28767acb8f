"""Engine traces: Mooncake and Alibaba bailian block-hash traces, replayed through a block pool.

Mooncake (FAST'25, `conversation_trace.jsonl`): `{timestamp (ms), input_length, output_length,
hash_ids}`, each hash id naming a 512-token block together with everything before it. Bailian
(`qwen-bailian-usagetraces-anon`): adds `chat_id`, `parent_chat_id` (-1: a new conversation),
`turn` and `type`, with 16-token blocks and timestamps in seconds. The ids are already chained
block hashes, so they go straight into vLLM's block pool (`vllm.BlockPool`).

Counting follows docs/rules.md#engine-traces-mooncake-bailian (and kvcache-simulator, llmtrafficlens): a request reads
its longest run of leading hash ids still cached; hit tokens = min(run x block size, input_length).
The vLLM n-1 cap is not applied here, so figures compare with those tools. Capacity counts whole
blocks: capacity // block size of them. A trace gives the input's hash ids only, so outputs are never
cached (the next turn's ids that cover the previous reply hit only if an earlier input had them).
Requests are instantaneous unless a decode rate is given; then they hold their blocks while they run.
"""
from __future__ import annotations

import heapq
import json
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Hashable, Iterable, Sequence

from prefixsim._perf.gc import gc_paused
from prefixsim.engines.base import DEFAULT_PREFILL_TOKENS_PER_S, prefill_seconds
from prefixsim.engines.eviction import EvictionQueue
from prefixsim.engines.lru import LruPass, NotExact, lru_curve, replay_lru
from prefixsim.engines.rows import Replayed, Rows
from prefixsim.engines.trace_blocks import check_block_size
from prefixsim.engines.vllm import BlockPool
from prefixsim.errors import UserError
from prefixsim.model import CauseKind
from prefixsim.sources.files import check_regular
from prefixsim.sources.problems import LINE_ERRORS, located_error
from prefixsim.sources.record import token_count

_INPUT, _OUTPUT, _KEYS = attrgetter("input_length"), attrgetter("output_length"), attrgetter("keys")
MOONCAKE_BLOCK = 512   # Mooncake trace README; AIPerf `mooncake_trace` default block size
BAILIAN_BLOCK = 16     # qwen-bailian-usagetraces-anon README



@dataclass(frozen=True, slots=True)
class TraceRequest:
    """One trace line. `keys` are the block keys replayed (hash ids, namespaced per file);
    `stream` is the conversation (bailian: the root chat) or the file name (Mooncake)."""

    request_id: str
    timestamp: float   # seconds since the trace's start
    input_length: int
    output_length: int
    keys: tuple[Hashable, ...]
    hash_ids: tuple[int, ...]
    stream: str
    chat_id: int | None = None
    parent_chat_id: int | None = None
    turn: int | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    format: str        # "mooncake" or "bailian"
    block_size: int
    requests: tuple[TraceRequest, ...]
    #: input tokens, output tokens and blocks of all requests: the same at every capacity, so summed once
    sums: tuple[int, int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        reqs = self.requests
        object.__setattr__(self, "sums", (sum(map(_INPUT, reqs)), sum(map(_OUTPUT, reqs)),
                                          sum(map(len, map(_KEYS, reqs)))))


def trace_block_size(trace: Trace, given: int | None) -> int:
    """The block size to replay `trace` with: the format's, or `given` once the hash ids can have it."""
    if given is None:
        return trace.block_size
    check_block_size(trace.requests, given, trace.block_size, trace.format)
    return given


def load_trace(paths: str | Path | Sequence[str | Path]) -> Trace:
    """Read one or more trace files (JSON lines; the format is told by the first record's keys).

    Hash ids of different files are kept apart (they are remapped per file), and requests of all
    files are merged in timestamp order, file order breaking ties.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise UserError("no trace file given")
    fmt: str | None = None
    out: list[TraceRequest] = []
    names = [Path(x).name for x in paths]
    for fi, path in enumerate(paths):
        path = Path(path)
        check_regular(path)   # a FIFO would block the read forever
        try:
            fh = path.open(encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot read trace: {e.strerror}", str(path)) from e
        roots: dict[int, int] = {}
        # request ids and streams name the file; two folders' trace.jsonl apart
        name = path.name if names.count(path.name) == 1 else path.as_posix()
        with fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise UserError(f"not JSON: {e.msg}", str(path), lineno, e.colno) from e
                except LINE_ERRORS as e:   # nested past the stack, a 5,000-digit number
                    raise located_error(e, str(path), lineno) from None
                kind = "bailian" if isinstance(rec, dict) and "chat_id" in rec else "mooncake"
                if fmt is None:
                    fmt = kind
                elif kind != fmt:
                    raise UserError(f"a {kind} record in a {fmt} trace", str(path), lineno)
                try:
                    out.append(_request(rec, kind, fi, path, lineno, roots, name))
                except LINE_ERRORS as e:   # the one boundary: a value of any type or size, a located error
                    raise located_error(e, str(path), lineno) from None
    assert fmt is not None or not out
    if not out:
        raise UserError("trace has no requests", str(paths[0]))
    ordered = sorted(range(len(out)), key=lambda i: out[i].timestamp)  # stable: file order on ties
    return Trace(fmt, BAILIAN_BLOCK if fmt == "bailian" else MOONCAKE_BLOCK,  # type: ignore[arg-type]
                 tuple(out[i] for i in ordered))


def _request(rec: object, kind: str, fi: int, path: Path, lineno: int, roots: dict[int, int],
             name: str) -> TraceRequest:
    where = (str(path), lineno)
    if not isinstance(rec, dict):
        raise UserError("a trace record must be a JSON object", *where)
    try:
        ts = float(rec["timestamp"])
        n_in = token_count(rec["input_length"], "input_length")
        n_out = token_count(rec.get("output_length", 0), "output_length")
        ids = tuple(map(int, rec["hash_ids"]))
    except KeyError as e:
        raise UserError(f"missing field {e.args[0]!r} (need timestamp, input_length, hash_ids)", *where) from e
    except (TypeError, ValueError) as e:
        raise UserError(f"bad field value: {e}", *where) from e
    if n_in < 0 or n_out < 0:
        raise UserError("negative token count", *where)
    keys: tuple[Hashable, ...] = ids if fi == 0 else tuple((fi, h) for h in ids)
    rid = f"{name}:{lineno}"
    if kind == "mooncake":
        return TraceRequest(rid, ts / 1000.0, n_in, n_out, keys, ids, name)
    chat, parent = int(rec["chat_id"]), int(rec.get("parent_chat_id", -1))
    root = roots[chat] = roots.get(parent, chat) if parent >= 0 else chat
    return TraceRequest(rid, ts, n_in, n_out, keys, ids, f"{name}#{root}", chat, parent,
                        rec.get("turn"), rec.get("type"))


def replay_request(pool: BlockPool, req: TraceRequest, block_size: int) -> Replayed:
    """Serve one trace request from `pool`: read the leading cached run, then cache all its blocks."""
    row = _read(pool, req, block_size)
    pool.store(req.keys)
    return row


def _read(pool: BlockPool, req: TraceRequest, block_size: int) -> Replayed:
    """The leading cached run of `req`'s blocks, and why it stopped."""
    keys = req.keys
    run = pool.run(keys)
    if run < len(keys):
        nxt = keys[run]
        cause = (CauseKind.EVICTED if nxt in pool.evicted else
                 CauseKind.COLD if run == 0 else CauseKind.HIT)
    else:
        cause = CauseKind.HIT
    return Replayed(req, len(keys), run, min(run * block_size, req.input_length), cause)


@dataclass(frozen=True, slots=True)
class Totals:
    requests: int
    input_tokens: int
    output_tokens: int
    hit_tokens: int
    blocks: int
    hit_blocks: int
    evictions: int

    @property
    def hit_rate(self) -> float:
        """Token-weighted: hit tokens / input tokens."""
        return self.hit_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def block_hit_rate(self) -> float:
        """Block-weighted: hit blocks / blocks."""
        return self.hit_blocks / self.blocks if self.blocks else 0.0


def totals(replayed: Iterable[Replayed], evictions: int = 0) -> Totals:
    req = inp = out = hit = blocks = hb = 0
    for r in replayed:
        req += 1
        inp += r.request.input_length
        out += r.request.output_length
        hit += r.hit_tokens
        blocks += r.blocks
        hb += r.hit_blocks
    return Totals(req, inp, out, hit, blocks, hb, evictions)


def replay(trace: Trace, capacity: int | None = None, eviction: str = "lru",
           block_size: int | None = None, *, decode_tokens_per_s: float | None = None,
           prefill_tokens_per_s: float | None = None,
           unlimited: LruPass | None = None) -> tuple[Sequence[Replayed], Totals]:
    """Replay `trace` through one block pool of `capacity` tokens (None: unlimited).

    By default a request is instantaneous, as other trace simulators count. With
    `decode_tokens_per_s`, a request holds its blocks from its timestamp until uncached tokens /
    prefill rate (default DEFAULT_PREFILL_TOKENS_PER_S) + output_length / decode rate later, and
    held blocks are not evicted (vLLM ref counts). Outputs are never cached: a trace gives only
    the input's hash ids.

    Instantaneous LRU (and any policy without a capacity) takes the fast path of `engines.lru`,
    which gives what the block pool gives (`replay_pool`, used for everything else), its rows as
    columns (`rows.Rows`: a row is made when read); `unlimited`, its pass at no capacity when a caller
    has it, gives the causes of misses (`lru.replay_lru`'s `seen`)."""
    bs = block_size or trace.block_size
    with gc_paused():
        if decode_tokens_per_s is None and (capacity is None or eviction == "lru"):
            EvictionQueue(eviction)   # an unknown policy is refused even without a capacity
            try:
                p = replay_lru(trace.requests, None if capacity is None else capacity // bs, bs, seen=unlimited)
            except NotExact:
                pass
            else:
                rows = Rows(trace.requests, p.runs, p.tokens, p.causes)  # type: ignore[arg-type]
                return rows, _totals(trace, p.hit_tokens, p.hit_blocks, p.evictions)
        return replay_pool(trace, capacity, eviction, bs, decode_tokens_per_s=decode_tokens_per_s,
                           prefill_tokens_per_s=prefill_tokens_per_s)


def replay_pool(trace: Trace, capacity: int | None = None, eviction: str = "lru",
                block_size: int | None = None, *, decode_tokens_per_s: float | None = None,
                prefill_tokens_per_s: float | None = None) -> tuple[list[Replayed], Totals]:
    """`replay` through `vllm.BlockPool`, one block object at a time: the reference the fast paths
    are tested against, and the path for held blocks (a decode rate) and for lfu / fifo."""
    bs = block_size or trace.block_size
    pool = BlockPool(None if capacity is None else capacity // bs, eviction)
    if decode_tokens_per_s is None:
        rows = [replay_request(pool, r, bs) for r in trace.requests]
        return rows, totals(rows, pool.evictions)
    prefill = prefill_tokens_per_s or DEFAULT_PREFILL_TOKENS_PER_S
    running: list[tuple[float, int, list]] = []
    rows = []
    for i, r in enumerate(trace.requests):
        while running and running[0][0] <= r.timestamp:
            pool.release(heapq.heappop(running)[2])
        row = _read(pool, r, bs)
        held, _ = pool.acquire(r.keys)
        end = r.timestamp + (r.input_length - row.hit_tokens) / prefill + r.output_length / decode_tokens_per_s
        heapq.heappush(running, (end, i, held))
        rows.append(row)
    return rows, totals(rows, pool.evictions)


def _totals(trace: Trace, hit_tokens: int, hit_blocks: int, evictions: int) -> Totals:
    inp, out, blocks = trace.sums
    return Totals(len(trace.requests), inp, out, hit_tokens, blocks, hit_blocks, evictions)


def curve_totals(trace: Trace, capacities: Sequence[int | None], eviction: str = "lru",
                 block_size: int | None = None, known: dict | None = None) -> list[Totals]:
    """Totals of instantaneous replays at each of `capacities` (tokens; None: unlimited).

    LRU has the inclusion property (a pool of C blocks holds the C most recent), so one
    stack-distance pass (`lru.lru_curve`) gives every capacity it describes; a capacity it does not
    describe (a long request reading past its first C blocks) is replayed on its own. lfu and fifo
    have no such property (fifo shows Belady's anomaly; lfu's counts restart when a block is
    evicted, so they depend on the capacity): one pass per capacity, through the block pool. `known`:
    totals a caller has, by capacity, not replayed again."""
    EvictionQueue(eviction)   # an unknown policy is refused even without a capacity
    bs = block_size or trace.block_size
    blocks = [None if c is None else c // bs for c in capacities]
    known = known or {}
    curve = None
    if eviction == "lru" and sum(b is not None and c not in known for c, b in zip(capacities, blocks)) > 1:
        try:
            with gc_paused():
                curve = lru_curve(trace.requests, bs)
        except NotExact:
            pass
    out = []
    with gc_paused():
        for cap, b in zip(capacities, blocks):
            if cap in known:
                out.append(known[cap])
                continue
            if curve is not None and curve.exact_at(b):
                hb, hit, ev = curve.at(b)
                out.append(_totals(trace, hit, hb, ev))
                continue
            if b is None or eviction == "lru":
                try:
                    p = replay_lru(trace.requests, b, bs, per_request=False)
                except NotExact:
                    pass
                else:
                    out.append(_totals(trace, p.hit_tokens, p.hit_blocks, p.evictions))
                    continue
            out.append(replay_pool(trace, cap, eviction, bs)[1])
    return out


def _point(capacity: int | None, t: Totals, prefill_tokens_per_s: float | None) -> dict:
    p = {"capacity_tokens": capacity, "hit_rate": round(t.hit_rate, 6),
         "block_hit_rate": round(t.block_hit_rate, 6), "hit_tokens": t.hit_tokens,
         "hit_blocks": t.hit_blocks, "evictions": t.evictions}
    if prefill_tokens_per_s:
        p["prefill_gpu_seconds_saved"] = round(prefill_seconds(t.hit_tokens, prefill_tokens_per_s), 3)
    return p


def replay_capacities(trace: Trace, caps: Sequence[int | None], bs: int, eviction: str = "lru",
                      rows: bool = True) -> tuple[Sequence[Replayed], list[Totals]]:
    """`replay_trace`'s work once loaded: totals at `caps`, rows at the first. The unlimited pass, run
    anyway when `caps` has None, gives the causes (`lru.replay_lru`'s `seen`); none runs twice."""
    if not rows:
        return [], curve_totals(trace, caps, eviction, bs)
    known: dict[int | None, Totals] = {}
    unl = None
    if eviction == "lru" and caps[0] is not None and None in caps:
        with gc_paused():
            unl = replay_lru(trace.requests, None, bs)
        known[None] = _totals(trace, unl.hit_tokens, unl.hit_blocks, 0)
    first_rows, known[caps[0]] = replay(trace, caps[0], eviction, bs, unlimited=unl)
    return first_rows, curve_totals(trace, caps, eviction, bs, known)


def replay_trace(paths: str | Path | Sequence[str | Path], capacities: Sequence[int | None] | None = None,
                 eviction: str = "lru", block_size: int | None = None, fmt: str = "json", *,
                 prefill_tokens_per_s: float | None = None, decode_tokens_per_s: float | None = None) -> dict:
    """Replay Mooncake / bailian trace files at one or more capacities (tokens; None: unlimited).

    Returns a JSON-ready dict: `requests` (one row per request, for the first capacity, in the
    shape transcript replays use) and `summary` with token-weighted `hit_rate` (hit tokens / input
    tokens), `block_hit_rate` (hit blocks / blocks) and, when several capacities are given, a
    `curve` with one point per capacity. `fmt` is the output the caller renders: "json" keeps
    the per-request rows, "table" leaves them out (the table shows the summary and the curve).
    With `prefill_tokens_per_s`, hits are also given as GPU-seconds of prefill saved. With
    `decode_tokens_per_s`, running requests hold their blocks (`replay`).
    """
    if fmt not in ("json", "table"):
        raise UserError(f"unknown output format {fmt!r} (valid: json, table)")
    caps = list(capacities) if capacities else [None]
    trace = load_trace(paths)
    bs = trace_block_size(trace, block_size)
    for cap in caps:
        if cap is not None and cap < 0:
            raise UserError(f"negative capacity {cap}")
    first_rows: Sequence[Replayed] = []
    if decode_tokens_per_s is None:
        first_rows, results = replay_capacities(trace, caps, bs, eviction, rows=fmt == "json")
    else:
        results = []
        for k, cap in enumerate(caps):
            rows, t = replay(trace, cap, eviction, bs, decode_tokens_per_s=decode_tokens_per_s,
                             prefill_tokens_per_s=prefill_tokens_per_s)
            if k == 0:
                first_rows = rows
            results.append(t)
    first = results[0]
    points = [_point(cap, t, prefill_tokens_per_s) for cap, t in zip(caps, results)]
    summary = {"format": trace.format, "block_size": bs, "eviction": eviction,
               **({"decode_tokens_per_s": decode_tokens_per_s} if decode_tokens_per_s else {}),
               "requests": first.requests, "input_tokens": first.input_tokens,
               "output_tokens": first.output_tokens, "blocks": first.blocks, **points[0]}
    if len(caps) > 1:
        summary["curve"] = points
    rows = ([] if fmt != "json" else first_rows.dicts() if isinstance(first_rows, Rows)
            else [r.row() for r in first_rows])
    return {"requests": rows, "summary": summary}
