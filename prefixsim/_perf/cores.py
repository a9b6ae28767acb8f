"""How many cores a pool of worker processes can really have: `--workers 0` (run, replay) asks for
one per core that no other process keeps busy, so that on a machine already loaded the work stays
in this process instead of running slower in several."""
from __future__ import annotations

import os


def free_cores() -> int:
    """The core count less the last minute's load average, this process excluded (it counts in the
    load while it reads, and waits while its workers run): at least 1."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):   # not on every platform: take every core as free
        return cores
    return max(1, min(cores, int(cores - load + 1)))
