"""`prefixsim advise SCENARIO.yaml`: the design search of a scenario that declares `optimize:`
(advise/grid.py), printed and written as report files (report/pareto.py)."""
from __future__ import annotations

from pathlib import Path

import click

from prefixsim.errors import UserError


def searches(paths) -> bool:
    """Whether `advise` was given scenario files (a design search of their `optimize:`; one without
    it is refused by name) rather than traffic; the two cannot be mixed in one call."""
    from prefixsim.io.yamlfile import load_yaml

    found = []
    for p in paths:
        is_yaml = Path(p).suffix in (".yaml", ".yml") and Path(p).is_file()
        found.append(is_yaml and _declares(load_yaml, p))
    if any(found) and not all(found):
        bad = next(p for p, f in zip(paths, found) if not f)
        raise UserError("a design search takes scenario files only (with `optimize:`); give traffic to another "
                        "`prefixsim advise` call", bad)
    return bool(found) and all(found)


def _declares(load_yaml, path: str) -> bool:
    try:
        node = load_yaml(path, "scenario")
    except UserError:
        return False   # not a scenario this reads (a cassette, say): the traffic reader reports it
    # A scenario has a timeline (traffic files, cassettes included, have none).
    return isinstance(node, dict) and ("optimize" in node or "timeline" in node)


def run_search(paths, fmt: str, out: str, no_write: bool, price_date, start, workers: int, executor: str,
               scheduler, chart: str | None = None) -> None:
    """Search each file's designs, print them in `fmt`, write the report folders (unless `no_write`)
    and, with `chart`, the first file's chart there too (.png or .svg, checked by the caller)."""
    from prefixsim.advise.grid import search
    from prefixsim.commands.run import parse_price_date, parse_start_option
    from prefixsim.io.fsutil import check_outputs, check_replaceable
    from prefixsim.report import pareto
    from prefixsim.report.folders import scenario_inputs
    from prefixsim.report.tables import csv_text, json_text

    files = list(paths)
    when, at = parse_price_date(price_date), parse_start_option(start)
    if not no_write:   # before anything runs: never a report folder over an input, nor over another kind
        inputs, named = scenario_inputs(files)
        folders = [pareto.folder(Path(out), n.name) for n in named]
        check_outputs(inputs, folders=folders)
        for f in folders:
            check_replaceable(f, pareto.KIND, lambda name: False)
    grids = search(files, when, workers, executor, scheduler, at)
    if fmt == "json":
        click.echo(json_text({"scenarios": [pareto.to_json(g) for g in grids]}), nl=False)
    elif fmt == "csv":
        rs, cols = pareto.csv_rows(grids)
        click.echo(csv_text(rs, cols), nl=False)
    else:
        click.echo("\n\n".join(pareto.text(g, markdown=fmt == "markdown") for g in grids))
    if chart is not None:
        from prefixsim.io.fsutil import write_files
        from prefixsim.report.charts import render_both

        png, svg = render_both(pareto.figure(grids[0]))
        write_files({chart: png if chart.endswith(".png") else svg})
    if not no_write:
        for g in grids:
            pareto.write(g, Path(out))
        if fmt == "table":
            click.echo(f"\nreports written to {out.rstrip('/') or '/'}/", err=True)
