"""`prefixsim advise TRAFFIC...`: money by token class and lost by cause, stream, breaker and volatile
content, and the changes a what-if replay of the same traffic shows would save money. Given
scenarios instead, it runs their design search (`prefixsim search`) and says so."""
# lazy imports: `prefixsim --help` imports every command module to list its command, so what a command
# needs is imported when it runs (tests/quality/test_startup.py holds what --help may load).
from __future__ import annotations

import click

from prefixsim.commands.common import format_option, output_width, read_traffic
from prefixsim.commands.search import check_chart, run_search, search_options
from prefixsim.errors import UserError


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@format_option
@click.option("--chart", type=click.Path(dir_okay=False), default=None,
              help="Write the waterfall from today's cost to the best combination's (.png or .svg).")
@click.option("--strict", is_flag=True, help="Stop at the first unusable line instead of skipping it.")
@search_options("Design search: ")
def advise(paths, fmt, chart, strict, out, no_write, price_date, start, workers, executor, scheduler, max_ttft,
           width):
    """Where real traffic (anything `prefixsim replay` reads) loses money to the cache, and the
    changes a what-if replay of the same traffic shows would save it.

    Given scenario files or folders, it runs the design search of those that declare `optimize:`
    (`prefixsim search`, docs/design-search.md) and skips the others; `--max-ttft 3s` ranks only the
    designs whose p95 time to first token is at most 3 s.

    \b
    Examples:
      prefixsim advise ~/.claude/projects/my-app/
      prefixsim advise gateway.jsonl --format markdown --chart waterfall.png
      prefixsim advise scenarios/agent-design-space.yaml --max-ttft 3s
    """
    # lazy: the advice and the scenario model load only when the command runs (`prefixsim --help` loads neither)
    from prefixsim.advise import advise as run_advise
    from prefixsim.advise import output
    from prefixsim.advise.grid import design_targets

    check_chart(chart, paths)
    cols = output_width(width)   # a bad --width is refused before anything is read
    targets = design_targets(paths)
    if targets is not None:
        run_search(targets, fmt, out, no_write, price_date, start, workers, executor, scheduler, chart, width, max_ttft)
        if fmt == "table":
            click.echo("prefixsim advise: ran the design search of the scenarios' `optimize:` "
                       "(`prefixsim search` is the command for it)", err=True)
        return
    if max_ttft is not None:   # advice on traffic has no designs to bound
        raise UserError("--max-ttft is an option of a design search (scenarios with `optimize:`), not of advice on "
                        "traffic")
    traffic, _ = read_traffic(paths, None, strict, partial=False)   # advice on part of it would be on other traffic
    advice = run_advise(traffic)
    click.echo(output.render(advice, fmt, cols), nl=False)
    if chart is not None:
        output.write_chart(advice, chart)
