"""`prefixsim init [DIR]`: a commented starter scenario and the shipped examples, to edit and run."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import os
from pathlib import Path

import click

from prefixsim.errors import UserError

STARTER = "my-scenario.yaml"


@click.command()
@click.argument("folder", default=".", type=click.Path(file_okay=False))
def init(folder):
    """Write a commented starter scenario (my-scenario.yaml) and the example scenarios
    (examples/*.yaml) into FOLDER (default: here). Nothing is overwritten.

    \b
    Example:
      prefixsim init my-study && cd my-study && prefixsim run my-scenario.yaml
    """
    from prefixsim.examples import example_files

    root = Path(folder)
    starter = Path(__file__).resolve().parents[1] / "templates" / STARTER
    examples = {f.name: f.read_bytes() for f in example_files()}
    _write_all(root, starter.read_bytes(), examples)
    shown = "" if folder == "." else f"cd {folder} && "
    click.echo(f"wrote {root / STARTER} and {len(examples)} examples in {root / 'examples'}/\n"
               f"next: {shown}prefixsim run {STARTER}\n"
               "      then edit it; `prefixsim run examples/` runs the examples")


def _write_all(root: Path, starter: bytes, examples: dict[str, bytes]) -> None:
    """The starter and the examples, all or nothing: staged, then renamed into place (`io/swap.py`).
    Into an existing folder they go as one set; a folder that does not exist yet is made whole from
    its first missing ancestor, so a failure leaves no folder behind either."""
    from prefixsim.io.fsutil import Folder, write_files  # lazy, as above

    if os.path.lexists(root):
        if os.path.islink(root) and not root.exists():
            raise UserError("is a symlink to a folder that does not exist; not writing there", str(root))
        if not root.is_dir():
            raise UserError("exists and is not a folder", str(root))
        taken = [p for p in (root / STARTER, *(root / "examples" / n for n in examples)) if os.path.lexists(p)]
        if not taken and os.path.lexists(root / "examples") and not _empty_folder(root / "examples"):
            taken = [root / "examples"]
        if taken:
            more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
            raise UserError(f"already exists{more}; not overwriting (choose an empty folder)", str(taken[0]))
        write_files({root / STARTER: starter, root / "examples": Folder(examples)}, exclusive=True)
        return
    top = root
    while top.parent != top and not os.path.lexists(top.parent):
        top = top.parent
    if not top.parent.is_dir():
        what = "a symlink to a folder that does not exist" if os.path.islink(top.parent) else "a file, not a folder"
        raise UserError(f"{top.parent} is {what}; cannot write under it", str(root))
    inner = root.relative_to(top)
    tree = {str(inner / STARTER): starter, **{str(inner / "examples" / n): b for n, b in examples.items()}}
    write_files({top: Folder(tree)}, exclusive=True)


def _empty_folder(path: Path) -> bool:
    try:
        return path.is_dir() and not os.listdir(path)
    except OSError:
        return False
