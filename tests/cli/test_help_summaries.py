"""`prefixsim --help` lists the commands from cli.SUMMARIES without importing their modules (issue 35:
start-up); what it prints is what click prints from the commands themselves, at every width."""
import click
import pytest

from prefixsim.cli import COMMANDS, SUMMARIES, LazyGroup, cli


def test_every_command_has_its_summary_and_no_other():
    assert set(SUMMARIES) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_summary_shortens_as_the_commands_own_help_at_every_limit(name):
    cmd = LazyGroup._load(name)
    # the stand-in has the help alone: a short_help, hidden or deprecated command would list otherwise
    assert cmd.short_help is None and not cmd.hidden and not cmd.deprecated
    stand_in = click.Command(name, help=SUMMARIES[name])
    for limit in range(1, 260):
        assert stand_in.get_short_help_str(limit) == cmd.get_short_help_str(limit), limit


@pytest.mark.parametrize("width", [20, 45, 60, 80, 100, 120, 200])
def test_the_listing_is_clicks_own_from_the_loaded_commands(width):
    ctx = click.Context(cli)
    ours, clicks = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
    cli.format_commands(ctx, ours)
    click.Group.format_commands(cli, ctx, clicks)
    assert ours.getvalue() == clicks.getvalue() and "replay" in ours.getvalue()
