"""The README and the pages of docs/ stay true to the code and to each other.

(a) every source a rule row of the code gives (providers/tables.py, and any `docs/rules.md#...` or
    source key cited anywhere in prefixsim/) resolves to a heading or a source key of docs/rules.md;
(b) every test the pages cite (`tests/x.py::test_name`) exists;
(c) every code location they cite (`prefixsim/x.py: NAME`) exists, and every path they name exists;
(d) every link between them (`[text](page.md#anchor)`, relative paths) resolves to a file and a heading.
"""
import ast
import importlib
import re
from pathlib import Path

import pytest
from doc_pages import PAGES

from prefixsim.providers import deepseek_tables, others, tables

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules.md"
EXAMPLES = ROOT / "docs" / "worked-examples.md"
DOCS = tuple(PAGES)   # README.md and every page of docs/

TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[[^\]`]*\])?`")
CODE_REF = re.compile(r"`(prefixsim/[\w/]+\.py): ([A-Za-z_][\w.]*)`")
# Paths of this repository (`docs/design/...` and the like are other projects' files: docs/ is flat).
PATH_REF = re.compile(r"`((?:prefixsim|tests|scenarios)/[\w/.-]*|docs/[\w.-]+)`")
ANCHOR_REF = re.compile(r"docs/rules\.md#([\w-]+)")
# A source key as the code writes it: A-PC, CC-WF, O-OLD, ... Dates (YYYY-MM-DD) are not keys.
KEY_LIKE = re.compile(r"(?<![\w-])[A-Z]{1,3}-[A-Z]{2,5}(?![\w-])")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(text: str) -> list[str]:
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.append(line.lstrip("#").strip())
    return out


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for h in headings(text):
        s = slug(h)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")   # GitHub numbers repeated headings
        seen[s] = n + 1
    return out


def source_keys(text: str) -> set[str]:
    """First cells of the table under `## Source keys`."""
    part = text.split("\n## Source keys\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in part.splitlines() if line.startswith("| ") and not line.startswith("| Key")]
    return {line.split("|")[1].strip() for line in rows}


RULES_TEXT = RULES.read_text()
ANCHORS = anchors(RULES_TEXT)
KEYS = source_keys(RULES_TEXT)


#: The modules that hold rule rows: tables.py, and the other providers' rules kept beside it.
RULE_MODULES = {"prefixsim/providers/tables.py": tables, "prefixsim/providers/deepseek_tables.py": deepseek_tables,
                "prefixsim/providers/others.py": others}


def table_rows():
    """(name, source) of every rule row in providers/tables.py and providers/others.py: Sourced,
    AutoRule, and dicts of them (a dict of dicts too: others.OTHER_RULES)."""
    out = []

    def walk(name, value):
        if isinstance(value, (tables.Sourced, tables.AutoRule)):
            out.append((name, value.source))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(f"{name}[{k}]", v)

    for module in RULE_MODULES.values():
        for name, value in vars(module).items():
            walk(name, value)
    return out


def code_files():
    return sorted((ROOT / "prefixsim").rglob("*.py"))


def cited(pattern, docs=DOCS):
    return sorted({m.groups() if len(m.groups()) > 1 else m.group(1)
                   for d in docs for m in pattern.finditer(d.read_text())})


# --- (a) sources in the code resolve to docs/rules.md ----------------------------------------

def test_rules_page_has_its_sections_and_keys():
    for anchor in ("source-keys", "anthropic-minimum-cacheable-length", "not-modelled-and-simplifications",
                   "known-gaps-being-fixed", "vllm", "sglang", "openai-retention", "deepseek"):
        assert anchor in ANCHORS, anchor
    assert {"A-PC", "A-PR", "A-TU", "CC-PC", "CC-WF", "O-PC", "O-OLD", "DS", "vLLM", "SGL"} <= KEYS


@pytest.mark.parametrize("name,source", table_rows(), ids=[n for n, _ in table_rows()])
def test_every_table_row_names_a_key_and_a_rules_section(name, source):
    key = re.split(r"[ ,:]", source, maxsplit=1)[0]
    assert key in KEYS, f"{name}: source {source!r} does not start with a key of docs/rules.md#source-keys"
    refs = ANCHOR_REF.findall(source)
    assert refs, f"{name}: source {source!r} names no docs/rules.md section"
    for r in refs:
        assert r in ANCHORS, f"{name}: docs/rules.md#{r} is not a heading of docs/rules.md"


def test_table_rows_exist():
    names = {n.split("[")[0] for n, _ in table_rows()}
    assert {"ANTHROPIC_MIN_TOKENS", "ANTHROPIC_LOOKBACK", "OPENAI_RULES", "DEEPSEEK_RULE"} <= names


@pytest.mark.parametrize("path", code_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_source_references_in_the_code_resolve(path):
    text = path.read_text()
    outside = "../" + "shared"   # spelled in two parts so this file does not name it either
    assert outside not in text and "cache-semantics" not in text, f"{path}: refers outside the repository"
    assert "§" not in text, f"{path}: a section number of a document outside the repository"
    for r in ANCHOR_REF.findall(text):
        assert r in ANCHORS, f"{path}: docs/rules.md#{r} is not a heading of docs/rules.md"
    for k in KEY_LIKE.findall(text):
        assert k in KEYS, f"{path}: source key {k} is not listed in docs/rules.md#source-keys"


def test_every_public_rule_table_is_documented():
    documented = {name for file, name in cited(CODE_REF, (RULES,)) if file in RULE_MODULES}
    public = {n.split("[")[0] for n, _ in table_rows() if not n.startswith("_")}
    assert public <= documented, f"tables.py rows missing from docs/rules.md: {sorted(public - documented)}"


def test_links_inside_the_documents_resolve():
    for d in (RULES, EXAMPLES):
        text = d.read_text()
        local = re.findall(r"\]\(#([\w-]+)\)", text) if d == RULES else []
        for r in local + re.findall(r"\]\(rules\.md#([\w-]+)\)", text):
            assert r in ANCHORS, f"{d.name}: link to #{r} has no heading in docs/rules.md"


def links():
    """(page, target) of every markdown link of the pages to a file of this repository or a heading."""
    out = []
    for d in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", d.read_text()):
            if not re.match(r"[a-z]+:", target):   # not https:, mailto:
                out.append((d.relative_to(ROOT).as_posix(), target))
    return sorted(set(out))


def test_the_pages_link_to_each_other():
    targets = {t.split("#")[0] for _, t in links()}
    readme_links = {t.split("#")[0] for p, t in links() if p == "README.md"}
    for page in DOCS[1:]:   # every page of docs/ is in the README's table
        assert f"docs/{page.name}" in readme_links, f"the README does not link docs/{page.name}"
    assert "../README.md" in targets


@pytest.mark.parametrize("page,target", links(), ids=lambda x: x)
def test_link_resolves(page, target):
    file, _, anchor = target.partition("#")
    path = (ROOT / page).parent / file if file else ROOT / page
    assert path.exists(), f"{page}: link to {target} names no file"
    if anchor:
        assert path.suffix == ".md", f"{page}: link to {target}: an anchor of a file that is not a page"
        assert anchor in anchors(path.read_text()), f"{page}: link to {target}: no such heading in {file or page}"


# --- (b) cited tests exist -----------------------------------------------------------------

def test_functions(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


test_functions.__test__ = False   # a helper, not a test


def test_documents_cite_tests():
    assert len(cited(TEST_REF, (RULES,))) >= 50
    assert len(cited(TEST_REF, (EXAMPLES,))) >= 11


@pytest.mark.slow
@pytest.mark.parametrize("path,name", cited(TEST_REF), ids=lambda x: x)
def test_cited_test_exists(path, name):
    assert (ROOT / path).is_file(), f"{path} does not exist"
    assert name.startswith("test_"), f"{path}::{name} is not a test"
    assert name in test_functions(path), f"{path} has no test {name}"


def test_every_worked_example_names_its_test():
    parts = re.split(r"\n(?=### E\d+)", EXAMPLES.read_text())[1:]
    assert [re.match(r"### (E\d+)", p).group(1) for p in parts] == [f"E{i}" for i in range(1, 12)]
    for p in parts:
        assert TEST_REF.search(p), f"{p.splitlines()[0]}: no test cited"


# --- (c) cited code and paths exist --------------------------------------------------------------

def test_documents_cite_code():
    assert len(cited(CODE_REF, (RULES,))) >= 50


@pytest.mark.parametrize("path,name", cited(CODE_REF), ids=lambda x: x)
def test_cited_code_exists(path, name):
    module = importlib.import_module(path[:-3].replace("/", "."))
    obj = module
    for part in name.split("."):
        assert hasattr(obj, part), f"{path} has no {name}"
        obj = getattr(obj, part)


@pytest.mark.parametrize("path", cited(PATH_REF), ids=lambda x: x)
def test_cited_path_exists(path):
    assert (ROOT / path).exists(), f"{path} does not exist"
