"""The house rules of the code itself (issue 20): one policy interface the runner calls without
probing, and modules small enough to read."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from prefixsim.providers.base import Policy
from prefixsim.providers.others import OTHER_PROVIDERS
from prefixsim.providers.registry import PROVIDERS, get_policy

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
    assert text.count(".decide(") == 1
    import re
    probe = re.compile(r"\b(?:get|has)attr\(\s*[\w.]*policy\b")
    probing = [str(p.relative_to(ROOT.parent)) for p in ROOT.rglob("*.py") if probe.search(p.read_text())]
    assert not probing, f"a policy's capabilities are declared in providers/base.py's Policy: {probing}"


def test_every_policy_declares_whether_its_retention_is_a_range():
    for name in PROVIDERS:
        policy = get_policy(name)
        assert policy.has_range() is (name in ("openai", "deepseek", "gemini", *OTHER_PROVIDERS)), name


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


def _modules(root: Path = ROOT) -> dict[str, Path]:
    mods = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _imports(root: Path = ROOT, named_only: bool = False) -> dict[str, set[str]]:
    """Every module's imports of the package's other modules, at any depth of the module (a
    function-level import is a dependency too), except those under `if TYPE_CHECKING:`.

    An import runs more than the module it names: `from a.b import c` and `import a.b.c` first run
    the `__init__` of every package on the way (`a`, `a.b`), so those are edges too, except the
    importer's own packages (Python has run them before the importer). `from a.b import c` names
    the module `a.b.c` when there is one, else the package `a.b` (a name its `__init__` defines or
    re-exports). `named_only`: only the modules an import names (the layer contract reads these:
    a table's row is allowed without allowing the package that holds it)."""
    import ast

    mods = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, p in mods.items():
        tree = ast.parse(p.read_text())
        skip = {id(x) for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
                for b in n.body for x in ast.walk(b)}
        package = name.split(".") if p.name == "__init__.py" else name.split(".")[:-1]
        own = {".".join(package[:i]) for i in range(1, len(package) + 1)}
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
                ran = target.split(".")
                ran_all = [".".join(ran[:i]) for i in range(1, len(ran) + 1)]
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
                ran_all = [".".join(a.name.split(".")[:i]) for a in node.names for i in range(1, a.name.count(".") + 1)]
            else:
                continue
            if not named_only:
                edges.update(set(ran_all) - own)
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


def test_the_import_graph_sees_the_packages_an_import_runs(tmp_path):
    """`from pkg import submodule` and `from pkg.mod import name` run `pkg/__init__.py` (unless it is
    the importer's own package): a circle through a package's re-exports is a circle."""
    pkg = tmp_path / "p"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("def f():\n    from p.b import y\n")
    (pkg / "a" / "x.py").write_text("from p.a import helper\n")
    (pkg / "b" / "__init__.py").write_text("")
    (pkg / "b" / "y.py").write_text("from p.a import x\nfrom typing import TYPE_CHECKING\n"
                                    "if TYPE_CHECKING:\n    from p.b import z\n")
    (pkg / "b" / "z.py").write_text("import p.a.x\n")
    graph = _imports(pkg)
    assert graph["p.a"] == {"p.b", "p.b.y"}          # a function-level import, and the package it runs
    assert graph["p.a.x"] == {"p.a"}                 # a name of the package: its __init__
    assert graph["p.b.y"] == {"p.a", "p.a.x"}        # p.a's __init__ runs first; TYPE_CHECKING is skipped
    assert graph["p.b.z"] == {"p.a", "p.a.x"}
    assert _imports(pkg, named_only=True)["p.b.y"] == {"p.a.x"}
    assert _cycle(graph) == ["p.a", "p.b.y", "p.a"]


#: The layers, bottom-up: a module may import its own layer and the layers below it, never one above.
#: A layer is a folder of prefixsim/ (or a root module), or a module that sits above the rest of its
#: folder: the simulation loop (core.simulator) runs the provider rules; the policies by name
#: (providers.registry) include the serving engines' (engines.policy, built on providers.base); the
#: engines' trace replays read their files with sources' helpers. providers.tables is data: any
#: layer may read it.
LAYERS = ["prefixsim", "model", "errors", "io", "_perf", "core", "providers", "wire",
          "engines", "engines.policy", "providers.registry", "latency", "core.simulator",
          "sources", "engines.trace", "engines.cluster", "engines.export", "serving",
          "scenario", "replay",
          # report's primitives (text layout, charts, the run tables) serve the studies and the advice
          # below the report builders (build, html, pareto, breakeven, replay) that sit on top of them
          "report.layout", "report.csvout", "report.charts", "report.answer", "report.tables",
          "analysis", "advise", "report", "examples", "templates", "commands", "api", "cli", "__main__"]
MAY_IMPORT: dict[str, set[str]] = {layer: set(LAYERS[:i]) for i, layer in enumerate(LAYERS)}
DATA = {"prefixsim.providers.tables"}
#: Imports that still point up, each with why; the test fails when one is added, and when one listed
#: here is gone (then strike it).
KNOWN_UP: set[tuple[str, str]] = set()


def _layer(module: str) -> str:
    name = module.removeprefix("prefixsim").removeprefix(".") or "prefixsim"
    return max((u for u in LAYERS if name == u or name.startswith(u + ".")), key=len, default=name)


def test_the_layer_table_covers_every_module():
    assert {_layer(m) for m in _modules()} - set(LAYERS) == set(), "add the new folder to LAYERS"
    assert _layer("prefixsim.core.simulator") == "core.simulator" and _layer("prefixsim.core.store") == "core"


@pytest.mark.slow
def test_imports_point_down_the_layers():
    up = {(a, b) for a, targets in _imports(named_only=True).items() for b in targets
          if b not in DATA and _layer(b) != _layer(a) and _layer(b) not in MAY_IMPORT[_layer(a)]}
    assert up - KNOWN_UP == set(), "imports pointing up a layer (docs/architecture.md): " + ", ".join(
        f"{a} -> {b}" for a, b in sorted(up - KNOWN_UP))
    assert KNOWN_UP - up == set(), f"no longer pointing up, strike from KNOWN_UP: {sorted(KNOWN_UP - up)}"


def test_the_root_holds_only_the_entry_points_and_the_shared_types():
    assert {p.name for p in ROOT.glob("*.py")} == {"__init__.py", "__main__.py", "api.py", "errors.py", "model.py"}
    assert (ROOT / "cli" / "__init__.py").is_file()   # the entry point: its page and its click group beside it


@pytest.mark.slow
def test_python_dash_m_prefixsim_is_the_cli():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "prefixsim", "--help"], cwd=ROOT.parent, capture_output=True,
                         text=True, check=True)
    assert out.stdout.startswith("Usage: prefixsim") and "replay" in out.stdout


def test_extending_examples_print_what_the_page_says(monkeypatch):
    monkeypatch.chdir(ROOT.parent)   # the examples name files from the repository's root
    examples = doc_examples("extending.md")
    assert len(examples) == 4, "docs/extending.md: one example per recipe"
    for code, shown in examples:
        assert run_example(code) == shown, code


def test_no_module_is_over_400_lines():
    sizes = {str(p.relative_to(ROOT.parent)): len(p.read_text().splitlines()) for p in ROOT.rglob("*.py")}
    over = {k: v for k, v in sizes.items() if v > 400}
    assert not over, f"split these by what they hold, into modules of the package each came from: {over}"


def test_ci_checks_ruff_and_mypy_before_the_tests():
    ci = (ROOT.parent / ".ci" / "run").read_text()
    checks = ci.index("ruff check prefixsim tests bench"), ci.index("mypy prefixsim/core prefixsim/providers")
    assert ci.index("pip install") < min(checks) and max(checks) < ci.index("python -m pytest")
    assert ci.rstrip().endswith("python -m pytest")


#: Being made thin elsewhere (their imports move with their code); every other module is held to it.
#: A module whose function-level imports all wait for one reason says it once, at column 0.
_LAZY_MODULE = re.compile(r"^# lazy imports: \S", re.M)


def test_every_function_level_import_says_why_it_is_lazy():
    """An import inside a function is there for start-up time (tests/quality/test_startup.py) and
    says so: `# lazy: <reason>` on its line or the line above, or the module's `# lazy imports:
    <reason>` (a command module: `prefixsim --help` imports each to list it); any other import is at
    the top."""
    import ast

    silent = []
    for p in ROOT.rglob("*.py"):
        rel = str(p.relative_to(ROOT))
        text = p.read_text()
        if _LAZY_MODULE.search(text):
            continue
        lines = text.splitlines()
        tree = ast.parse("\n".join(lines))
        skip = {id(x) for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
                for b in n.body for x in ast.walk(b)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and node.col_offset and id(node) not in skip:
                near = lines[node.lineno - 1] + lines[node.lineno - 2]
                if "# lazy:" not in near:
                    silent.append(f"{rel}:{node.lineno}")
    assert not silent, f"move these imports to the module's top, or say why they wait (# lazy: ...): {silent}"
