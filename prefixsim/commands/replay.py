"""`prefixsim replay` (real traffic against the provider rules, what-if variants, engine traces) and
`prefixsim diff` (where two request bodies' prefixes part)."""
from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import click

from prefixsim.errors import UserError

FORMATS = ("table", "json", "csv", "markdown")


def _capacities(values: tuple[str, ...], kv_model: str | None = None) -> list[int | None] | None:
    """Every --capacity (repeated or comma lists) in tokens, None for unlimited (engines.kvsize syntax)."""
    from prefixsim.engines.kvsize import parse_capacity

    out: list[int | None] = []
    for v in values:
        for part in v.split(","):
            if not part.strip():
                continue
            try:
                out.append(parse_capacity(part.strip(), kv_model))
            except UserError as e:
                raise UserError(f"--capacity: {e.message}") from None
    return out or None


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--source", type=click.Choice(["claude-code", "anthropic", "openai", "deepseek", "gemini", "mooncake",
                                            "bailian"]),
              help="Force the input format (default: detected); openai = Chat Completions / Responses "
                   "logs and cassettes, deepseek = the same replayed as DeepSeek's, gemini = generateContent "
                   "logs and cassettes with their cachedContents.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--ttl", type=click.Choice(["observed", "5m", "1h"]), default="observed", show_default=True,
              help="What-if: cache writes at this TTL. On Claude Code transcripts it is the main "
                   "conversation's; sub-agents and compaction keep writing 5m, as Claude Code does.")
@click.option("--model", help="What-if: send the same traffic to another model.")
@click.option("--provider", default="observed", show_default=True,
              help="What-if: another provider's cache rules (anthropic, bedrock, vertex, gemini, openai, deepseek, prefix); "
                   "observed = each request's own (Anthropic, OpenAI / DeepSeek for an OpenAI log, Gemini for a Gemini log).")
@click.option("--breakpoints", type=click.Choice(["observed", "last", "auto", "none"]), default="observed",
              show_default=True, help="What-if: cache_control placement.")
@click.option("--top", default=5, show_default=True, help="Largest mismatches listed in the summary.")
@click.option("--capacity", multiple=True,
              help="Engine traces: cache capacity, e.g. 200000, 1e6, 10^6, 2M, 4GiB (with --kv-model), unlimited; "
                   "repeatable or a comma list (a sweep).")
@click.option("--kv-model", help="Engine traces: the model whose KV bytes per token size a GiB --capacity "
                                 "(llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, qwen2.5-72b, mistral-7b).")
@click.option("--eviction", type=click.Choice(["lru", "lfu", "fifo"]), default="lru", show_default=True,
              help="Engine traces: eviction policy.")
@click.option("--block-size", type=int, help="Engine traces: tokens per block (default: the trace's).")
@click.option("--strict", is_flag=True, help="A corrupt or unusable line is fatal (default: skip it, count it and "
                                            "name it on stderr).")
@click.option("--workers", default=1, show_default=True,
              help="Transcripts and request logs: replay shards of the traffic that share no cache (namespace: "
                   "provider, model, workspace) in this many processes, 0 for one per core; the output is the "
                   "serial one. Small traffic (under 5,000 requests) and one namespace replay in one process.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where shards run: local processes, or a dask.distributed cluster (--scheduler).")
@click.option("--scheduler", help="--executor dask: the scheduler's address, e.g. tcp://10.0.0.5:8786.")
@click.option("--export-mooncake", "export_path", type=click.Path(dir_okay=False),
              help="Also write the replayed requests as a Mooncake trace (JSONL, 512-token hash_ids) for other tools.")
def replay(paths, source, fmt, ttl, model, provider, breakpoints, top, capacity, kv_model, eviction, block_size,
           strict, workers, executor, scheduler, export_path):
    """Replay real traffic and explain every cache miss.

    PATHS: Claude Code transcripts (a session .jsonl, its session folder, a projects folder),
    Anthropic, OpenAI (Chat Completions / Responses) or DeepSeek request logs (JSONL) or VCR
    cassettes (YAML or JSON), or Mooncake / bailian traces.
    Per request it prints observed vs predicted cache read / write / uncached tokens and the cause of
    each miss; the summary puts the naive mechanism's accuracy next to prefixsim's. Any of --ttl,
    --model, --provider, --breakpoints also replays the traffic under that design and prints the
    cost difference per stream and in total.

    \b
    Examples:
      prefixsim replay ~/.claude/projects/-home-me-app/4d5611e5.jsonl
      prefixsim replay ~/.claude/projects/-home-me-app/ --ttl 1h
      prefixsim replay calls.jsonl --format json
      prefixsim replay tests/cassettes/test_chat.yaml --provider deepseek --model deepseek-chat
    """
    from prefixsim import sources

    if export_path:   # before anything is read: a log over 256 MB is re-read at its offsets while replaying
        from prefixsim.io.fsutil import check_outputs

        check_outputs(paths, files=[export_path])
    try:
        kind = source or sources.detect(paths[0])
    except UserError:
        kind = None   # not a trace; load_many names the failure, path by path
    if kind in sources.TRACE_FORMATS:
        click.echo(_trace(paths, kind, fmt, _capacities(capacity, kv_model), eviction, block_size), nl=False)
        return
    from prefixsim.replay import WhatIf, compare
    from prefixsim.replay import replay as run_replay
    from prefixsim.sources.problems import collecting

    failed: list[UserError] = []
    with collecting(strict) as found:
        # Read once; each replay below walks the requests in time order without holding them all.
        traffic = sources.open_many(paths, source, errors=failed)
    if not len(traffic) and len(failed) == len(paths) == 1:
        _warn(found, [])
        raise failed[0]
    _warn(found, failed)
    if not len(traffic):
        raise UserError("no requests found", str(paths[0])) if not failed else _failure(failed, paths)
    if export_path:
        from prefixsim.engines.export import export_mooncake

        n = export_mooncake(traffic, export_path)
        click.echo(f"wrote {n:,} requests to {export_path} (Mooncake trace)", err=True)
    from prefixsim._perf.gc import few_collections

    variant = WhatIf(ttl=ttl, model=model, provider=provider, breakpoints=breakpoints)
    # each request under the rules of the provider it was sent to, then under the what-if design
    designs = [WhatIf(), *([variant] if variant != WhatIf() else [])]
    with few_collections():
        if workers == 1 and executor == "local" and not scheduler:
            results = [run_replay(traffic, v, top=top) for v in designs]
        else:
            from prefixsim.replay.shard import replay_sharded

            results = replay_sharded(traffic, designs, top, workers, executor, scheduler)
    base = results[0]
    what_if = compare(base, results[1]) if len(results) > 1 else None
    if fmt == "json":
        for chunk in json_chunks(base, what_if):
            click.echo(chunk, nl=False)
    elif fmt == "csv":
        click.echo(_csv(base), nl=False)
    else:
        click.echo(_text(base, what_if, markdown=fmt == "markdown"), nl=False)
    if failed:
        raise _failure(failed, paths)


#: Characters of JSON gathered before each write to stdout.
JSON_CHUNK = 1 << 16


def json_chunks(base, what_if=None):
    """The `--format json` document (`replay.to_json`) as text, in pieces of about JSON_CHUNK
    characters: one request per line, each encoded by json's C encoder as it is reached, so neither
    the whole document nor its text is ever held (json.dumps with indent= is the pure-Python
    encoder). The summary and what-if parts, small, are indented as json.dumps(indent=2) would: the
    document parses to exactly `to_json(base, what_if)`."""
    from prefixsim.replay import row_json, summary_json

    row = json.JSONEncoder(ensure_ascii=False).encode
    parts: list[str] = ['{\n  "requests": [']
    size = 0
    for i, r in enumerate(base.rows):
        text = row(row_json(r))
        parts.append(("\n    " if i == 0 else ",\n    ") + text)
        size += len(text)
        if size >= JSON_CHUNK:
            yield "".join(parts)
            parts, size = [], 0
    parts.append("\n  ]," if base.rows else "],")
    rest = json.dumps(summary_json(base, what_if), indent=2, ensure_ascii=False)
    parts.append(rest[1:] + "\n")   # its keys, at the document's first level
    yield "".join(parts)


#: Skipped lines named one by one on stderr before the rest are only counted.
SHOWN_PROBLEMS = 20


def _warn(found, failed: list[UserError]) -> None:
    """Skipped lines and notes on stderr (stdout stays the report), then each path that failed."""
    for p in found.notes:
        click.echo(f"{p}", err=True)
    for p in found.skipped[:SHOWN_PROBLEMS]:
        click.echo(f"{p}", err=True)
    n = len(found.skipped)
    if n > SHOWN_PROBLEMS:
        click.echo(f"... and {n - SHOWN_PROBLEMS:,} more skipped lines", err=True)
    if n:
        click.echo(f"prefixsim: skipped {n:,} unusable line{'s' if n > 1 else ''} (--strict makes them fatal)",
                   err=True)
    for e in failed:
        click.echo(str(e), err=True)


def _failure(failed: list[UserError], paths) -> UserError:
    """The exit status names every path that failed; the others were replayed."""
    return UserError(f"{len(failed)} of {len(paths)} paths failed: {', '.join(e.path or '?' for e in failed)}")


def _trace(paths, kind, fmt, capacities, eviction, block_size) -> str:
    import importlib
    import importlib.util

    if importlib.util.find_spec("prefixsim.engines.trace") is None:
        raise UserError(f"{kind} trace replay is not available in this version of prefixsim", str(paths[0]))
    trace = importlib.import_module("prefixsim.engines.trace")
    result = trace.replay_trace(list(paths), capacities=capacities, eviction=eviction,
                                block_size=block_size, fmt="json" if fmt == "json" else "table")
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    from prefixsim.report.traces import render_text

    return render_text(result)


def _csv(result) -> str:
    df = result.to_dataframe()
    buf = io.StringIO()
    df.to_csv(buf, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue()


def _grid(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    from prefixsim.report.layout import DEFAULT_WIDTH, fit

    # Numbers right-aligned, text left-aligned, as a reader scans them; text columns wrap to fit.
    number = lambda c: c[:1].isdigit() or c[:1] in "+-$"
    text = [not all(number(r[i]) for r in rows if r[i]) for i in range(len(header))]
    return fit(header, rows, [not t for t in text], DEFAULT_WIDTH, text, rule=False, right=number) + "\n"


def _n(v) -> str:
    return "" if v is None else f"{v:,}"


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.2f}%"


def _usd(v) -> str:
    return "n/a" if v is None else f"${v:,.4f}"


#: Characters of each path part of a stream name shown in tables (the JSON keeps whole names).
SHORT_PART = 8


def short_streams(names) -> dict[str, str]:
    """Display names for stream keys: every path part but the last cut to SHORT_PART characters, or
    to as many more as keep two streams from showing alike (keys are whole paths, see
    sources.claude_code.session_key)."""
    names = sorted(set(names))
    parts = [n.split("/") for n in names]
    longest = max((len(p) for ps in parts for p in ps[:-1]), default=0)
    for width in range(SHORT_PART, longest + 1):
        shown = ["/".join([*(p[:width] for p in ps[:-1]), ps[-1]]) for ps in parts]
        if len(set(shown)) == len(shown):
            return dict(zip(names, shown))
    return {n: n for n in names}


def _text(result, what_if, markdown: bool) -> str:
    s = result.summary
    name = short_streams([r.stream for r in result.rows])
    head = ["#", "stream", "model", "read obs", "read pred", "write obs", "write pred", "uncached obs",
            "uncached pred", "cause"]
    rows = []
    for r in result.rows:
        o, p = r.observed, r.predicted
        rows.append([str(r.index), name[r.stream], r.model, _n(o and o.cache_read), _n(p.cache_read),
                     _n(o and o.cache_creation), _n(p.cache_creation), _n(o and o.input_tokens),
                     _n(p.input_tokens), str(r.cause)[:90]])
    out = [_grid(head, rows, markdown), "\n"]
    mine, naive = s.prefixsim, s.naive
    out.append("Summary (observed = the provider's usage; predicted = prefixsim's replay; "
               "naive = previous read + write within the TTL)\n")
    stats = [["requests", str(s.requests), f"{s.observed_requests} with observed usage", ""],
             ["cache_read exactly right", f"{mine.exact}/{mine.compared} ({_pct(mine.exact_rate)})",
              f"{naive.exact}/{naive.compared} ({_pct(naive.exact_rate)})", ""],
             ["cache_read WAPE", _pct(mine.wape), _pct(naive.wape), ""],
             ["read share", _pct(mine.read_share), _pct(naive.read_share), f"observed {_pct(s.read_share_observed)}"],
             ["cost" + ("" if s.output_in_cost else " (prompt side)"), _usd(s.cost_predicted_usd), "",
              f"observed {_usd(s.cost_observed_usd)}"]]
    out.append(_grid(["", "prefixsim", "naive", ""], stats, markdown))
    o = s.outside
    if o.requests or o.shorter_requests:
        from prefixsim.report.layout import DEFAULT_WIDTH, wrap_block

        notes = []
        if o.requests:
            notes.append(
                f"{o.requests} request{'s' if o.requests > 1 else ''} read {o.tokens:,} tokens that no earlier "
                "request in the data wrote (a cache left by traffic outside the data, e.g. an earlier session): "
                "counted as errors above, as no replay of this data can know them; WAPE over the other requests "
                f"{_pct(o.wape_in_data)}.")
        if o.shorter_requests:
            n = o.shorter_requests
            whose = "their" if n > 1 else "its"
            notes.append(
                f"{n} request{'s' if n > 1 else ''} read {o.shorter_tokens:,} tokens fewer than the replay found "
                f"alive on {whose} prefix: the provider found a shorter prefix for a reason the data does not show "
                "(on Claude Code transcripts mostly a new user turn that read only the static prefix; "
                "docs/rules.md#reads-outside-the-data). Counted as errors above.")
        out.append("\n" + "\n".join(wrap_block(t, DEFAULT_WIDTH, "") for t in notes) + "\n")
    if result.rows and result.rows[0].predicted_optimistic is not None:
        opt = [r.predicted_optimistic for r in result.rows]
        prompt = sum(u.prompt_tokens for u in opt)
        cost = sum((r.cost_predicted_optimistic for r in result.rows), Decimal(0))
        out.append(f"\nRetention is a documented range: the predicted figures above are its pessimistic end; "
                   f"at its optimistic end read share {_pct(sum(u.cache_read for u in opt) / prompt if prompt else None)}, "
                   f"cost {_usd(cost)}.\n")
    kept = sum((r.storage_usd for r in result.rows), Decimal(0))
    if kept:
        out.append(f"\nExplicit caches' storage (creation to delete or expiry, as logged): ${kept:.6f}, "
                   "included in both costs.\n")
    if s.causes:
        out.append("\nMisses by cause: " + ", ".join(f"{k} {v}" for k, v in s.causes) + "\n")
    if s.largest_mismatches:
        out.append("\nLargest mismatches of cache_read (predicted - observed):\n")
        out.append(_grid(["#", "stream", "observed", "predicted", "error", "cause"],
                         [[str(r.index), name[r.stream], _n(r.observed.cache_read), _n(r.predicted.cache_read),
                           f"{r.read_error:+,}", str(r.cause)[:90]] for r in s.largest_mismatches], markdown))
    if what_if is not None:
        v = what_if.variant.summary.variant
        out.append(f"\nWhat if {v.describe()} (cost as replayed -> under the variant):\n")
        lines = []
        for d in (*what_if.streams, what_if.total):
            lines.append([name.get(d.stream, d.stream), _usd(d.cost_base), _usd(d.cost_variant),
                          f"{'+' if d.cost_delta >= 0 else '-'}"
                          f"${abs(d.cost_delta):,.4f}", str(d.rebuilds_base), str(d.rebuilds_variant)])
        out.append(_grid(["stream", "cost", "cost what-if", "difference", "rebuilds", "rebuilds what-if"],
                         lines, markdown))
        t = what_if.total
        fewer = t.rebuilds_base - t.rebuilds_variant
        out.append(f"\nThis traffic under {v.describe()}: {'+' if t.cost_delta >= 0 else '-'}${abs(t.cost_delta):,.2f}, "
                   f"{abs(fewer)} {'fewer' if fewer >= 0 else 'more'} rebuilds.\n")
    from prefixsim.report.layout import DEFAULT_WIDTH, wrap_block

    out.append("\n" + wrap_block(f"Prices: {s.price_source}", DEFAULT_WIDTH, "  ") + "\n")
    return "".join(out)


@click.command()
@click.argument("a", type=click.Path(exists=True))
@click.argument("b", required=False, type=click.Path(exists=True))
@click.option("--index", "indices", nargs=2, type=int, help="With one log file: compare these two requests (0-based).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def diff(a, b, indices, fmt):
    """Where two requests' prefixes part, and what it costs on the next request.

    Give two request bodies (JSON files), or one log (JSONL or cassette) with --index I J.

    \b
    Examples:
      prefixsim diff before.json after.json
      prefixsim diff calls.jsonl --index 3 4
    """
    from prefixsim.replay.diff import diff_requests, load_pair

    left, right = load_pair(a, b, indices)
    d = diff_requests(left, right)
    if fmt == "json":
        click.echo(json.dumps(d.to_dict(), indent=2, ensure_ascii=False))
    else:
        from prefixsim.report.layout import DEFAULT_WIDTH, wrap_block

        click.echo("\n".join(line if len(line) <= DEFAULT_WIDTH else wrap_block(line, DEFAULT_WIDTH, "  ")
                              for line in d.describe().splitlines()))
