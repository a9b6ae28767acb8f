"""`replay --workers 0` (or any count) on traffic too small to shard replays in this process and
costs nothing over serial: checking the options loaded the scenario runner (pydantic, the scenario
loader) through `scenario.parallel.dask_client`, 0.2-0.3 s on every small replay, more than a small
replay takes (bench/workers_auto.py: 1.16-1.58x serial on tests/data before, 0.92-1.07x after)."""
import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"

PROBE = """
import json, sys
from prefixsim.cli import main
sys.argv = ["prefixsim", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps({m: m in sys.modules for m in ("prefixsim.scenario.parallel", "prefixsim.scenario.loader",
                                                 "pydantic", "joblib")}), file=sys.stderr)
"""


def _loaded(*args: str) -> dict:
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True, cwd=root,
                       env={**os.environ, "PYTHONPATH": str(root), "PREFIXSIM_CACHE_DIR": "off"})
    return json.loads(p.stderr.strip().splitlines()[-1])


def test_a_small_replay_with_workers_loads_no_scenario_runner_nor_pool():
    """What a serial replay loads, no more (pydantic comes with genai-prices when the memo is off)."""
    path = str(DATA / "claude-code" / "spotter")
    serial = _loaded("replay", path, "--format", "json")
    assert not serial["prefixsim.scenario.parallel"] and not serial["joblib"]
    for workers in ("0", "2"):
        assert _loaded("replay", path, "--format", "json", "--workers", workers) == serial, workers


def test_the_executor_options_are_still_checked_first():
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "replay",
                        str(DATA / "claude-code" / "spotter"), "--workers", "0", "--scheduler", "tcp://x:1"],
                       capture_output=True, text=True, env={**os.environ, "PREFIXSIM_CACHE_DIR": "off"})
    assert p.returncode == 2 and "--scheduler applies to --executor dask only" in p.stderr
