"""`prefixsim replay` in a fresh Python process with its own start-up memo folder: what it printed and
which of the named packages it imported (the memo tests: a remembered count or rate imports none)."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def replay_fresh(cache: Path, args: list[str], packages: tuple[str, ...]) -> tuple[str, list[str]]:
    code = ("import contextlib, io, json, sys\nfrom prefixsim.cli import main\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
            f"    main(['replay', *{args!r}])\n"
            f"print(json.dumps([buf.getvalue(), sorted(m for m in sys.modules if m.split('.')[0] in {packages!r})]))")
    env = {**os.environ, "PREFIXSIM_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=cache.parent, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.splitlines()[-1])
