"""An OpenAI-format recording replayed a second time finds its texts' counts remembered (the start-up
memo, as transcripts do: core/tokens.remembered_count), so it neither imports tiktoken nor builds the
encoding, and prints the same bytes (issue 35: building o200k_base was a fifth of an OpenAI log's replay;
Anthropic's readers built cl100k_base on every run)."""
from pathlib import Path

import pytest
from conftest import data_file
from fresh_replay import replay_fresh


def _replay(cache: Path, path: Path) -> tuple[str, list[str]]:
    return replay_fresh(cache, [str(path), "--requests"], ("tiktoken",))


@pytest.mark.no_mutation
@pytest.mark.slow
@pytest.mark.parametrize("name", ["openai-api/test_openai_chat_prompt_cache_e2e.yaml",
                                  "gemini-api/test_google_model_cached_content.yaml",
                                  # Anthropic's readers counted with the encoding on every run (0.24 s of a 110 MB log's)
                                  "anthropic-api/test_anthropic_cache_real_api.yaml"])
def test_second_replay_of_a_recording_counts_from_the_memo_and_prints_the_same(tmp_path, name):
    path = data_file(name)
    first, first_mods = _replay(tmp_path / "memo", path)
    assert "tiktoken" in first_mods
    assert any(p.name.startswith("counts-") for p in (tmp_path / "memo").iterdir())
    second, second_mods = _replay(tmp_path / "memo", path)
    assert second_mods == []
    assert second == first
    assert _replay(tmp_path / "off", path)[0] == first
