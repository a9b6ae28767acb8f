"""`breakeven` and `report`: files written, charts deterministic, user strings escaped, and the page
renders in a real browser with every image loaded and no text overflowing (skips without chromium)."""
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prefixsim.api import run_scenario

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None):
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                       capture_output=True, text=True, cwd=cwd or ROOT)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("study", ["fork-vs-subagent", "ttl", "stagger", "invalidation", "minimum"])
def test_breakeven_writes_csv_png_svg(tmp_path, study):
    rc, out, err = cli("breakeven", study, "--out", str(tmp_path), "--price-date", "2026-11-30")
    assert rc == 0, err
    assert "largest difference $0.000000000" in out
    for ext in ("csv", "png", "svg"):
        assert (tmp_path / f"{study}.{ext}").stat().st_size > 0


@pytest.mark.slow
def test_breakeven_json_and_params(tmp_path):
    rc, out, err = cli("breakeven", "fork-vs-subagent", "-p", "children=5", "-p", "turns=3", "--format", "json",
                       "--out", str(tmp_path), "--price-date", "2026-11-30")
    doc = json.loads(out)
    [row] = doc["crossings"]            # the one design asked about, not the default list
    assert row["children"] == 5 and row["turns"] == 3 and doc["params"]["children"] == 5
    assert row["sub_agent_cheaper_from"] > 0 and doc["check"]["max_abs_diff_usd"] == 0.0
    assert doc["check"]["ok"] and doc["check"]["against"] == "scenario builder + runner"
    assert "claude-sonnet-4-5" in doc["prices"]


@pytest.mark.slow
def test_breakeven_bad_param(tmp_path):
    rc, out, err = cli("breakeven", "ttl", "-p", "nonsense=3", "--out", str(tmp_path))
    assert rc == 2 and "unknown ttl parameter 'nonsense' (valid: prefix)" in err


@pytest.mark.slow
def test_breakeven_with_a_price_sheet(tmp_path):
    sheet = tmp_path / "prices.yaml"
    sheet.write_text("claude-sonnet-4-5: {input: 10, output: 50}\n")
    rc, out, err = cli("breakeven", "ttl", "--prices", str(sheet), "--out", str(tmp_path))
    assert rc == 0, err
    assert "prices: price sheet" in out and "largest difference $0.000000000" in out
    rc, out, err = cli("breakeven", "ttl", "--model", "my-model", "--out", str(tmp_path))
    assert rc == 2 and "unknown model 'my-model': its id names no provider" in err


@pytest.mark.slow
def test_charts_are_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        assert cli("breakeven", "stagger", "--out", str(d), "--price-date", "2026-11-30")[0] == 0
    for ext in ("png", "svg", "csv"):
        assert (a / f"stagger.{ext}").read_bytes() == (b / f"stagger.{ext}").read_bytes()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    (d / "evil.yaml").write_text("name: '<script>alert(1)</script>'\ndescription: '<b>bold</b> & co'\n"
                                 "provider: prefix\ntokenizer: approx\nbase: {system: 400}\n"
                                 "timeline: [request: 2]\nvariants: [{name: '<img src=x onerror=alert(2)>'}]\n")
    (d / "ds.yaml").write_text("name: deepseek\nprovider: deepseek\nmodel: deepseek-v4-flash\ntokenizer: approx\n"
                               "base: {system: 400}\ntimeline: [request: 2]\n")
    rc, out, err = cli("report", str(ROOT / "scenarios" / "seed-fork-economics.yaml"),
                       str(ROOT / "scenarios" / "parallel-children-stagger.yaml"), str(d / "evil.yaml"),
                       str(d / "ds.yaml"),
                       "-o", str(d / "out" / "report.html"), "--price-date", "2026-11-30")
    assert rc == 0, err
    return d / "out"


@pytest.mark.slow
def test_report_is_self_contained(page):
    html = (page / "report.html").read_text()
    assert "<script" not in html.replace("&lt;script", "")            # no scripts of ours or the user's
    assert not re.search(r'src="(?!data:image/png;base64,)', html)     # every image is embedded
    assert "http://" not in html and "https://" not in html.replace("https://www", "")
    for heading in ("Assumptions", "Scenario: seed-fork-economics", "Break-even: Fork vs fresh sub-agent",
                    "Break-even: TTL choice", "Break-even: Parallel children", "Break-even: Cache-invalidation"):
        assert heading in html
    assert "sub-agent is cheaper" in html or "fresh sub-agent" in html
    md = (page / "report.md").read_text()
    for img in re.findall(r"\]\((report_files/[^)]+\.png)\)", md):
        assert (page / img).stat().st_size > 0


def test_time_of_day_prices_are_page_assumptions(page):
    """The page's own assumptions (before the first scenario) say when t = 0 falls and what each hour costs."""
    md = (page / "report.md").read_text()
    head = md.split("## Scenario:")[0]
    # deepseek-v4-flash on 2026-11-30: peak 01:00-04:00 and 06:00-10:00 UTC (genai-prices, from 2026-09-10)
    assert "time-of-day prices [deepseek-v4-flash]" in head and "06:00-10:00 UTC input 0.3" in head
    assert "| clock start | 2026-11-30T07:00:00Z (t = 0) |" in head


def test_user_strings_are_escaped(page):
    html = (page / "report.html").read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "<b>bold</b>" not in html


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_page_renders_in_chromium(page, tmp_path):
    probe = (page / "report.html").read_text().replace("</body>", """<script>
    window.addEventListener('load', () => {
      const imgs = [...document.images];
      const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
      const over = [...document.querySelectorAll('main > *:not(.scroll), td, th, p, h1, h2, h3, figcaption')]
        .filter(e => !e.closest('.scroll') && e.scrollWidth > e.clientWidth + 1).length;
      const wide = document.documentElement.scrollWidth > window.innerWidth + 1;
      document.body.setAttribute('data-probe', JSON.stringify({images: imgs.length, broken, over, wide}));
    });</script></body>""")
    f = tmp_path / "probe.html"
    f.write_text(probe)
    p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900",
                        "--virtual-time-budget=5000", "--dump-dom", f.as_uri()],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"data-probe=\"([^\"]+)\"", p.stdout)
    assert m, p.stderr[-500:]
    probe = json.loads(m.group(1).replace("&quot;", '"'))
    assert probe["images"] >= 8 and probe["broken"] == 0
    assert probe["over"] == 0 and not probe["wide"]


@pytest.mark.slow
def test_a_report_that_opens_with_a_non_claude_scenario_prices_its_studies_with_claude(tmp_path):
    """The break-even studies model Anthropic's rules: a report whose first scenario is DeepSeek uses the
    default Claude model for them instead of failing on DeepSeek's price look-up."""
    (tmp_path / "ds.yaml").write_text("name: deepseek-first\nprovider: deepseek\nmodel: deepseek-v4-flash\n"
                                      "tokenizer: approx\nbase: {system: 400}\ntimeline: [request: 2]\n")
    rc, out, err = cli("report", str(tmp_path / "ds.yaml"), "-o", str(tmp_path / "out") + "/", "--price-date", "2026-11-30")
    assert rc == 0, err
    md = (tmp_path / "out" / "report.md").read_text()
    assert "anthropic/claude-sonnet-4-5" in md.split("## Scenario:")[0]


STUDIED = """name: four-forks
model: claude-sonnet-4-5
tokenizer: approx
studies:
  fork-vs-subagent: {parent_static: 30000, sub_static: 4500, task: 500, children: 4, turns: 2}
base: {system: 2000}
timeline: [request: 1]
"""


@pytest.mark.slow
def test_report_draws_the_studies_a_scenario_names(tmp_path):
    """The scenario's own design, not the defaults: one fork-vs-subagent chart for 4 children, captioned
    with where its parameters come from; the studies it does not name say they use the defaults."""
    (tmp_path / "s.yaml").write_text(STUDIED)
    rc, out, err = cli("report", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out") + "/",
                       "--price-date", "2026-11-30")
    assert rc == 0, err
    md = (tmp_path / "out" / "report.md").read_text()
    fork = md[md.index("## Break-even: Fork vs fresh sub-agent"):]
    fork = fork[:fork.index("\n## ", 1)]
    assert "four-forks" in fork and "Parameters from the `studies:` of scenario four-forks: children 4;" in fork
    assert "children 4;" in fork and "parent_static 30000" in fork
    assert "With 4 children of 2 turns each" in fork and "With 5 children" not in fork
    assert "| 4 | 2 | 30,000 | 4,500 | 500 | always |" in fork    # the design's answer, in its table
    # the studies it does not name run at its own sizes (its first prompt for the TTL study), or, with
    # nothing of the scenario to size them (no tools for invalidation), say they use the defaults
    first = run_scenario(str(tmp_path / "s.yaml"), dt.date(2026, 11, 30)).variants[0].outcomes[0].usage.prompt_tokens
    assert (f"No scenario names this study (`studies:`), so it runs at the sizes of scenario four-forks (prefix "
            f"read from it): prefix {first}.") in md
    assert "No scenario names this study (`studies:`), so it uses the defaults: tools 14000" in md


@pytest.mark.slow
def test_report_takes_params(tmp_path):
    (tmp_path / "s.yaml").write_text(STUDIED)
    rc, out, err = cli("report", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out") + "/",
                       "--price-date", "2026-11-30", "-p", "children=3,6", "-p", "ttl.prefix=5000")
    assert rc == 0, err
    md = (tmp_path / "out" / "report.md").read_text()
    assert "With 3 children of 2 turns each" in md and "With 6 children of 2 turns each" in md
    assert "With 4 children" not in md
    assert "(prefix read from it) with -p: prefix 5000." in md   # -p on top of the scenario's own size
    rc, out, err = cli("report", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out2") + "/", "-p", "bogus=1")
    assert rc == 2 and "--param 'bogus=1'" in err and not (tmp_path / "out2").exists()


@pytest.mark.slow
def test_a_bad_study_in_a_scenario_is_named_at_its_line(tmp_path):
    (tmp_path / "s.yaml").write_text(STUDIED.replace("task: 500", "task: lots"))
    rc, out, err = cli("validate", str(tmp_path / "s.yaml"))
    # at the parameter's own line and column (issue 33), not the `studies:` key's
    assert rc == 2 and "s.yaml:5:62: studies: fork-vs-subagent task: 'lots' is not a whole number of tokens" in err
    (tmp_path / "s.yaml").write_text(STUDIED.replace("fork-vs-subagent:", "fork-vs-sub:"))
    rc, out, err = cli("validate", str(tmp_path / "s.yaml"))
    assert rc == 2 and "unknown study 'fork-vs-sub'" in err
