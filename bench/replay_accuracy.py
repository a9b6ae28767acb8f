"""Replay accuracy session by session: the targets of issue 14 on transcripts prefixsim has not seen.

    python bench/replay_accuracy.py ~/.claude/projects/-home-me-app [FOLDER ...] [--list N]

Each folder is replayed as `prefixsim replay FOLDER` replays it (its sessions share one cache in time
order). Then, per session (a stream's name before its first `/`; a single transcript is one session):
exact cache reads against the naive mechanism's, the cache_read WAPE, and the read share against the
observed one. It prints the totals, how many sessions miss each target (exact >= naive, WAPE <= 1 %,
read share within 0.5 points), and the sessions that miss by most. The figures in docs/rules.md for
the sidekick corpus (`scotthamilton77/claude-code-sidekick` @e573f94d) come from this script.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WAPE_TARGET = 0.01
SHARE_TARGET = 0.005


class Session:
    __slots__ = ("requests", "exact", "naive", "error", "read", "prompt", "predicted_read", "predicted_prompt")

    def __init__(self) -> None:
        self.requests = self.exact = self.naive = self.error = 0
        self.read = self.prompt = self.predicted_read = self.predicted_prompt = 0

    def add(self, row) -> None:
        obs, pred = row.observed, row.predicted
        self.requests += 1
        self.exact += pred.cache_read == obs.cache_read
        self.naive += row.naive_read == obs.cache_read
        self.error += abs(pred.cache_read - obs.cache_read)
        self.read += obs.cache_read
        self.prompt += obs.prompt_tokens
        self.predicted_read += pred.cache_read
        self.predicted_prompt += pred.prompt_tokens

    @property
    def wape(self) -> float:
        return self.error / self.read if self.read else 0.0

    @property
    def share_gap(self) -> float:
        if not self.prompt or not self.predicted_prompt:
            return 0.0
        return abs(self.read / self.prompt - self.predicted_read / self.predicted_prompt)

    def misses(self) -> tuple[bool, bool, bool]:
        return self.exact < self.naive, self.wape > WAPE_TARGET, self.share_gap > SHARE_TARGET


def sessions(folders: list[Path]) -> dict[str, Session]:
    from prefixsim.replay import replay
    from prefixsim.sources import load
    from prefixsim.sources.problems import collecting

    out: dict[str, Session] = defaultdict(Session)
    for folder in folders:
        with collecting():   # a skipped line is the replay's to report; here it only costs its request
            rows = replay(load(folder)).rows
        for row in rows:
            if row.observed is not None:
                out[f"{folder.name}:{row.stream.split('/')[0]}"].add(row)
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path, help="projects folders, session folders or transcripts")
    ap.add_argument("--list", type=int, default=10, help="sessions to list, by WAPE error tokens (default 10)")
    args = ap.parse_args(argv)
    per = sessions(args.folders)
    total = Session()
    for s in per.values():
        for name in Session.__slots__:
            setattr(total, name, getattr(total, name) + getattr(s, name))
    missed = [sum(s.misses()[k] for s in per.values()) for k in range(3)]
    print(f"{len(per)} sessions, {total.requests:,} requests: exact {total.exact:,} (naive {total.naive:,}), "
          f"WAPE {total.wape:.2%}, read share off by {total.share_gap * 100:.2f} points")
    print(f"sessions with fewer exact reads than naive: {missed[0]}; WAPE above 1 %: {missed[1]}; "
          f"read share off by more than 0.5 points: {missed[2]}")
    worst = sorted(per.items(), key=lambda kv: (-kv[1].error, kv[0]))[:args.list]
    if worst:
        print(f"\n{'session':48} {'requests':>8} {'exact':>6} {'naive':>6} {'WAPE':>7} {'share gap':>9}")
        for name, s in worst:
            print(f"{name[:48]:48} {s.requests:8,} {s.exact:6,} {s.naive:6,} {s.wape:7.2%} "
                  f"{s.share_gap * 100:8.2f}p")
    return 0


if __name__ == "__main__":
    sys.exit(main())
