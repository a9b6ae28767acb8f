"""How many cores a pool of worker processes can really have: `--workers 0` (run, replay) asks for
one per core that no other process keeps busy, so that on a machine already loaded the work stays
in this process instead of running slower in several."""
from __future__ import annotations

import os

from prefixsim.errors import UserError


def free_cores() -> int:
    """The core count less the last minute's load average, this process excluded (it counts in the
    load while it reads, and waits while its workers run): at least 1."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):   # not on every platform: take every core as free
        return cores
    return max(1, min(cores, int(cores - load + 1)))


def processes(asked: int, most: int | None = None) -> int:
    """The local processes `--workers asked` gets (run and replay alike): 0 or -1 one per free core,
    a count as asked; never more than the cores (more only queue, each a Python start-up and its
    memory) nor than `most` (the tasks there are); at least 1. A count below -1 is the user's mistake."""
    if asked < -1:
        raise UserError(f"--workers must be a count of processes, 0 or -1 for every core; got {asked}")
    cores = os.cpu_count() or 1
    return max(1, min(free_cores() if asked in (0, -1) else asked, cores, cores if most is None else most))
