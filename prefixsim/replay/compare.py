"""What a what-if variant changes against the replay as recorded: cost and rebuilds per stream and
in total (`compare`), the second half of `prefixsim replay --ttl/--model/...`."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from prefixsim.replay.run import REBUILD_CAUSES, ReplayResult


@dataclass(frozen=True, slots=True)
class StreamDelta:
    stream: str
    cost_base: Decimal
    cost_variant: Decimal
    rebuilds_base: int
    rebuilds_variant: int

    @property
    def cost_delta(self) -> Decimal:
        return self.cost_variant - self.cost_base


@dataclass(frozen=True, slots=True)
class Comparison:
    """What the variant changes against the replay as recorded, per stream and in total."""

    base: ReplayResult
    variant: ReplayResult
    streams: tuple[StreamDelta, ...] = field(default=())

    @property
    def total(self) -> StreamDelta:
        return StreamDelta("total", sum((s.cost_base for s in self.streams), Decimal(0)),
                           sum((s.cost_variant for s in self.streams), Decimal(0)),
                           sum(s.rebuilds_base for s in self.streams),
                           sum(s.rebuilds_variant for s in self.streams))


def compare(base: ReplayResult, variant: ReplayResult) -> Comparison:
    """Cost and rebuild differences per stream between two replays of the same traffic."""
    acc: dict[str, list] = {}
    for which, res in ((0, base), (1, variant)):
        for r in res.rows:
            a = acc.setdefault(r.stream, [Decimal(0), Decimal(0), 0, 0])
            a[which] += r.cost_predicted
            a[2 + which] += r.cause.kind in REBUILD_CAUSES
    return Comparison(base, variant, tuple(StreamDelta(k, *v) for k, v in acc.items()))
