"""The library examples of docs/ (a ```python block followed by its ```text output) run and print
what the page shows; a page's examples run in order, in one namespace, as a notebook would."""
import contextlib
import io
import re

import pytest

from doc_pages import ROOT

PAGES = ["docs/scenarios.md", "docs/serving.md"]


def _examples(page: str) -> list[tuple[str, str]]:
    # a python block right before a text block (other python blocks on the page are sketches)
    return re.findall(r"```python\n((?:(?!```).)*?)```\n\n```text\n(.*?)```", (ROOT / page).read_text(), re.S)


@pytest.mark.parametrize("page", PAGES)
def test_library_examples_print_what_the_page_shows(page, monkeypatch, no_network):
    examples = _examples(page)
    assert len(examples) >= 2, f"{page}: its library examples, each with the output it prints"
    monkeypatch.chdir(ROOT)   # the examples name files from the repository's root
    namespace: dict = {"__name__": "doc_example"}
    for i, (code, shown) in enumerate(examples):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"<{page} example {i + 1}>", "exec"), namespace)
        assert [x.rstrip() for x in out.getvalue().splitlines()] == [x.rstrip() for x in shown.splitlines()], \
            f"{page} example {i + 1}"
