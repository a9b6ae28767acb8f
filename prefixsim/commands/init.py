"""`prefixsim init [DIR]`: a commented starter scenario and the shipped examples, to edit and run."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

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
    files = {root / STARTER: starter.read_bytes()}
    files.update({root / "examples" / f.name: f.read_bytes() for f in example_files()})
    existing = [str(p) for p in files if p.exists()]
    if existing:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise UserError(f"already exists{more}; not overwriting (choose an empty folder)", existing[0])
    if root.exists() and not root.is_dir():
        raise UserError("exists and is not a folder", str(root))
    (root / "examples").mkdir(parents=True, exist_ok=True)
    for p, data in files.items():
        with open(p, "xb") as fh:   # exclusive: a file that appeared meanwhile is not overwritten
            fh.write(data)
    shown = "" if folder == "." else f"cd {folder} && "
    click.echo(f"wrote {root / STARTER} and {len(files) - 1} examples in {root / 'examples'}/\n"
               f"next: {shown}prefixsim run {STARTER}      (then edit it; `prefixsim run examples/` runs the examples)")
