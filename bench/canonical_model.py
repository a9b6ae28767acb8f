"""`providers.model_ids.canonical_model` memoized vs its six rewrites run on every call (issue 35:
8.5 % of a large transcript folder's replay before the memo), side by side in one process.

A Claude Code projects folder (bench/memory.py's writer, `--mb`, default 40 MB; `--small`: the shared
tests/data/claude-code) is read and replayed in process (`sources.open_many` + `replay.replay`),
alternately with the memo and with the unmemoized rewrites (`_canonical.__wrapped__` swapped in: every
caller goes through the module's `_canonical`); CPU time, median of `--pairs` alternating pairs, after
one untimed run of each. The rows are asserted equal. Beside it, the look-up alone: the ids of the
folder's requests, three look-ups per request, as the replay asks them.

    python bench/canonical_model.py [--small] [--mb 40] [--pairs 5]
"""
from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from _common import report
from memory import write_folder

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "claude-code"


def timed(root: Path, memo: bool) -> tuple[float, tuple]:
    from prefixsim import sources
    from prefixsim.providers import model_ids
    from prefixsim.replay import replay

    cached = model_ids._canonical
    if not memo:
        model_ids._canonical = cached.__wrapped__   # type: ignore[assignment]
    try:
        t = time.process_time()
        rows = replay(sources.open_many([root], None, errors=[])).rows
        return time.process_time() - t, rows
    finally:
        model_ids._canonical = cached


def lookups(ids: list[str], memo: bool) -> float:
    from prefixsim.providers import model_ids

    fn = model_ids._canonical if memo else model_ids._canonical.__wrapped__
    t = time.process_time()
    for m in ids:
        fn(m)
    return time.process_time() - t


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tests/data/claude-code, one pair (CI smoke run)")
    ap.add_argument("--mb", type=float, default=40)
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args(argv)
    pairs = 1 if args.small else args.pairs
    with tempfile.TemporaryDirectory() as d:
        root = DATA if args.small else Path(d)
        if not args.small:
            write_folder(root, int(args.mb * 1e6))
        _, rows = timed(root, True)                # untimed: imports, price tables, tokenizer, file cache
        _, plain_rows = timed(root, False)
        assert plain_rows == rows, "the memo changed the replay"
        on: list[float] = []
        off: list[float] = []
        for i in range(pairs):
            for memo in ((True, False) if i % 2 == 0 else (False, True)):
                (on if memo else off).append(timed(root, memo)[0])
    ids = [r.model for r in rows] * 3
    random.Random(35).shuffle(ids)
    lookups(ids, True)
    small = min(lookups(ids, True) for _ in range(5)), min(lookups(ids, False) for _ in range(5))
    t_on, t_off = statistics.median(on), statistics.median(off)
    print(f"{len(rows)} requests ({'tests/data/claude-code' if args.small else f'{args.mb:g} MB folder'}); "
          f"CPU medians of {pairs} alternating pairs: memoized {t_on:.2f} s, unmemoized {t_off:.2f} s: "
          f"{t_on / t_off:.3f}x; rows identical")
    print(f"the look-ups alone ({len(ids)} calls): memoized {small[0] * 1e3:.1f} ms, "
          f"unmemoized {small[1] * 1e3:.1f} ms: {small[0] / small[1]:.3f}x")
    return [report("canonical_model memoized / unmemoized, replay CPU", t_on / t_off, "< 1", t_on < t_off)]


if __name__ == "__main__":
    main()
