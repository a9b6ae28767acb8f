"""The pages whose examples the tests run: README.md and every page of docs/.

An example is a `$ prefixsim ...` line inside a ```-block, followed by the lines the page shows it
printing (up to the next `$` line; `...` and blank lines skip output). A page may set shell
variables for its own examples with `$ NAME=value` lines."""
import re
import shlex
from pathlib import Path

from conftest import unversioned

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


#: What changes from day to day without changing a figure: genai-prices' "prices as of" date; its release
#: is left out as every expected output leaves it out (conftest.unversioned: a page written under 0.2.3
#: stays true under 0.2.5 where the rates are the same).
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def comparable(line: str) -> str:
    """A printed or shown line with its date named, its genai-prices release left out, no trailing space."""
    return unversioned(DATE.sub("DATE", line)).rstrip()


def name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def fenced_blocks(text: str) -> list[str]:
    """The insides of the page's fenced blocks."""
    return re.split(r"^```.*$", text, flags=re.M)[1::2]


def cli_examples(prefix: str = "$ prefixsim ", pages=PAGES) -> list[tuple[str, list[str], list[str]]]:
    """(page, command words after `prefixsim`, lines shown after it) of every example on the pages."""
    out = []
    for page in pages:
        text = page.read_text()
        env = dict(re.findall(r"^\$ (\w+)=(\S+)$", text, re.M))   # shell variables the page's examples set
        for block in fenced_blocks(text):
            lines = block.splitlines()
            for i, line in enumerate(lines):
                if line.startswith(prefix):
                    cmd = re.sub(r"\$(\w+)", lambda m: env[m.group(1)], line[2:])
                    shown = []
                    for x in lines[i + 1:]:
                        if x.startswith("$"):
                            break
                        if x.strip() and x != "...":
                            shown.append(x)
                    out.append((name(page), shlex.split(cmd)[1:], shown))
    return out


def all_text() -> str:
    return "\n".join(p.read_text() for p in PAGES)
