"""The causes real traffic shows without any model: the oracle bench/fidelity.py scores the replay's
predicted causes against (issue 37). Only what the observed usage, the times and the recorded bodies
prove is labelled; a request whose cause the data leaves open is not scored at all.

- `hit`: a request of a Claude platform (which reports its writes) that read at least what its
  stream's previous request kept (read + written), within that entry's TTL: nothing was lost, so the
  replay must name no cause.
- `ttl_expired`: the stream's previous request kept something, the gap is longer than the provider's
  retention can be (Claude: the TTL the stream wrote plus the slack within which an entry is often
  still read; others: the optimistic end of the retention), and the request read less than was kept
  (at most what another stream kept warm).
- `below_minimum`: on an automatic cache (no breakpoints to forget), a request that repeats its
  stream's previous prompt (recorded text, block for block) and more, well inside the retention,
  shorter than the documented minimum, read nothing: had the prefix been cacheable it would have been read.
- `prefix_changed` in the tools layer: both requests' tool definitions are recorded text (not
  reconstructed), they differ, the gap is well inside the TTL, and the request read less than was kept.
  The expected detail names the first tool block that differs.
"""
from __future__ import annotations

from dataclasses import dataclass

from functools import cache

from prefixsim.errors import UserError
from prefixsim.model import TTL_SECONDS, CauseKind, Layer
from prefixsim.providers.tables import ANTHROPIC_TTL_SLACK, CLAUDE_PLATFORMS
from prefixsim.replay.audit_causes import UsageCauses
from prefixsim.sources.record import Record

SLACK = float(ANTHROPIC_TTL_SLACK.value)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the data shows of one request's cause: the kind, and for a tools change the place."""

    kind: str
    place: str = ""   # "tools layer, block 3": the start the replay's detail must have

    def agrees(self, kind: str, detail: str) -> bool:
        return kind == self.kind and detail.startswith(self.place)


def _tools(rec: Record) -> tuple[bytes, ...] | None:
    """The request's tool blocks as sent, or None where any of them is reconstructed (a transcript's
    static prefix is inferred by the replay itself, so it proves nothing)."""
    blocks = [b for b in rec.call.request.blocks if b.layer == Layer.TOOLS]
    if any(b.tokens is not None and b.sees is None for b in blocks):
        return None
    return (rec.call.request.layer_params[Layer.TOOLS], *(b.key for b in blocks))


@cache
def _surely_kept(provider: str, model: str) -> float:
    """The idle time within which an automatic cache keeps an entry at both ends of its retention
    (the pessimistic end; a provider without rules: its stated default's)."""
    from prefixsim.providers.registry import get_policy

    try:
        return float(get_policy(provider, "optimistic", listed_only=False).rule_of(model).ttl)  # type: ignore[attr-defined]
    except (UserError, AttributeError):
        from prefixsim.providers.others import STATED_DEFAULT

        return float(STATED_DEFAULT.ttl)


def _sent(rec: Record) -> tuple[bytes, ...] | None:
    """Every block of the request as sent, or None where any is reconstructed."""
    blocks = rec.call.request.blocks
    if any(b.tokens is not None and b.sees is None for b in blocks):
        return None
    return tuple(rec.call.request.layer_params) + tuple(b.key for b in blocks)


def evidence(records: list[Record]) -> list[Evidence | None]:
    """Per record (time order, as the replay walks them), the cause its data proves, or None."""
    hour = {r.call.stream for r in records if r.observed is not None and r.observed.cache_write_1h}
    limits = UsageCauses(hour)
    last: dict[tuple[str, str], tuple[float, int, tuple[bytes, ...] | None, tuple[bytes, ...] | None]] = {}
    out: list[Evidence | None] = []
    for rec in records:
        obs = rec.observed
        if obs is None or rec.audit:
            out.append(None)
            continue
        key = (rec.call.stream, rec.call.request.model)
        prev = last.get(key)
        claude = rec.provider in CLAUDE_PLATFORMS
        ttl, minimum, _, unit = limits.limits(rec.provider, rec.call.request.model, rec.call.stream in hour)
        kept_now = obs.cache_read + obs.cache_creation
        if unit and obs.prompt_tokens >= minimum:   # an automatic cache kept the prompt, in its units
            kept_now = max(kept_now, obs.prompt_tokens - obs.prompt_tokens % unit)
        tools, sent = _tools(rec), _sent(rec)
        last[key] = (rec.call.t, kept_now, tools, sent)
        if prev is None:
            out.append(None)
            continue
        t0, kept, prev_tools, prev_sent = prev
        gap = rec.call.t - t0
        if claude:
            ttl = TTL_SECONDS["1h" if rec.call.stream in hour else "5m"]
        inside = ttl - SLACK if claude else _surely_kept(rec.provider, rec.call.request.model)
        lost = obs.cache_read < min(kept, obs.prompt_tokens)
        if obs.prompt_tokens < minimum:
            repeats = (sent is not None and prev_sent is not None and len(sent) > len(prev_sent)
                       and sent[:3] == prev_sent[:3] and sent[3:len(prev_sent)] == prev_sent[3:])
            out.append(Evidence(CauseKind.BELOW_MINIMUM) if not claude and repeats and not obs.cache_read
                       and gap < inside else None)
        elif kept == 0:
            out.append(None)
        elif lost and gap >= ttl + (SLACK if claude else 0.0):
            out.append(Evidence(CauseKind.TTL_EXPIRED))
        elif lost and gap < inside and tools is not None and prev_tools is not None and tools != prev_tools:
            i = next((k for k, (a, b) in enumerate(zip(tools[1:], prev_tools[1:])) if a != b),
                     min(len(tools), len(prev_tools)) - 1)
            # a change of the tools layer's parameters shows at its first block
            out.append(Evidence(CauseKind.PREFIX_CHANGED, f"tools layer, block {0 if tools[0] != prev_tools[0] else i}"))
        elif claude and not lost and obs.cache_read >= kept and gap < inside:
            out.append(Evidence(CauseKind.HIT))
        else:
            out.append(None)
    return out
