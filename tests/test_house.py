"""The house rules of the code itself (issue 20): one policy interface the runner calls without
probing, and modules small enough to read."""
from __future__ import annotations

import inspect
from pathlib import Path

from prefixsim.providers import PROVIDERS, get_policy
from prefixsim.providers.base import Policy

ROOT = Path(__file__).resolve().parent.parent / "prefixsim"


def test_every_policy_takes_the_one_decide_signature():
    want = inspect.signature(Policy.decide)
    for name in PROVIDERS:
        policy = get_policy(name)
        got = inspect.signature(type(policy).decide)
        assert list(got.parameters) == list(want.parameters), name
        for p in want.parameters.values():
            q = got.parameters[p.name]
            assert q.kind == p.kind, (name, p.name)
            assert (q.default is inspect.Parameter.empty) == (p.default is inspect.Parameter.empty), (name, p.name)


def test_the_runner_does_not_probe_its_policy():
    text = (ROOT / "runner.py").read_text()
    assert "getattr(self.policy" not in text
    assert text.count(".decide(") == 1


DOCS = ROOT.parent / "docs"
_BLOCK = __import__("re").compile(r"```python\n(.*?)```\n\n```text\n(.*?)```", __import__("re").S)


def doc_examples(name: str) -> list[tuple[str, str]]:
    return _BLOCK.findall((DOCS / name).read_text())


def run_example(code: str) -> str:
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<doc example>", "exec"), {"__name__": "doc_example"})
    return out.getvalue()


def test_architecture_example_prints_what_the_page_says():
    examples = doc_examples("architecture.md")
    assert examples, "docs/architecture.md lost its worked example"
    for code, shown in examples:
        assert run_example(code) == shown
