"""A scenario's `studies:` names api-vs-selfhosted: the report draws it (and only then) at the scenario's
own sizes where `studies:` leaves a parameter out (report/study_sizes.py: serving_sizes,
report/study_plan.py), the values it gives winning; a bad value is one line at its line."""
import datetime as dt

import pytest

from prefixsim.api import run_scenario
from prefixsim.cli import main
from prefixsim.report.build import build_report
from prefixsim.report.study_sizes import serving_sizes
from prefixsim.scenario.loader import load_runs

WHEN = dt.date(2026, 11, 30)
SCENARIO = """name: four-turns
model: claude-sonnet-4-5
ttl: 1h
pace: {pace}
base: {{system: 4000}}
timeline:
  - request: {{turns: 4, user: 100, assistant: 300, tool_use: 0, tool_result: 0}}
studies:
  api-vs-selfhosted: {studies}
"""


def _file(tmp_path, pace="20s", studies="{rate: 2}"):
    p = tmp_path / "four.yaml"
    p.write_text(SCENARIO.format(pace=pace, studies=studies))
    return str(p)


def test_the_sizes_are_the_scenarios_worked_by_hand(tmp_path):
    f = _file(tmp_path)
    res = run_scenario(f, WHEN)
    # each turn adds the user's 100 tokens, the previous reply's 300 and 26 of the turns' framing
    assert [o.usage.prompt_tokens for o in res.variants[0].outcomes] == [4121, 4547, 4973, 5399]
    # static: the system prompt as rendered and counted, 4,000 + 8; the mean prompt (4121 + 4547 + 4973 +
    # 5399) / 4 = 4,760 is the study's static + growth x (4 + 1) / 2: growth = 2 x (4760 - 4008) / 5 = 300.8
    assert serving_sizes(res, load_runs(f)[0]) == {"static": 4008, "turns": 4, "growth": 301, "output": 300,
                                                   "pace": 20.0, "ttl": "1h"}


def test_a_size_outside_the_studys_range_is_left_to_its_default(tmp_path):
    f = _file(tmp_path, pace="5m")   # a turn every 5 minutes: past the study's 240 s (a 5m write would lapse)
    sizes = serving_sizes(run_scenario(f, WHEN), load_runs(f)[0])
    assert "pace" not in sizes and sizes["turns"] == 4


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("serving")
    f = _file(d, studies="{rate: 2, turns: 3}")
    plain = d / "plain.yaml"
    plain.write_text(SCENARIO.format(pace="20s", studies="{}").replace("name: four-turns", "name: plain")
                     .split("studies:")[0])
    _, md = build_report([f, str(plain)], str(d / "out") + "/", when=WHEN)
    return md.read_text()


def test_the_report_draws_it_for_the_scenario_naming_it_at_its_sizes(page):
    heads = [x for x in page.splitlines() if x.startswith("## Break-even: API vs self-hosted")]
    assert heads == ["## Break-even: API vs self-hosted — four-turns"]   # once: plain does not name it
    caption = next(x for x in page.splitlines() if x.startswith("*Parameters from the `studies:` of scenario "
                                                                   "four-turns and its sizes"))
    # the scenario's turns: 3 wins over the 4 it has; the rest are read from it
    assert "(static, growth, output, pace, ttl read from it)" in caption
    assert "static 4008; growth 301; turns 3; output 300; rate 2.0; pace 20.0; ttl 1h;" in caption
    section = page.split("## Break-even: API vs self-hosted", 1)[1]
    assert "sessions of 3 turns over a 4.0 K-token static prefix" in section and ": agree" in section


def test_a_bad_value_is_one_line_at_its_line_and_gemini_explicit_is_still_refused(tmp_path, capsys):
    for studies, words in (("{rate: -1}", "rate"), ("{gpu: h900}", "gpu")):
        f = _file(tmp_path, studies=studies)
        with pytest.raises(SystemExit) as e:
            main(["validate", f])
        err = capsys.readouterr().err.strip().splitlines()
        assert e.value.code == 2 and f"{f}:9" in err[0] and words in err[0], err
    f = tmp_path / "g.yaml"
    f.write_text(SCENARIO.format(pace="20s", studies="{}").replace("api-vs-selfhosted", "gemini-explicit"))
    with pytest.raises(SystemExit) as e:
        main(["validate", str(f)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "unknown study 'gemini-explicit'" in err and "api-vs-selfhosted" in err


def test_the_api_sides_time_to_first_token_is_the_scenarios_latency_model(tmp_path):
    """A scenario with `latency:` prices its API side's wait with it, not the model's default: with 5 s
    overhead and nothing per token every request takes 5 s, so the p95 is 5.00 s, and the text says whose."""
    own = tmp_path / "own.yaml"
    own.write_text(SCENARIO.format(pace="20s", studies="{rate: 2}")
                   + "latency: {overhead_s: 5, uncached_s_per_1k: 0, cached_s_per_1k: 0}\n")
    _, md = build_report([str(own)], str(tmp_path / "out") + "/", when=WHEN)
    section = md.read_text().split("## Break-even: API vs self-hosted", 1)[1]
    row = next(x for x in section.splitlines() if "time to first token, p95" in x)
    assert "| 5.00 s |" in row, row
    assert "time to first token: the API's from the scenario's latency model (the scenario's latency: section)" \
        in section


def test_without_latency_the_api_side_is_the_models_default(page):
    section = page.split("## Break-even: API vs self-hosted", 1)[1]
    assert "time to first token: the API's from claude-sonnet-4-5's default latency model" in section
