"""Nothing the user gave is overwritten: an output that is an input (by any name) is refused before
anything is written, two scenarios never share a report folder, and `report -o` never writes two
formats to one name."""
import os
from pathlib import Path

import pytest
from conftest import data_file

from prefixsim.cli import main

SCENARIO = "name: {name}\nprovider: prefix\ntokenizer: approx\nbase: {{system: 100}}\ntimeline: [request: 2]\n"
CHARTED = ("name: keep\nprovider: prefix\ntokenizer: approx\nbase: {system: 100}\ntimeline: [request: \"${n}\"]\n"
           "sweep: {param: n, values: [1, 2]}\nchart: {x: n, y: cost_usd}\n")
DATE = ["--price-date", "2026-11-30"]


def _exit(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes (what must not change when a command is refused)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _refused(args, capsys, tmp_path, output):
    before = _tree(tmp_path)
    code, out, err = _exit(args, capsys)
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{output}: this output ")
    assert lines[0].endswith("nothing was written (choose another output path)")
    assert _tree(tmp_path) == before   # the input intact and nothing new beside it
    return err


# --- an output that is an input ----------------------------------------------------------------------

def test_report_onto_its_scenario_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(SCENARIO.format(name="keep"))
    err = _refused(["report", "s.yaml", "-o", "s.yaml", *DATE], capsys, tmp_path, "s.yaml")
    assert err == ("s.yaml: this output is an input of this command; refusing to overwrite it, nothing was "
                   "written (choose another output path)\n")


def test_report_whose_markdown_twin_is_the_scenario_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("review.md").write_text(SCENARIO.format(name="keep"))   # a scenario may have any name
    _refused(["report", "review.md", "-o", "review.html", *DATE], capsys, tmp_path, "review.md")


def test_report_onto_a_hard_link_of_its_scenario_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(SCENARIO.format(name="keep"))
    os.link("s.yaml", "page.html")
    err = _refused(["report", "s.yaml", "-o", "page.html", *DATE], capsys, tmp_path, "page.html")
    assert "is the input s.yaml under another name" in err


@pytest.mark.parametrize("how", ["same", "dot-slash", "hard-link", "symlink", "folder-input"])
def test_export_onto_the_replayed_log_is_refused(tmp_path, capsys, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    Path("t.jsonl").write_bytes(data_file("claude-code", "spotter", "short.jsonl").read_bytes())
    target, given = {"same": ("t.jsonl", "t.jsonl"), "dot-slash": ("./t.jsonl", "t.jsonl"),
                     "hard-link": ("link.jsonl", "t.jsonl"), "symlink": ("sym.jsonl", "t.jsonl"),
                     "folder-input": ("t.jsonl", ".")}[how]
    if how == "hard-link":
        os.link("t.jsonl", "link.jsonl")
    if how == "symlink":
        os.symlink("t.jsonl", "sym.jsonl")
    _refused(["replay", given, "--export-mooncake", target, "--format", "csv"], capsys, tmp_path, target)


def test_export_onto_a_streamed_log_is_refused_before_reading_it(tmp_path, capsys, monkeypatch):
    """A log over the streaming threshold (256 MB) is re-read at its offsets while replaying: an export
    over it used to replace it first and then fail, the log lost."""
    from test_reliability_api_log_stream import write_log

    from prefixsim import sources

    monkeypatch.setattr(sources, "STREAM_LOGS_OVER", 0)
    log = tmp_path / "calls.jsonl"
    write_log(log, 3)
    _refused(["replay", str(log), "--export-mooncake", str(log), "--format", "csv"], capsys, tmp_path, str(log))


def test_run_report_folder_holding_its_scenario_is_refused(tmp_path, capsys):
    (tmp_path / "r" / "keep").mkdir(parents=True)
    (tmp_path / "r" / "keep" / "keep.yaml").write_text(SCENARIO.format(name="keep"))
    err = _refused(["run", str(tmp_path / "r"), "--out", str(tmp_path / "r"), *DATE], capsys, tmp_path,
                   str(tmp_path / "r" / "keep"))
    assert f"this output folder holds the input {tmp_path / 'r' / 'keep' / 'keep.yaml'}; refusing to replace it" in err


def test_run_report_folder_holding_a_request_body_is_refused(tmp_path, capsys):
    """`file:` bodies are inputs too: one at keep/results.json would have been overwritten."""
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "results.json").write_text('{"system": "you are a helper", "messages": []}')
    (tmp_path / "s.yaml").write_text("name: keep\nprovider: prefix\ntokenizer: approx\n"
                                     "base: {file: keep/results.json}\ntimeline: [request: 2]\n")
    _refused(["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path), *DATE], capsys, tmp_path,
             str(tmp_path / "keep"))


def test_breakeven_onto_its_price_sheet_is_refused(tmp_path, capsys):
    sheet = tmp_path / "ttl.csv"   # a price sheet is YAML whatever its name
    sheet.write_text("claude-sonnet-4-5: {input: 10, output: 50}\n")
    _refused(["breakeven", "ttl", "--prices", str(sheet), "--out", str(tmp_path)], capsys, tmp_path, str(sheet))


def test_breakeven_onto_its_gaps_source_is_refused(tmp_path, capsys):
    log = tmp_path / "ttl.svg"
    log.write_bytes(data_file("claude-code", "spotter", "short.jsonl").read_bytes())
    _refused(["breakeven", "ttl", "--gaps-from", str(tmp_path), "--out", str(tmp_path), *DATE], capsys, tmp_path,
             str(log))


def test_run_into_the_scenario_folder_writes_beside_the_scenarios(tmp_path, capsys):
    sc = tmp_path / "scenarios"
    sc.mkdir()
    (sc / "a.yaml").write_text(SCENARIO.format(name="alpha"))
    (sc / "b.yaml").write_text(SCENARIO.format(name="beta"))
    before = _tree(sc)
    for _ in range(2):   # the second run reads the first one's reports as nothing: no YAML among them
        code, out, err = _exit(["run", str(sc), "--out", str(sc), *DATE], capsys)
        assert code == 0, err
    after = _tree(sc)
    assert {k: after[k] for k in before} == before
    assert (sc / "alpha" / "requests.csv").is_file() and (sc / "beta" / "requests.csv").is_file()


def test_a_folder_with_files_prefixsim_did_not_write_is_not_replaced(tmp_path, capsys):
    """`--out .` with a scenario named like one of the user's folders must not delete that folder."""
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "notes.txt").write_text("mine")
    (tmp_path / "a.yaml").write_text(SCENARIO.format(name="alpha"))   # checked before this one is written
    (tmp_path / "s.yaml").write_text(SCENARIO.format(name="keep"))
    code, out, err = _exit(["run", str(tmp_path / "a.yaml"), str(tmp_path / "s.yaml"), "--out", str(tmp_path), *DATE],
                           capsys)
    assert code == 2 and not (tmp_path / "alpha").exists()
    assert err.splitlines()[0] == (f"{tmp_path / 'keep'}: holds files that are not part of a scenario report "
                                   "(notes.txt); not replacing the folder (move them, or choose another output folder)")
    assert _tree(tmp_path / "keep") == {"notes.txt": b"mine"}


def test_check_outputs_finds_a_hard_link_inside_a_folder(tmp_path):
    from prefixsim.errors import UserError
    from prefixsim.io.fsutil import check_outputs

    (tmp_path / "in.yaml").write_text("x")
    (tmp_path / "out").mkdir()
    os.link(tmp_path / "in.yaml", tmp_path / "out" / "requests.csv")
    with pytest.raises(UserError, match="this output folder holds the input"):
        check_outputs([tmp_path / "in.yaml"], folders=[tmp_path / "out"])
    check_outputs([tmp_path / "in.yaml"], files=[tmp_path / "other.csv"], folders=[tmp_path / "elsewhere"])


# --- two scenarios, one report folder ----------------------------------------------------------------

@pytest.mark.parametrize("names", [("team/a", "team-a"), ("same", "same"), ("Keep", "keep")])
def test_scenarios_sharing_a_report_folder_are_an_error_naming_both(tmp_path, capsys, names):
    sc = tmp_path / "sc"
    sc.mkdir()
    (sc / "a.yaml").write_text(SCENARIO.format(name=f"'{names[0]}'"))
    (sc / "b.yaml").write_text("description: second\n" + SCENARIO.format(name=f"'{names[1]}'"))
    code, out, err = _exit(["run", str(sc), "--out", str(tmp_path / "r"), *DATE], capsys)
    assert code == 2
    folder = names[0].replace("/", "-")
    other = "the same name" if names[0] == names[1] else repr(names[0])
    assert err == (f"{sc / 'b.yaml'}:2: scenario name {names[1]!r} gives the report folder {names[1]!r}, as does "
                   f"{other} in {sc / 'a.yaml'}:1: one report would replace the other (rename one of them)\n")
    assert not (tmp_path / "r").exists()   # checked before anything ran
    assert folder.casefold() == names[1].casefold()


def test_validate_finds_scenarios_sharing_a_report_folder(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text(SCENARIO.format(name="team/a"))
    (tmp_path / "b.yaml").write_text(SCENARIO.format(name="team-a"))
    code, out, err = _exit(["validate", str(tmp_path)], capsys)
    assert code == 2
    assert err.splitlines() == [
        f"{tmp_path / 'b.yaml'}:1: scenario name 'team-a' gives the report folder 'team-a', as does 'team/a' in "
        f"{tmp_path / 'a.yaml'}:1: one report would replace the other (rename one of them)",
        "prefixsim: 1 scenario file(s) have errors"]


@pytest.mark.slow
def test_a_report_folder_of_another_kind_is_not_replaced(tmp_path, capsys, charted):
    """A scenario named `r_files` must not replace the PNGs of the page r.html beside it."""
    assert _exit(["report", str(charted), "-o", str(tmp_path / "r.html"), *DATE], capsys)[0] == 0
    pngs = _tree(tmp_path / "r_files")
    (tmp_path / "s.yaml").write_text(SCENARIO.format(name="r_files"))
    code, out, err = _exit(["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path), *DATE], capsys)
    assert code == 2
    assert err.splitlines()[0] == (f"{tmp_path / 'r_files'}: holds another kind of prefixsim output (report's image "
                                   "folder), not a scenario report; not replacing it (choose another output folder)")
    assert _tree(tmp_path / "r_files") == pngs


def test_no_write_runs_scenarios_sharing_a_name(tmp_path, capsys):
    for f in ("a.yaml", "b.yaml"):
        (tmp_path / f).write_text(SCENARIO.format(name="same"))
    code, out, err = _exit(["run", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--no-write", *DATE], capsys)
    assert code == 0, err


def test_report_of_scenarios_sharing_a_folder_is_an_error(tmp_path, capsys):
    """The page names figures and anchors after the folder name: one chart would replace the other."""
    (tmp_path / "a.yaml").write_text(SCENARIO.format(name="team/a"))
    (tmp_path / "b.yaml").write_text(SCENARIO.format(name="team-a"))
    code, out, err = _exit(["report", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "-o",
                            str(tmp_path / "r.html"), *DATE], capsys)
    assert code == 2 and err.startswith(f"{tmp_path / 'b.yaml'}:1: scenario name 'team-a' gives the report folder")
    assert not (tmp_path / "r.html").exists()


# --- report -o: one format per name ------------------------------------------------------------------

@pytest.fixture(scope="module")
def charted(tmp_path_factory):
    d = tmp_path_factory.mktemp("charted")
    (d / "s.yaml").write_text(CHARTED)
    return d / "s.yaml"


@pytest.mark.parametrize("given,html,md,pngs", [
    ("x.md", "x.html", "x.md", "x_files"),
    ("x.html", "x.html", "x.md", "x_files"),
    ("x", "x.html", "x.md", "x_files"),
    ("dir/", "dir/report.html", "dir/report.md", "dir/report_files"),
    ("existing", "existing/report.html", "existing/report.md", "existing/report_files"),
])
@pytest.mark.slow
def test_report_output_names(tmp_path, capsys, monkeypatch, charted, given, html, md, pngs):
    monkeypatch.chdir(tmp_path)
    Path("existing").mkdir()
    code, out, err = _exit(["report", str(charted), "-o", given, *DATE], capsys)
    assert code == 0, err
    assert err == f"wrote {html} and {md}\n"
    assert Path(html).read_text().startswith("<!doctype html>")
    assert Path(md).read_text().startswith("# Prompt-cache design review")
    assert (Path(pngs) / "keep-sweep.png").is_file() and (Path(pngs) / "keep-cost.png").is_file()
    assert f"]({Path(pngs).name}/keep-cost.png)" in Path(md).read_text()


def test_report_output_of_another_kind_is_an_error(tmp_path, capsys, charted):
    code, out, err = _exit(["report", str(charted), "-o", str(tmp_path / "x.txt"), *DATE], capsys)
    assert code == 2
    assert err == (f"{tmp_path / 'x.txt'}: -o names the HTML page (.html), its Markdown twin (.md) or a folder "
                   "(ending in /), not a .txt file\n")


@pytest.mark.slow
def test_report_pngs_of_an_earlier_report_go(tmp_path, capsys, charted):
    out = tmp_path / "r.html"
    assert _exit(["report", str(charted), "-o", str(out), *DATE], capsys)[0] == 0
    assert (tmp_path / "r_files" / "keep-sweep.png").is_file()
    plain = tmp_path / "plain.yaml"
    plain.write_text(SCENARIO.format(name="keep"))
    assert _exit(["report", str(plain), "-o", str(out), *DATE], capsys)[0] == 0
    assert not (tmp_path / "r_files" / "keep-sweep.png").exists()   # the new page has no sweep chart
    assert (tmp_path / "r_files" / "keep-cost.png").is_file()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp") or ".new-" in p.name]
