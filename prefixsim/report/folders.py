"""Where each scenario's report goes, and every file the scenarios read, known before anything runs:
a command checks its outputs against its inputs, and two scenarios against each other, first."""
from __future__ import annotations

from dataclasses import dataclass

from prefixsim.errors import UserError
from prefixsim.io.fsutil import slug
from prefixsim.scenario.checks import resolve_file
from prefixsim.scenario.loader import locate, read_yaml
from prefixsim.scenario.parallel import scenario_runs

#: The kind of folder `prefixsim run` writes per scenario (named in its marker and in errors).
RUN_KIND = "scenario report"
#: The files `prefixsim run` writes into a scenario's report folder (a folder holding only these,
#: written before report folders carried their marker, may still be replaced).
RUN_FILES = frozenset({"requests.csv", "summary.csv", "summary.md", "results.json", "chart.png", "chart.svg"})


@dataclass(frozen=True)
class Named:
    """A scenario file, its `name:` and the folder name its report gets."""

    path: str
    name: str
    folder: str

    def line(self) -> int | None:
        """The line of `name:` (looked up only for an error message)."""
        try:
            return locate(read_yaml(self.path), ("name",))[0]
        except UserError:
            return None

    def where(self) -> str:
        line = self.line()
        return f"{self.path}:{line}" if line else self.path


def scenario_inputs(files: list[str]) -> tuple[list[str], list[Named]]:
    """Every file the scenarios read (themselves and their `file:` request bodies), and their names.
    A file that does not load is left out: the run reports it in its turn and writes nothing for it."""
    inputs, named = list(files), []
    for f in files:
        try:
            runs = scenario_runs(f)
        except UserError:
            continue
        if not runs:
            continue
        for r in runs:
            if r.settings.base is not None and r.settings.base.file:
                try:
                    inputs.append(str(resolve_file(f, r.settings.base.file)))
                except UserError:
                    pass
        name = runs[0].scenario.name
        named.append(Named(f, name, slug(name)))
    return inputs, named


def check_distinct(named: list[Named]) -> None:
    """Two scenarios whose reports would share a folder (`team/a` and `team-a`, or one `name:` in two
    files) are an error naming both, never one report silently replacing the other. Names equal but
    for case collide too: they share a folder on macOS and Windows."""
    seen: dict[str, Named] = {}
    for n in named:
        first = seen.setdefault(n.folder.casefold(), n)
        if first is not n:
            same = "the same name" if first.name == n.name else repr(first.name)
            raise UserError(f"scenario name {n.name!r} gives the report folder {n.folder!r}, as does {same} "
                            f"in {first.where()}: one report would replace the other (rename one of them)",
                            n.path, n.line())
