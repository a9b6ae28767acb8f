"""`prefixsim replay` (real traffic against the provider rules, what-if variants, engine traces) and
`prefixsim diff` (where two request bodies' prefixes part)."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import json

import click

from prefixsim.commands.common import TokenSize, failure, format_option, output_width, read_traffic, width_option
from prefixsim.errors import UserError
from prefixsim.io.input_formats import FORMAT_LINES
from prefixsim.report.layout import REPLAY_WIDTH, wrap_block

SOURCES = FORMAT_LINES   # the input formats, one line each (prefixsim/io/input_formats.py)
#: The largest block an engine trace's hash ids name (Mooncake's are 512 tokens, bailian's 16).
MAX_BLOCK_TOKENS = 1_000_000


def _capacities(values: tuple[str, ...], kv_model: str | None = None) -> list[int | None] | None:
    """Every --capacity (repeated or comma lists) in tokens, None for unlimited (engines.kvsize syntax)."""
    from prefixsim.engines.kvsize import parse_capacity  # lazy: the engines load only for a trace's --capacity

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
@click.option("--source", type=click.Choice(list(SOURCES)), metavar="FORMAT", help="Force the input format (default: detected; a "
              "file that looks like another format is refused, naming it):\n\n\b\n"
              + "\n".join(f"{k}: {v}" for k, v in SOURCES.items()))
@format_option
@click.option("--ttl", type=click.Choice(["observed", "5m", "1h"]), default="observed", show_default=True,
              help="What-if: cache writes at this TTL. On Claude Code transcripts it is the main "
                   "conversation's; sub-agents and compaction keep writing 5m, as Claude Code does.")
@click.option("--model", help="What-if: send the same traffic to another model.")
@click.option("--provider", default="observed", show_default=True,
              help="What-if: another provider's cache rules (anthropic, bedrock, vertex, gemini, openai, deepseek, prefix, "
                   "groq, mistral, xai, zai, moonshot, together, fireworks, cohere, other); "
                   "observed = each request's own (Anthropic, OpenAI / DeepSeek for an OpenAI log, Gemini for a Gemini log).")
@click.option("--breakpoints", type=click.Choice(["observed", "last", "auto", "none"]), default="observed",
              show_default=True, help="What-if: cache_control placement.")
@click.option("-v", "--requests", "show_requests", is_flag=True,
              help="Table/markdown: also print every request, observed against predicted, with the cause of each "
                   "miss, and the largest mismatches; every group of --by; the what-if per stream.")
@click.option("--by", type=click.Choice(["session", "day", "project", "model"]), default="day", show_default=True,
              help="Table/markdown: split the money by Claude Code session, UTC day, project (the folder a "
                   "transcript or log lies in) or model.")
@click.option("--since", metavar="DATE", help="Only the requests from this ISO date (2026-01-31, 20260131) or time "
                                             "(2026-01-31T09:00:00Z) on; the whole traffic is replayed, so earlier "
                                             "requests still warm the cache.")
@click.option("--until", metavar="DATE", help="Only the requests up to this ISO date (the whole day) or time.")
@click.option("--width", type=int, metavar="COLUMNS",
              help="Fit tables to this width (default: $COLUMNS, else the terminal's, else 80).")
@click.option("--top", default=5, show_default=True, help="Largest mismatches listed with --requests (and in JSON).")
@click.option("--capacity", multiple=True,
              help="Engine traces: cache capacity, e.g. 200000, 1e6, 10^6, 2M, 4GiB (with --kv-model), unlimited; "
                   "repeatable or a comma list (a sweep).")
@click.option("--kv-model", help="Engine traces: the model whose KV bytes per token size a GiB --capacity "
                                 "(llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, qwen2.5-72b, mistral-7b).")
@click.option("--eviction", type=click.Choice(["lru", "lfu", "fifo"]), default="lru", show_default=True,
              help="Engine traces: eviction policy.")
@click.option("--block-size", type=TokenSize(1, MAX_BLOCK_TOKENS),
              help="Engine traces: tokens per block the hash ids were made with (default: the trace format's, "
                   "512 for Mooncake, 16 for bailian); one the trace's hash ids cannot have is refused.")
@click.option("--strict", is_flag=True, help="A corrupt or unusable line is fatal (default: skip it, count it and "
                                            "name it on stderr).")
@click.option("--workers", default=1, show_default=True,
              help="Transcripts and request logs: replay shards of the traffic that share no cache (namespace: "
                   "provider, model, workspace) in this many processes, 0 for one per core; the output is the "
                   "serial one. Small traffic (under 5,000 requests) and one namespace replay in one process.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where shards run: local processes, or a dask.distributed cluster (--scheduler).")
@click.option("--scheduler", help="--executor dask: the scheduler's address, e.g. tcp://10.0.0.5:8786.")
@click.option("--latency", "latency", is_flag=True,
              help="Also fit the time-to-first-token model per model id to the requests' start and response times "
                   "(Claude Code transcripts, Codex rollouts): the fit, its residuals, its error on every 5th request "
                   "held back against a constant's, and the wall time caching saved.")
@click.option("--latency-out", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the fitted models as JSON, for a scenario's `latency: {from: FILE}`.")
@click.option("--export-mooncake", "export_path", type=click.Path(dir_okay=False),
              help="Also write the replayed requests as a Mooncake trace (JSONL, 512-token hash_ids) for other tools.")
def replay(paths, source, fmt, ttl, model, provider, breakpoints, show_requests, by, since, until, width, top, capacity,
           kv_model, eviction, block_size, strict, workers, executor, scheduler, latency, latency_out, export_path):
    """Replay real traffic and explain every cache miss.

    PATHS: Claude Code transcripts (a session .jsonl, its session folder, a projects folder),
    Anthropic, OpenAI (Chat Completions / Responses) or DeepSeek request logs (JSONL) or VCR
    cassettes (YAML or JSON), OpenAI Realtime WebSocket cassettes, OpenTelemetry OTLP JSON exports,
    LiteLLM or Langfuse exports (a call recorded without its prompt is audited: observed usage and cost
    only), or Mooncake / bailian traces.
    It prints the money first: what the traffic cost, what caching saved against the same traffic
    with no cache, what was lost to the cache and to which cause, split --by session, day, project
    or model; then the accuracy of the replay against the observed usage, next to the naive
    mechanism's. --requests adds every request, observed vs predicted, with the cause of each miss.
    Any of --ttl, --model, --provider, --breakpoints also replays the traffic under that design and
    prints the cost difference, split as the money is, and in total.

    \b
    Examples:
      prefixsim replay ~/.claude/projects/-home-me-app/4d5611e5.jsonl
      prefixsim replay ~/.claude/projects/ --by project --since 2026-01-01
      prefixsim replay ~/.claude/projects/-home-me-app/ --ttl 1h
      prefixsim replay ~/.claude/projects/-home-me-app/4d5611e5.jsonl --requests
      prefixsim replay ~/.claude/projects/ --latency
      prefixsim replay calls.jsonl --format json
      prefixsim replay tests/cassettes/test_chat.yaml --provider deepseek --model deepseek-chat
    """
    # lazy: the readers and the replay load only when the command runs (`prefixsim --help` loads neither)
    from prefixsim import sources
    from prefixsim.replay import WhatIf
    from prefixsim.advise.one_pass import replay_sharded_with_losses, replay_with_losses
    from prefixsim.replay.paired import designs_of, replay_traffic
    from prefixsim.replay.window import compared_within, window, within

    span = window(since, until)   # a bad date is refused before anything is read
    cols = output_width(width, REPLAY_WIDTH, columns=True)
    if latency and fmt not in ("table", "markdown"):
        raise UserError(f"--latency prints beside the table (--format table or markdown), not --format {fmt}; "
                        "--latency-out FILE writes the fit as JSON")
    if export_path or latency_out:   # before anything is read: a log over 256 MB is re-read at its offsets
        from prefixsim.io.fsutil import check_outputs   # lazy: only a replay that writes files loads the writers

        check_outputs(paths, files=[f for f in (export_path, latency_out) if f])
    try:
        kind = source or sources.detect(paths[0])
    except UserError:
        kind = None   # not a trace; read_traffic names the failure, path by path
    if kind in sources.TRACE_FORMATS:
        from prefixsim.report.replay import trace_text

        click.echo(trace_text(paths, kind, fmt, _capacities(capacity, kv_model), eviction, block_size, cols), nl=False)
        return
    traffic, failed = read_traffic(paths, source, strict, partial=True)
    if export_path:
        from prefixsim.engines.export import export_mooncake  # lazy: the engines load only to export

        n = export_mooncake(traffic, export_path)
        click.echo(f"wrote {n:,} requests to {export_path} (Mooncake trace)", err=True)
    variant = WhatIf(ttl=ttl, model=model, provider=provider, breakpoints=breakpoints)
    # the money table counts what was lost (csv prints its rows): one more replay, the oracle's
    money_shown = fmt in ("table", "markdown") or (fmt == "csv" and not show_requests)
    lost: list | None = None
    planned = None
    if workers != 1 or executor != "local" or scheduler:
        from prefixsim._perf.cluster import dask_client  # lazy: only a replay with these options checks them
        from prefixsim.replay.shard import sharding  # lazy: only a sharded replay plans

        dask_client(executor, scheduler)   # the options' mistakes before any work
        planned = sharding(traffic, designs_of(variant), workers, executor)
    if planned is None and money_shown:   # one pass: read and calibrated once for all three replays
        base, what_if, lost = replay_with_losses(traffic, variant, top)
    elif planned is None:
        base, what_if = replay_traffic(traffic, variant, top)
    elif money_shown:   # each shard walked once by its worker, the oracle and the losses with it
        base, what_if, lost = replay_sharded_with_losses(traffic, variant, top, workers, executor, scheduler, planned)
    else:
        base, what_if = replay_traffic(traffic, variant, top, workers, executor, scheduler, planned)
    if span:
        kept = {r.index for r in base.rows if span.holds(r.timestamp)}
        lost = None if lost is None else [x for r, x in zip(base.rows, lost) if r.index in kept]
        base, what_if = within(base, span, top), compared_within(what_if, span, top)
    _print(base, what_if, fmt, traffic.skipped, cols, show_requests, lost, by)
    if latency or latency_out:
        _latency(traffic, span, cols if latency else None, latency_out)
    if failed:
        raise failure(failed, paths)


def _latency(traffic, span, width: int | None, out: str | None) -> None:
    """The latency fit of the requests in the window (replay/latency.py): printed at `width`, written to `out`."""
    from prefixsim.io.fsutil import write_atomic  # lazy: only with --latency
    from prefixsim.replay.latency import fit_traffic
    from prefixsim.report.replay_latency import latency_text
    from prefixsim.report.tables import json_text

    fits = fit_traffic(r for r in traffic if not span or span.holds(r.timestamp))   # an empty window holds all
    if width is not None:
        click.echo(latency_text(fits, width), nl=False)
    if out:
        if not any(f.latency is not None for f in fits.fits):
            raise UserError(f"--latency-out {out}: no model id could be fitted, nothing written "
                            "(prefixsim replay --latency says why)")
        write_atomic(out, json_text(fits.document()))
        click.echo(f"wrote the fitted latency model of {sum(f.latency is not None for f in fits.fits)} model id(s) "
                   f"to {out}", err=True)


def _print(base, what_if, fmt: str, skipped=(), width: int = REPLAY_WIDTH, requests: bool = False, lost=None,
           by: str = "day") -> None:
    """The replay on stdout in `fmt`; each format's module loads only when it is printed. The JSON
    document names the skipped lines too (stderr names them for every format)."""
    if fmt == "json":
        from prefixsim.replay.output import json_chunks  # lazy: text and CSV replays never load the JSON module

        for chunk in json_chunks(base, what_if, skipped):
            click.echo(chunk, nl=False)
    else:
        from prefixsim.report.replay import csv_text, table_text

        click.echo(csv_text(base, requests, lost, by) if fmt == "csv" else
                   table_text(base, what_if, fmt == "markdown", width, requests, lost, by), nl=False)


@click.command()
@click.argument("a", type=click.Path(exists=True))
@click.argument("b", required=False, type=click.Path(exists=True))
@click.option("--index", "indices", nargs=2, type=int, help="With one log file: compare these two requests (0-based).")
@format_option
@width_option
def diff(a, b, indices, fmt, width):
    """Where two requests' prefixes part, and what it costs on the next request.

    Give two request bodies (JSON files), or one log (JSONL or cassette) with --index I J.
    Exits 0 when they are the same request, 1 when they differ (as diff(1)), 2 on bad input.

    \b
    Examples:
      prefixsim diff before.json after.json
      prefixsim diff calls.jsonl --index 3 4
    """
    from prefixsim.replay.diff import diff_requests, load_pair  # lazy: loaded only when `diff` runs

    cols = output_width(width)
    left, right, provider = load_pair(a, b, indices)
    d = diff_requests(left, right, provider)
    if fmt == "json":
        click.echo(json.dumps(d.to_dict(), indent=2, ensure_ascii=False))
    elif fmt == "csv":   # the answer is one record: one row of the JSON's fields
        from prefixsim.report.tables import csv_text

        click.echo(csv_text([d.to_dict()], list(d.to_dict())), nl=False)
    elif fmt == "markdown":   # a fenced block: the caret lines up under the byte only in monospace
        click.echo(f"```\n{d.describe()}\n```")
    else:
        click.echo("\n".join(line if len(line) <= cols else wrap_block(line, cols, "  ")
                              for line in d.describe().splitlines()))
    if d.differ:   # as diff(1): 0 the same, 1 different, 2 trouble
        raise SystemExit(1)
