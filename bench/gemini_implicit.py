"""What Gemini's implicit cache does on real traffic: the measurements behind docs/rules.md#google-gemini.

    python bench/gemini_implicit.py                       # the sessions and recordings in tests/data
    python bench/gemini_implicit.py PATH [PATH ...]       # Gemini CLI session files, cassettes, folders

Reads Gemini CLI session files (`ConversationRecord` JSON or JSON Lines: each `gemini` message's
`tokens`) and VCR cassettes of `generateContent` (`usageMetadata`), and prints per model family: how
often a follow-up (the next request of the same session and model) reads, how much of the previous
prompt, where the read ends against the earlier prompts' ends, the gaps it survives, the smallest
prompts it follows, and, for recordings, how the cached tokens split by modality (`cacheTokensDetails`).
Sizes only: no prompt text is needed, so it reads any session file the CLI wrote.
"""
from __future__ import annotations

import argparse
import cmath
import datetime as dt
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
GAPS = (0, 60, 300, 600, 1200, 3600, float("inf"))
SIZES = (0, 1024, 2048, 4096, 8192, 32768, float("inf"))


def _time(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _messages(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except ValueError:   # JSON Lines: a metadata record, then one message a line
        doc = {"messages": [json.loads(line) for line in text.splitlines() if line.strip()]}
    return [m for m in doc.get("messages", []) if isinstance(m, dict)] if isinstance(doc, dict) else []


def session(path: Path) -> list[dict]:
    """The requests of one Gemini CLI session: model, prompt, cached, output, time (a message whose
    token counts are all zero recorded no usage and is left out)."""
    out = []
    for m in _messages(path):
        tk = m.get("tokens")
        if m.get("type") != "gemini" or not isinstance(tk, dict) or not any(tk.get(k) for k in ("input", "output")):
            continue
        out.append({"model": str(m.get("model")), "prompt": int(tk.get("input") or 0), "cached": int(tk.get("cached") or 0),
                    "output": int(tk.get("output") or 0), "thoughts": int(tk.get("thoughts") or 0),
                    "t": _time(m.get("timestamp")), "modalities": None})
    return out


def cassette(path: Path) -> list[dict]:
    """The generateContent calls of one VCR cassette, with the modality split of prompt and cache."""
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = []
    for it in doc.get("interactions") or ():
        uri = str(it.get("request", {}).get("uri", ""))
        if ":generateContent" not in uri and ":streamGenerateContent" not in uri:
            continue
        usage = _usage(it.get("response") or {})
        if not usage or "cachedContent" in _body(it.get("request") or {}):
            continue   # no usage, or a read of an explicit cache (CachedContent), not the implicit one
        details = {d.get("modality"): d.get("tokenCount", 0) for d in usage.get("promptTokensDetails") or ()}
        cached = {d.get("modality"): d.get("tokenCount", 0) for d in usage.get("cacheTokensDetails") or ()}
        out.append({"model": uri.rsplit("/", 1)[-1].split(":")[0], "prompt": usage.get("promptTokenCount", 0),
                    "cached": usage.get("cachedContentTokenCount", 0), "output": usage.get("candidatesTokenCount", 0),
                    "t": None, "modalities": (details, cached)})
    return out


def _body(request: dict) -> dict:
    body = request.get("parsed_body")
    if body is None:
        raw = (request.get("body") or {}).get("string") if isinstance(request.get("body"), dict) else request.get("body")
        try:
            body = json.loads(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw or "{}")
        except ValueError:
            body = {}
    return body if isinstance(body, dict) else {}


def _usage(response: dict) -> dict:
    body = response.get("parsed_body")
    if body is None:
        raw = (response.get("body") or {}).get("string") if isinstance(response.get("body"), dict) else response.get("body")
        raw = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw or ""
        try:
            body = json.loads(raw)
        except ValueError:   # Server-Sent Events: the last chunk's usage is the whole call's
            chunks = [json.loads(x[5:]) for x in raw.splitlines() if x.startswith("data:")]
            body = next((c for c in reversed(chunks) if c.get("usageMetadata")), {})
    if isinstance(body, list):
        body = next((c for c in reversed(body) if isinstance(c, dict) and c.get("usageMetadata")), {})
    return body.get("usageMetadata") or {} if isinstance(body, dict) else {}


def _context(c: dict) -> float:
    """A read counted in the model's own context, the earlier turns' thinking included, if the reported
    count is that read's pro-rata share of the billed prompt (as cacheTokensDetails splits it by modality)."""
    return c["cached"] * (c["prompt"] + c["hidden"]) / c["prompt"]


def _concentration(xs: list[float], unit: int) -> float:
    """How strongly the values gather at one phase modulo `unit` (0: spread evenly, 1: all at one)."""
    return abs(sum(cmath.exp(2j * cmath.pi * (x % unit) / unit) for x in xs) / len(xs)) if xs else 0.0


def family(model: str) -> str:
    for k in ("gemini-2.5-flash-lite", "gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-flash", "gemini-3-pro",
              "gemini-3.1-pro", "gemini-3.1-flash"):
        if model.startswith(k):
            return k
    return model


def _quantiles(xs: list[int]) -> str:
    if not xs:
        return "-"
    xs = sorted(xs)
    return " / ".join(f"{xs[int(q * (len(xs) - 1))]:,}" for q in (0.1, 0.25, 0.5, 0.75, 0.9))


def _band(x: float, edges: tuple) -> str:
    for lo, hi in zip(edges, edges[1:]):
        if lo <= x < hi:
            return f"{lo:,.0f}-{hi:,.0f}" if hi != float("inf") else f">={lo:,.0f}"
    return "?"


def measure(calls_by_file: list[list[dict]]) -> dict[str, dict]:
    fam: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    for calls in calls_by_file:
        hidden = 0   # the thinking of the earlier turns: sent back in thought signatures, billed as no input
        for i, c in enumerate(calls):
            f = fam[family(c["model"])]
            c["hidden"] = hidden
            hidden += c.get("thoughts", 0)
            f["requests"].append(c)
            if c["modalities"] and c["cached"]:
                f["modalities"].append(c)
            prev = calls[i - 1] if i else None
            if prev is None or prev["model"] != c["model"] or c["prompt"] < prev["prompt"]:
                continue   # the first request, a model switch, a smaller prompt (compression)
            gap = c["t"] - prev["t"] if c["t"] is not None and prev["t"] is not None else None
            if c["cached"] > prev["prompt"] + prev["output"]:
                f["outside"].append(c)   # more than the previous prompt and reply: a cache the data did not write
                continue
            f["follow"].append((prev, c, gap))
            if c["cached"]:
                earlier = [x["prompt"] for x in calls[:i]]
                back = sum(1 for p in earlier if p > c["cached"])   # request ends past the read's end
                f["back"].append(back)
                f["shortfall"].append(prev["prompt"] - c["cached"])
                f["below_previous_read"].append(c["cached"] < prev["cached"])
                lo = max((p for p in earlier if p <= c["cached"]), default=0)
                hi = min((p for p in earlier + [c["prompt"]] if p > c["cached"]), default=c["prompt"])
                f["position"].append((c["cached"] - lo) / (hi - lo) if hi > lo else 1.0)
                if prev["cached"] and abs(c["cached"] - prev["cached"]) < 0.03 * c["cached"]:
                    # the same kept prefix read twice: its count as reported, and as a share of a context
                    # that counts the earlier turns' thinking (_context)
                    f["plateau"].append((abs(c["cached"] - prev["cached"]), abs(_context(c) - _context(prev))))
                elif c["cached"] > prev["cached"] and prev["cached"]:
                    f["jump"].append(c["cached"] - prev["cached"])
                if c["hidden"] < 0.3 * c["prompt"]:
                    f["context_reads"].append(_context(c))
    return fam


def report(fam: dict[str, dict]) -> str:
    out = []
    for name, f in sorted(fam.items()):
        follow = f["follow"]
        out.append(f"== {name}: {len(f['requests'])} requests, {len(follow)} follow-ups (same session and model, "
                   f"prompt not smaller), {len(f['outside'])} reading more than the previous prompt and reply "
                   "(a cache outside the data)")
        if not follow:
            continue
        hits = [(p, c, g) for p, c, g in follow if c["cached"]]
        prompt = sum(c["prompt"] for _, c, _ in follow)
        out.append(f"  read: {len(hits)} of {len(follow)} ({len(hits) / len(follow):.1%}); read share of their prompts "
                   f"{sum(c['cached'] for _, c, _ in follow) / prompt:.1%}")
        if hits:
            over = sum(c["cached"] > p["prompt"] for p, c, _ in hits)
            out.append(f"  read vs the previous prompt: more (its reply kept too) {over}; shortfall (previous prompt - read) "
                       f"q10/q25/median/q75/q90 {_quantiles(f['shortfall'])} tokens")
            out.append(f"  read smaller than the previous request's read: {sum(f['below_previous_read'])} of {len(hits)}; "
                       f"read ends at or before the previous request's end {sum(b >= 1 for b in f['back'])}, "
                       f"before the one before {sum(b >= 2 for b in f['back'])}")
            pos = f["position"]
            tenths = [sum(int(min(x, 0.999) * 10) == k for x in pos) for k in range(10)]
            out.append("  where a read ends between the two request ends around it (tenths, 0 = the earlier end): "
                       + " ".join(map(str, tenths)))
        gaps: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        sizes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for p, c, g in follow:
            if g is not None and p["prompt"] >= 4096:
                gaps[_band(g, GAPS)][0] += 1
                gaps[_band(g, GAPS)][1] += bool(c["cached"])
            if g is None or g < 600:
                sizes[_band(p["prompt"], SIZES)][0] += 1
                sizes[_band(p["prompt"], SIZES)][1] += bool(c["cached"])
        order = {_band(lo, GAPS): i for i, lo in enumerate(GAPS[:-1])}
        if gaps:
            out.append("  read by gap (s) after the previous request (previous prompt >= 4,096): " + ", ".join(
                f"{k} {v[1]}/{v[0]}" for k, v in sorted(gaps.items(), key=lambda kv: order[kv[0]])))
        order = {_band(lo, SIZES): i for i, lo in enumerate(SIZES[:-1])}
        out.append("  read by previous prompt size (gap < 600 s): " + ", ".join(
            f"{k} {v[1]}/{v[0]}" for k, v in sorted(sizes.items(), key=lambda kv: order[kv[0]])))
        missed = [p["prompt"] for p, c, g in follow if not c["cached"] and (g is None or g < 600)]
        read = [p["prompt"] for p, c, g in hits]
        if f["plateau"]:
            raw, ctx = zip(*f["plateau"])
            out.append(f"  the same prefix read again (reads within 3 %): {len(raw)}; median difference as reported "
                       f"{_quantiles(list(raw)).split(' / ')[2]}, counted with the earlier turns' thinking "
                       f"{sorted(ctx)[len(ctx) // 2]:,.0f}; upward jumps between such levels q10/q25/median/q75/q90 "
                       f"{_quantiles(f['jump'])}")
        if f["context_reads"]:
            out.append(f"  reads counted with the earlier turns' thinking, gathered modulo a unit (0..1; even spread "
                       f"~{1 / len(f['context_reads']) ** 0.5:.2f}, n {len(f['context_reads'])}): " + ", ".join(
                           f"{u:,} {_concentration(f['context_reads'], u):.2f}" for u in (1024, 2048, 4096, 8192)))
        out.append(f"  smallest previous prompt read after: {min(read, default=0):,}; largest not read after "
                   f"(gap < 600 s) below it: {max((x for x in missed if x < min(read, default=0)), default=0):,}")
        for c in f["modalities"]:
            prompt_by, cached_by = c["modalities"]
            share = ", ".join(f"{k} {cached_by.get(k, 0)}/{v} ({cached_by.get(k, 0) / v:.3f})" for k, v in sorted(prompt_by.items()) if v)
            out.append(f"  modalities: read {c['cached']}/{c['prompt']} ({c['cached'] / c['prompt']:.3f}): {share}")
    return "\n".join(out)


def load(paths: list[Path]) -> list[list[dict]]:
    files = [f for p in paths for f in (sorted(p.rglob("*")) if p.is_dir() else [p]) if f.is_file()]
    out, seen = [], set()
    for f in files:
        digest = hashlib.sha256(f.read_bytes()).digest()
        if digest in seen:   # the same recording under two names counts once
            continue
        seen.add(digest)
        if f.suffix in (".yaml", ".yml"):
            calls = cassette(f)
        elif f.suffix in (".json", ".jsonl"):
            calls = session(f)
        else:
            continue
        if calls:
            out.append(calls)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = args.paths or [DATA / "gemini-cli", DATA / "gemini-api"]
    print(report(measure(load(paths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
