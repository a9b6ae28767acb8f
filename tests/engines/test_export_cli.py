"""`replay --export-mooncake`: real traffic written as a Mooncake trace that replays as one."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

# Runs the command in a child interpreter, which a mutation run's switch does not reach.
pytestmark = pytest.mark.no_mutation

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_export_round_trip(tmp_path):
    system = [{"type": "text", "text": "You are a careful assistant. " * 400}]
    log = tmp_path / "calls.jsonl"
    msgs, lines = [], []
    for i in range(3):
        msgs = msgs + [{"role": "user", "content": f"question {i} " * 50}]
        body = {"model": "claude-sonnet-4-5", "system": system, "messages": list(msgs),
                "cache_control": {"type": "ephemeral"}}
        lines.append(json.dumps({"timestamp": f"2026-11-30T10:00:0{i}Z", "request": body}))
        msgs = msgs + [{"role": "assistant", "content": f"answer {i} " * 40}]
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "trace.jsonl"
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(log),
                        "--export-mooncake", str(out), "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 3 and all({"timestamp", "input_length", "output_length", "hash_ids"} <= r.keys() for r in rows)
    # each later prompt extends the earlier one, so it starts with the earlier prompt's full blocks
    assert rows[1]["hash_ids"][: len(rows[0]["hash_ids"]) - 1] == rows[0]["hash_ids"][:-1]
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "replay", str(out),
                        "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["summary"]["hit_rate"] > 0.5
