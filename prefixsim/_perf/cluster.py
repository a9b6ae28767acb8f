"""The executors a run or a replay can go to, and dask.distributed's Client once the options are
checked. Kept apart from the scenario runner and the replay's sharding so that checking the options
loads neither (a replay asked for `--workers 0` that stays in this process loaded the scenario
machinery to check them: 0.2-0.3 s, more than a small replay takes)."""
from __future__ import annotations

from prefixsim.errors import UserError

EXECUTORS = ("local", "dask")


def dask_client(executor: str, scheduler: str | None):
    """dask.distributed's Client class for `--executor dask` (None for local runs), once the executor
    and scheduler options are checked: both the scenario runs and the sharded replay use it."""
    if executor not in EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (valid: {', '.join(EXECUTORS)})")
    if executor != "dask":
        if scheduler:
            raise UserError("--scheduler applies to --executor dask only")
        return None
    if not scheduler:
        raise UserError("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
    try:
        from distributed import Client  # lazy: optional: only a dask cluster run needs it
    except ImportError:
        raise UserError("--executor dask needs dask.distributed: pip install 'prefixsim[dask]'") from None
    return Client
