"""Tables that fit a width (report/layout.py) split no word and leave out no column silently: a text
column narrows to its longest word and no further, and a table that still does not fit leaves out
columns in a stated order and names them under itself (issue 34: `replay` split stream and model
names mid-word and dropped columns without a word)."""
import datetime as dt

from click.testing import CliRunner

from prefixsim.cli import cli
from prefixsim.report.layout import dropped_note, fit, fit_dropping, min_width


def _words(text):
    return set(text.split())


def test_a_text_column_narrows_to_its_longest_word_and_no_further():
    head = ["stream", "model", "read"]
    body = [["claude-code-viewer/fe5e1c67/agent-1", "claude-sonnet-4-20250514", "16,205"],
            ["spotter main", "claude-opus-4-6", "98,062"]]
    text = fit(head, body, [False, False, True], 50, [True, True, False])
    # every word of the table is a word of a cell or header: none was cut in two
    cells = " ".join(line for line in text.splitlines() if set(line) - {"-", " "})   # not the rule
    assert _words(cells) <= _words(" ".join(head + [c for r in body for c in r]))
    assert "claude-code-viewer/fe5e1c67/agent-1" in text and "claude-sonnet-4-20250514" in text
    assert min_width(head, body, [True, True, False]) >= len("claude-code-viewer/fe5e1c67/agent-1")


def test_a_text_column_of_short_cells_narrows_to_them_as_min_width_counts_it():
    # breakeven gemini-explicit: words and money under long headers (text columns, as `_fitted` reads
    # them) were held at 12 columns each, and the table printed 92 columns at --width 80
    head = ["ttl h", "explicit beats no caching above reads per hour", "explicit vs implicit optimistic",
            "storage $", "reads per hour", "none $", "implicit optimistic $", "explicit $"]
    body = [["0.25", "6.94", "never cheaper", "$0.1125", "", "", "", ""],
            ["1.0", "", "", "", "6", "$1.2000", "$0.3000", "$0.7700"]]
    text_cols = [False] + [True] * 7
    assert min_width(head, body, text_cols) <= 80
    text = fit(head, body, [True] + [False] * 7, 80, text_cols)
    assert max(len(line) for line in text.splitlines()) <= 80
    shown = " ".join(line for line in text.splitlines() if set(line) - {"-", " "})
    assert _words(shown) <= _words(" ".join(head + [c for r in body for c in r]))   # no word split for it


def test_a_table_that_cannot_fit_leaves_out_columns_in_order_and_says_which():
    head = ["key", "reqs", "hit", "cost $", "no-cache $"]
    body = [["-home-scott-projects-claude-config", "57", "87.9%", "$1.6606", "$5.4084"]]
    text, dropped = fit_dropping(head, body, [False, True, True, True, True], 60, [True, False, False, False, False],
                                 drops=(4, 2, 1))
    assert dropped == ["no-cache $"] and "no-cache" not in text and "87.9%" in text
    assert max(len(line) for line in text.splitlines()) <= 60
    note = dropped_note(dropped, 60, min_width(head, body, [True, False, False, False, False]))
    assert note == "(not shown at 60 columns: no-cache $; --width 66 shows them)"
    assert fit_dropping(head, body, [False, True, True, True, True], 120, [True] + [False] * 4, (4, 2, 1))[1] == []


def test_run_names_the_columns_it_leaves_out_for_width():
    out = CliRunner().invoke(cli, ["run", "scenarios/ttl-expiry.yaml", "-v", "--no-write", "--width", "72",
                                   "--price-date", str(dt.date(2026, 11, 30))]).output
    assert "(not shown at 72 columns: output; --width 73 shows them)" in out
    assert max(len(line) for line in out.splitlines()) <= 72
