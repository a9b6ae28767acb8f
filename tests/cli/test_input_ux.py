"""Scenario input as people write it: sizes with suffixes, every error of a file in one pass with its
line, a missing timeline, placeholders and names with the nearest valid one."""
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixsim.cli import cli
from prefixsim.errors import UserError
from prefixsim.scenario.loader import load_runs
from prefixsim.scenario.schema import size_value


@pytest.mark.parametrize("text,tokens", [("30K", 30_000), ("2k", 2_000), ("1.5M", 1_500_000),
                                         ("30_000", 30_000), ("300", 300), (" 4 k ", 4_000)])
def test_sizes_as_people_write_them(text, tokens):
    assert size_value(text) == tokens


@pytest.mark.parametrize("text", ["30 tokens", "abc", "1.5", "K", ""])
def test_text_that_is_not_a_size(text):
    assert size_value(text) is None


def test_a_fraction_of_a_token_is_an_error():
    with pytest.raises(ValueError, match="not a whole number of tokens"):
        size_value("1.2345k")


def _load(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return load_runs(str(p))


def test_system_30K_is_thirty_thousand_tokens_not_the_text(tmp_path):
    runs = _load(tmp_path, "name: s\nprovider: prefix\ntokenizer: approx\nbase:\n  system: 30K\n"
                           "  tools: {count: 2, size: 2k}\n  history: {turns: 1, user: 1_000}\n"
                           "timeline:\n  - request: {user: 1.5k}\n"
                           "  - subagent: {system: 2K, task: 0.5k}\n  - edit_system: {append: 1k}\n")
    base = runs[0].settings.base
    assert base.system == 30_000 and base.tools.size == 2_000 and base.history.user == 1_000
    steps = runs[0].settings.timeline
    assert steps[0].request.user == 1_500
    assert steps[1].subagent.system == 2_000 and steps[1].subagent.task == 500
    assert steps[2].edit_system.append == 1_000


def test_literal_text_that_looks_like_a_size_stays_text_under_text(tmp_path):
    runs = _load(tmp_path, "name: s\nprovider: prefix\nbase: {system: {text: 30K}}\ntimeline: [request: 1]\n")
    assert runs[0].settings.base.system.text == "30K"


def test_every_error_of_a_file_in_one_pass_each_with_its_line(tmp_path):
    with pytest.raises(UserError) as e:
        _load(tmp_path, "name: bad\nprovider: prefix\nbase:\n  tools: {count: four, size: 2k}\n"
                        "  history: {turns: 2, usr: 1_000}\ntimeline:\n  - request: {turns: -1}\n  - frok: 3\n")
    lines = str(e.value).splitlines()
    assert [line.split(": ", 1)[0].rsplit("s.yaml:", 1)[1] for line in lines] == ["4:11", "5:23", "7:15", "8:5"]
    assert lines[0].endswith("base.tools.count: 'four' (a string) is not a whole number (e.g. 300)")
    assert "unknown key 'usr' (did you mean 'user'?)" in lines[1]
    assert "unknown step 'frok' (did you mean 'fork'?)" in lines[3]


def test_errors_past_the_limit_are_counted(tmp_path):
    steps = "".join(f"  - request: {{turns: -{i}}}\n" for i in range(1, 26))
    with pytest.raises(UserError) as e:
        _load(tmp_path, f"name: bad\nprovider: prefix\ntimeline:\n{steps}")
    lines = str(e.value).splitlines()
    assert len(lines) == 21 and lines[-1].endswith("... and 5 more errors")


def test_no_timeline_is_an_error_at_the_name(tmp_path):
    with pytest.raises(UserError) as e:
        _load(tmp_path, "description: x\nname: s\nprovider: prefix\n")
    assert e.value.line == 2 and "no `timeline:`, so nothing would run" in e.value.message


def test_empty_timeline_of_a_variant_is_an_error_at_its_line(tmp_path):
    with pytest.raises(UserError) as e:
        _load(tmp_path, "name: s\nprovider: prefix\ntimeline: [request: 1]\nvariants:\n  - name: a\n"
                        "  - name: b\n    timeline: []\n")
    assert (e.value.line, e.value.col) == (7, 5)
    assert e.value.message.startswith("variant 'b' has an empty `timeline:`")


def test_undefined_placeholder_names_its_line_and_the_nearest_name(tmp_path):
    with pytest.raises(UserError) as e:
        _load(tmp_path, "name: s\nprovider: prefix\nvars: {stagger: 1}\ntimeline:\n"
                        "  - fork: {children: 2, stagger: '${stager}'}\n")
    assert (e.value.line, e.value.col) == (5, 25)
    assert "undefined placeholder ${stager} (did you mean ${stagger}?" in e.value.message


def test_unknown_provider_suggests_the_nearest(tmp_path):
    with pytest.raises(UserError) as e:
        _load(tmp_path, "name: s\nprovider: opnai\ntimeline: [request: 1]\n")
    assert "unknown provider 'opnai' (did you mean 'openai'?" in e.value.message


# --- names typed on the command line ---------------------------------------------------------------

def _cli(args, tmp_path):
    return CliRunner().invoke(cli, [*args, "--out", str(tmp_path)] if args[0] == "breakeven" else args)


@pytest.mark.parametrize("args,needle", [
    (["breakeven", "fork"], "unknown study 'fork' (did you mean 'fork-vs-subagent'?"),
    (["breakeven", "fork-vs-subagent", "-p", "chidren=4"],
     "unknown fork-vs-subagent parameter 'chidren' (did you mean 'children'?"),
    (["breakeven", "fork-vs-subagent", "-p", "children=four"], "--param children: 'four' is not a whole number"),
    (["breakeven", "fork-vs-subagent", "-p", "parent_static=lots"],
     "--param parent_static: 'lots' is not a whole number of tokens (e.g. 30000 or 30K)"),
    (["breakeven", "ttl", "--model", "claude-sonet-4-5"], "unknown Anthropic model 'claude-sonet-4-5' (did you mean "
                                                          "'claude-sonnet-4-5'?)"),
])
def test_names_on_the_command_line_get_the_nearest_valid_one(args, needle, tmp_path):
    from prefixsim.errors import UserError as UE

    result = _cli(args, tmp_path)
    text = result.output + (str(result.exception) if isinstance(result.exception, UE) else "")
    assert result.exit_code != 0 and needle in text, text


def test_study_sizes_take_suffixes(tmp_path):
    from prefixsim.scenario.studycheck import parse_pairs

    f, lists = parse_pairs("fork-vs-subagent", ("parent_static=30K", "children=4", "sub_static=1.5k"))
    assert (f.parent_static, f.sub_static, f.children) == (30_000, 1_500, 4)


def test_an_unpriced_model_gets_the_nearest_priced_one():
    import datetime as dt

    from prefixsim.core.pricing import PriceBook

    with pytest.raises(UserError, match=r"no price for model 'gpt-4oo' \(did you mean 'gpt-4o'\?\)"):
        PriceBook(when=dt.date(2026, 11, 30)).rates("gpt-4oo", "openai")


def test_long_names_need_to_be_close_to_be_suggested():
    from prefixsim.io.suggest import nearest
    from prefixsim.providers.tables import ANTHROPIC_MIN_TOKENS

    assert nearest("claude-nonesuch-9", sorted(ANTHROPIC_MIN_TOKENS)) is None
    assert nearest("frok", ["fork", "btw"]) == "fork"


@settings(max_examples=200, deadline=None)
@given(name=st.text(min_size=1, max_size=12), others=st.lists(st.text(min_size=1, max_size=12), max_size=6))
def test_a_name_is_never_suggested_for_itself(name, others):
    """"no price for 'gpt-4o' (did you mean 'gpt-4o'?)": the name a user gave is no suggestion."""
    from prefixsim.io.suggest import nearest, unknown

    assert nearest(name, [name, *others]) != name
    assert f"did you mean {name!r}?" not in unknown("model", name, [name, *others])


def test_a_model_priced_for_another_provider_says_so_not_did_you_mean_itself():
    import datetime as dt

    from prefixsim.core.pricing import PriceBook

    with pytest.raises(UserError) as e:
        PriceBook(when=dt.date(2026, 11, 30)).rates("gpt-4o", "deepseek")
    assert e.value.message.startswith("no price for model 'gpt-4o' from provider deepseek in genai-prices ")
    assert e.value.message.endswith(": it prices 'gpt-4o' only from github-copilot, openai; give a price in the "
                                    "scenario's price sheet")
    with pytest.raises(UserError, match=r"no price for model 'GPT-4OO' \(did you mean 'gpt-4o'\?\)"):
        PriceBook(when=dt.date(2026, 11, 30)).rates("GPT-4OO", "openai")


def test_report_model_that_the_studies_cannot_price_is_refused_before_the_scenarios_run(tmp_path, monkeypatch,
                                                                                        capsys):
    import prefixsim.report.build as build
    from prefixsim.cli import main

    def never(*a, **k):
        raise AssertionError("the scenarios ran before --model was checked")
    monkeypatch.setattr(build, "run_files", never)
    (tmp_path / "s.yaml").write_text("name: s\nprovider: prefix\ntokenizer: approx\nbase: {system: 10}\n"
                                     "timeline: [request: 1]\n")
    with pytest.raises(SystemExit) as e:
        main(["report", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "r.html"), "--model", "claude-sonet-4-5",
              "--price-date", "2026-11-30"])
    err = capsys.readouterr().err
    # a Claude id the studies apply to but cannot price; gpt-4o is no longer refused: each study says
    # on the page why it does not apply (tests/report/test_report_models.py)
    assert e.value.code == 2
    assert err == "prefixsim: --model: unknown Anthropic model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'?)\n"
    assert not (tmp_path / "r.html").exists()


def test_dated_model_ids_name_their_snapshot_day():
    from prefixsim.core.pricing import snapshot_date

    assert snapshot_date("claude-sonnet-4-5-20250929").isoformat() == "2025-09-29"
    assert snapshot_date("gpt-4o-2024-08-06").isoformat() == "2024-08-06"
    assert snapshot_date("anthropic.claude-sonnet-4-5-20250929-v1:0").isoformat() == "2025-09-29"
    assert snapshot_date("claude-sonnet-4-5@20250929").isoformat() == "2025-09-29"
    assert snapshot_date("claude-sonnet-4-5") is None and snapshot_date("deepseek-v4-flash") is None


def _main(args, capsys):
    from prefixsim.cli import main

    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code, capsys.readouterr().err


def test_a_price_date_before_a_dated_snapshot_says_so(tmp_path, capsys):
    """A dated model id names the day its snapshot was released: a design priced before that day has
    no price to use, and says so (run and breakeven, exit 2); from that day on it is priced."""
    s = tmp_path / "s.yaml"
    s.write_text("name: s\nmodel: claude-sonnet-4-5-20250929\ntimeline: [request: 2]\n")
    code, err = _main(["run", str(s), "--no-write", "--price-date", "2025-09-28"], capsys)
    assert code == 2
    assert "claude-sonnet-4-5-20250929 is the snapshot of 2025-09-29: on 2025-09-28" in err
    code, err = _main(["breakeven", "ttl", "--model", "claude-sonnet-4-5-20250929", "--price-date", "2025-01-01",
                       "--out", str(tmp_path)], capsys)
    assert code == 2 and "did not exist yet" in err, err
    code, err = _main(["run", str(s), "--no-write", "--price-date", "2025-09-29"], capsys)
    assert code in (0, None), err


def test_real_traffic_is_priced_at_its_own_time_whatever_the_snapshot_date():
    """A log's clock is what it is (a fuzzed or hand-made line may say 1970): replay never refuses it."""
    import datetime as dt

    from prefixsim.core.pricing import PriceBook

    r = PriceBook(when=dt.date(2025, 1, 1)).rates("claude-sonnet-4-5-20250929", "anthropic")
    assert "claude-sonnet-4-5" in r.source
