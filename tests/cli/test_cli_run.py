"""`prefixsim run / validate / schema` as a user meets them (CliRunner and the real entry point)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None):
    p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", *args],
                       capture_output=True, text=True, cwd=cwd or ROOT)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.slow
def test_run_json_shape_and_sums(tmp_path):
    rc, out, err = cli("run", "scenarios/ttl-expiry.yaml", "scenarios/seed-fork-chapter.yaml", "--format", "json",
                       "--out", str(tmp_path), "--price-date", "2026-11-30")
    assert rc == 0, err
    doc = json.loads(out)
    assert [s["name"] for s in doc["scenarios"]] == ["ttl-expiry", "seed-fork-chapter"]
    for s in doc["scenarios"]:
        for v in s["variants"]:
            for r in v["requests"]:
                assert r["cache_creation_input_tokens"] == r["cache_write_5m_tokens"] + r["cache_write_1h_tokens"]
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"):
                assert v["summary"][k] == sum(r[k] for r in v["requests"])
            assert abs(v["summary"]["cost_usd"] - sum(r["cost_usd"] for r in v["requests"])) < 1e-5
    for name in ("requests.csv", "summary.csv", "summary.md", "results.json"):
        assert (tmp_path / "ttl-expiry" / name).is_file()
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.slow
def test_run_is_byte_identical_across_runs_and_hash_seeds(tmp_path):
    outs = []
    for seed in ("0", "12345"):
        p = subprocess.run([sys.executable, "-c", "from prefixsim.cli import main; main()", "run",
                            "scenarios/seed-fork-economics.yaml", "--format", "json", "--no-write",
                            "--price-date", "2026-11-30"], capture_output=True, text=True, cwd=ROOT,
                           env={**__import__("os").environ, "PYTHONHASHSEED": seed})
        outs.append(p.stdout)
    assert outs[0] == outs[1] and outs[0]


@pytest.mark.parametrize("text,needle", [
    ("name: oops\nprovider: anthropic\nthis_key_does_not_exist: 1\n", "oops.yaml:3:1: unknown key 'this_key_does_not_exist'"),
    ("name: oops\ntokeniser: approx\n", "oops.yaml:2:1: unknown key 'tokeniser' (did you mean 'tokenizer'?)"),
    ("name: oops\nprovider: antropic\n", "oops.yaml:2:1: unknown provider 'antropic' (did you mean 'anthropic'? valid: anthropic, bedrock, vertex, gemini, openai, deepseek, prefix, vllm, sglang, groq, mistral, xai, zai, moonshot, together, fireworks, cohere, other)"),
    ("name: oops\ntimeline:\n  - frok: 3\n", "oops.yaml:3:5: unknown step 'frok' (did you mean 'fork'?)"),
    ("name: oops\ntimeline:\n  - fork: {children: -1}\n", "oops.yaml:3:12: timeline[0].fork.children: -1 is too small (at least 0)"),
    ("name: oops\nbase:\n  system: 100000000000\n", "oops.yaml:3:3:"),
    ("name: oops\nname: again\n", "oops.yaml:2:1: duplicate key"),
    ("name: [oops\n", "oops.yaml:2:1: YAML syntax error"),
    ("", "oops.yaml:1: empty file"),
    ("name: oops\nwait: !!python/object/apply:os.system ['echo hi']\n", "oops.yaml"),
    ("name: oops\nbase: {file: ../../etc/passwd}\ntimeline: [request: 1]\n", "points outside the scenario's folder"),
    ("name: oops\ntimeline: [remove_tool: Nope, request: 1]\n", "no tool named 'Nope'"),
])
@pytest.mark.slow
def test_bad_scenarios_get_one_line_and_exit_2(tmp_path, text, needle):
    p = tmp_path / "oops.yaml"
    p.write_text(text)
    rc, out, err = cli("run", str(p), "--out", str(tmp_path / "r"))
    assert rc == 2, (out, err)
    assert "Traceback" not in err
    assert needle in err, err
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("*.json"))


@pytest.mark.slow
def test_non_utf8_file(tmp_path):
    p = tmp_path / "latin.yaml"
    p.write_bytes("name: caf\xe9\n".encode("latin-1"))
    rc, out, err = cli("validate", str(p))
    assert rc == 2 and "latin.yaml:1: not UTF-8" in err


@pytest.mark.slow
def test_one_bad_file_does_not_stop_the_others(tmp_path):
    (tmp_path / "a_bad.yaml").write_text("name: bad\nprovider: nope\n")
    (tmp_path / "b_good.yaml").write_text("name: good\nprovider: prefix\ntokenizer: approx\n"
                                          "base: {system: 100}\ntimeline: [request: 2]\n")
    rc, out, err = cli("run", str(tmp_path), "--out", str(tmp_path / "r"), "--price-date", "2026-11-30")
    assert rc == 2
    assert "good" in out and (tmp_path / "r" / "good" / "results.json").is_file()
    assert "a_bad.yaml:2:1: unknown provider" in err and "1 of 2 scenario files failed" in err


@pytest.mark.slow
def test_validate_and_schema():
    rc, out, err = cli("validate", "scenarios/")
    assert rc == 0 and out.count(": ok") == len(list((ROOT / "scenarios").glob("*.yaml")))
    rc, out, err = cli("schema")
    schema = json.loads(out)
    assert "timeline" in schema["properties"] and "$defs" in schema


@pytest.mark.slow
def test_sweep_expands_runs(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("name: sweep\nprovider: prefix\ntokenizer: approx\nbase: {system: 100}\n"
                 "timeline: [fork: {children: '${n}', join: false}]\nsweep: {param: n, values: [1, 3]}\n")
    rc, out, err = cli("run", str(p), "--format", "json", "--no-write", "--price-date", "2026-11-30")
    doc = json.loads(out)
    v = doc["scenarios"][0]["variants"]
    assert [x["name"] for x in v] == ["default [n=1]", "default [n=3]"]
    assert [len(x["requests"]) for x in v] == [1, 3]


@pytest.mark.slow
def test_help_lists_commands_with_examples():
    rc, out, err = cli("--help")
    assert rc == 0 and "run" in out and "validate" in out
    rc, out, err = cli("run", "--help")
    assert "prefixsim run scenarios/" in out
