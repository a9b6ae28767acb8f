"""The README's Quickstart is what CI runs: keep the two in step. Its library example prints what the
README shows."""
import contextlib
import io
import re

from doc_pages import README, ROOT


def test_ci_runs_the_readme_test_command():
    readme = README.read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert test_cmd in readme
    assert "pytest" in test_cmd


def test_readme_quickstart_runs_the_main_job():
    readme = README.read_text()
    assert "pip install -q -e . && prefixsim run scenarios/" in readme


def test_readme_is_read_in_ten_minutes():
    assert len(README.read_text().splitlines()) <= 200, "the README is a front page: the manual lives in docs/"


def test_readme_library_example_prints_what_the_readme_shows(monkeypatch):
    examples = re.findall(r"```python\n(.*?)```\n\n```text\n(.*?)```", README.read_text(), re.S)
    assert len(examples) == 1, "the README has one library example, with its output"
    code, shown = examples[0]
    assert len([x for x in code.splitlines() if x.strip()]) <= 6
    monkeypatch.chdir(ROOT)   # the example names files from the repository's root
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<README example>", "exec"), {"__name__": "readme_example"})
    assert [x.rstrip() for x in out.getvalue().splitlines()] == [x.rstrip() for x in shown.splitlines()]


# Issue 34 item 11: the README's lists are true. Every input format and every provider is named on the
# front page (a format or provider added without it fails here), and every test that can skip is named
# where the README says what skips.
FORMAT_NAMES = {"claude-code": "Claude Code", "anthropic": "Anthropic", "openai": "OpenAI", "deepseek": "DeepSeek",
                "cohere": "Cohere", "gemini": "Gemini", "bedrock": "Bedrock Converse", "realtime": "Realtime",
                "codex": "Codex CLI", "gemini-cli": "Gemini CLI", "otel": "OpenTelemetry", "litellm": "LiteLLM",
                "langfuse": "Langfuse", "opencode": "OpenCode", "mooncake": "Mooncake", "bailian": "bailian"}
PROVIDER_NAMES = {"anthropic": "Anthropic", "bedrock": "Bedrock", "vertex": "Vertex", "gemini": "Gemini",
                  "openai": "OpenAI", "deepseek": "DeepSeek", "vllm": "vLLM", "sglang": "SGLang", "groq": "Groq",
                  "mistral": "Mistral", "xai": "xAI", "zai": "Z.ai", "moonshot": "Moonshot", "together": "Together",
                  "fireworks": "Fireworks", "cohere": "Cohere"}
NOT_PROVIDERS = {"prefix", "other"}   # the seeds' accounting model; an unknown host's automatic rule


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_readme_names_every_input_format():
    from prefixsim.io.input_formats import FORMATS

    real_traffic = _flat(README.read_text()).split("on **real traffic** (")[1].split("`prefixsim replay`")[0]
    assert set(FORMAT_NAMES) == set(FORMATS)
    assert [f for f in FORMATS if FORMAT_NAMES[f] not in real_traffic] == []


def test_the_readme_names_every_provider_whose_cache_it_models():
    from prefixsim.providers.registry import PROVIDERS

    caches = _flat(README.read_text()).split("Provider prompt caches (")[1].split("reuse work")[0]
    assert set(PROVIDER_NAMES) == set(PROVIDERS) - NOT_PROVIDERS
    assert [p for p, name in PROVIDER_NAMES.items() if name not in caches] == []


def test_the_readme_names_every_test_that_can_skip():
    said = _flat(README.read_text()).split("## Working on prefixsim")[1]
    can_skip = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py")
                      if "tests/data" not in str(p) and re.search(r"\b(skipif|importorskip|pytest\.skip)\(",
                                                                    p.read_text(encoding="utf-8")))
    assert can_skip and [p for p in can_skip if p not in said and p != "tests/docs/test_readme.py"] == []
