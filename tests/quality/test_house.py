"""The house rules of the code itself (issue 20): one policy interface the runner calls without
probing, and modules small enough to read."""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from prefixsim.providers import PROVIDERS, get_policy
from prefixsim.providers.base import Policy

ROOT = Path(__file__).resolve().parents[2] / "prefixsim"


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
    text = (ROOT / "core" / "simulator.py").read_text()
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


def _imports() -> dict[str, set[str]]:
    """Every prefixsim module's imports of other prefixsim modules, at any depth of the module
    (a function-level import is a dependency too), except those under `if TYPE_CHECKING:`."""
    import ast

    mods = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    graph: dict[str, set[str]] = {}
    for name, p in mods.items():
        tree = ast.parse(p.read_text())
        skip = {id(x) for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
                for b in n.body for x in ast.walk(b)}
        package = name.split(".") if p.name == "__init__.py" else name.split(".")[:-1]
        edges = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for a in node.names:
                    full = f"{target}.{a.name}"
                    edges.add(full if full in mods else target)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
        graph[name] = {e for e in edges if e in mods and e != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path a -> b -> ... -> a, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


@pytest.mark.slow
def test_imports_point_one_way():
    cycle = _cycle(_imports())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_extending_examples_print_what_the_page_says(monkeypatch):
    monkeypatch.chdir(ROOT.parent)   # the examples name files from the repository's root
    examples = doc_examples("extending.md")
    assert len(examples) == 4, "docs/extending.md: one example per recipe"
    for code, shown in examples:
        assert run_example(code) == shown, code


def test_no_module_is_over_400_lines():
    sizes = {str(p.relative_to(ROOT.parent)): len(p.read_text().splitlines()) for p in ROOT.rglob("*.py")}
    over = {k: v for k, v in sizes.items() if v > 400}
    assert not over, f"split these by what they hold: {over}"


def test_ci_checks_ruff_and_mypy_before_the_tests():
    ci = (ROOT.parent / ".ci" / "run").read_text()
    checks = ci.index("ruff check prefixsim tests bench"), ci.index("mypy prefixsim/core prefixsim/providers")
    assert ci.index("pip install") < min(checks) and max(checks) < ci.index("python -m pytest")
    assert ci.rstrip().endswith("python -m pytest")
