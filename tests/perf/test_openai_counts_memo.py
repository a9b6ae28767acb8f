"""An OpenAI-format recording replayed a second time finds its texts' counts remembered (the start-up
memo, as transcripts do: core/tokens.remembered_count), so it neither imports tiktoken nor builds the
encoding, and prints the same bytes (issue 35: building o200k_base was a fifth of an OpenAI log's replay)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import data_file

ROOT = Path(__file__).resolve().parents[2]


def _replay(cache: Path, path: Path) -> tuple[str, list[str]]:
    code = ("import contextlib, io, json, sys\nfrom prefixsim.cli import main\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):\n"
            f"    main(['replay', {str(path)!r}, '--requests'])\n"
            "print(json.dumps([buf.getvalue(), sorted(m for m in sys.modules if m.split('.')[0] == 'tiktoken')]))")
    env = {**os.environ, "PREFIXSIM_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=cache.parent, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.no_mutation
@pytest.mark.slow
@pytest.mark.parametrize("name", ["openai-api/test_openai_chat_prompt_cache_e2e.yaml",
                                  "gemini-api/test_google_model_cached_content.yaml"])
def test_second_replay_of_a_recording_counts_from_the_memo_and_prints_the_same(tmp_path, name):
    path = data_file(name)
    first, first_mods = _replay(tmp_path / "memo", path)
    assert "tiktoken" in first_mods
    assert any(p.name.startswith("counts-") for p in (tmp_path / "memo").iterdir())
    second, second_mods = _replay(tmp_path / "memo", path)
    assert second_mods == []
    assert second == first
    assert _replay(tmp_path / "off", path)[0] == first
