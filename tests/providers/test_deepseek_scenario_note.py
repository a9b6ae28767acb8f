"""A DeepSeek scenario's figures are what public traffic shows of its retention (docs/rules.md#deepseek):
its table says so in DeepSeek's words, never Gemini's best-effort note (which it printed when
DeepSeek's retention became a measured rule)."""
from click.testing import CliRunner

from prefixsim.cli import cli

SCENARIO = "name: ds\nmodel: deepseek-v4-flash\nbase: {system: 3000}\ntimeline:\n  - request: 1\n  - wait: 2h\n  - request: 1\n"


def test_a_deepseek_scenario_reads_after_two_hours_and_says_whose_figure_it_is(tmp_path):
    p = tmp_path / "ds.yaml"
    p.write_text(SCENARIO)
    out = CliRunner().invoke(cli, ["run", str(p), "--no-write", "--width", "120", "--price-date", "2026-11-30"])
    assert out.exit_code == 0, out.output
    assert "DeepSeek: read / hit / cost $ as traffic shows, kept 12 h idle; (opt.): kept 24 h (docs/rules.md#deepseek)" \
        in out.stdout
    assert "Gemini" not in out.stdout
    md = CliRunner().invoke(cli, ["run", str(p), "--no-write", "--format", "markdown", "--price-date", "2026-11-30"])
    assert "DeepSeek's retention is documented as hours to days" in md.stdout and "Gemini" not in md.stdout
    # two hours idle: the second request reads the first one's prompt (3,000 tokens, 64-token units)
    rows = CliRunner().invoke(cli, ["run", str(p), "--no-write", "--format", "csv", "-v", "--price-date", "2026-11-30"])
    assert rows.exit_code == 0, rows.output
    read = [line.split(",") for line in rows.stdout.splitlines()]
    col = read[0].index("cache_read_input_tokens")
    assert int(read[2][col]) > 0 == int(read[1][col])
