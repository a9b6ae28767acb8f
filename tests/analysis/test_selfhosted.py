"""breakeven api-vs-selfhosted: the API side and the crossing on figures worked by hand, the GPU side
from the engine simulation when the sessions in flight do not fit the KV, the check against the
runner, and the command at 80 and 120 columns, in JSON, and refusing bad input in one line (exit 2,
never 70)."""
import json
import math

import pytest
from conftest import PRICE_DATE
from conftest import cli_exit as _exit

from prefixsim.analysis import selfhosted as sh
from prefixsim.analysis.common import prices_for
from prefixsim.analysis.studies import run_study
from prefixsim.scenario.studycheck import parse_pairs
from prefixsim.scenario.studyparams import SelfHostedParams
from prefixsim.serving.capacity import Load, Throughput
from prefixsim.serving.gpus import gpu
from prefixsim.serving.models import open_model
from prefixsim.serving.roofline import Replica

DATE = ["--price-date", PRICE_DATE.isoformat()]


def _prices():
    return prices_for("claude-sonnet-4-5", when=PRICE_DATE)[0]


def test_the_api_side_by_hand():
    # claude-sonnet-4-5: $3 input, $0.30 read, $3.75 5m write, $15 output per MTok. 10 turns over 18,000
    # static, 1,500 a turn: reads 18,000 + (18,000 + 1,500 k) for k = 1..9 = 247,500; writes 10 x 1,500;
    # 3,000 output: 0.07425 + 0.05625 + 0.045 = $0.1755 a session, $0.01755 a request
    f = SelfHostedParams()
    assert float(sh.session_cost(_prices(), f, f.static, sh.lengths(f))) == pytest.approx(0.1755, abs=1e-12)
    assert float(sh.api_per_request(_prices(), f)) == pytest.approx(0.01755, abs=1e-12)
    # cold, turn 1 writes its whole 19,500 tokens instead of reading 18,000: + 18,000 x (3.75 - 0.30) / 1e6
    cold = sh.session_cost(_prices(), f, f.static, sh.lengths(f), warm=False)
    assert float(cold) == pytest.approx(0.1755 + 18_000 * 3.45e-6, abs=1e-12)


def _point(tp: int, seconds: float, price: float) -> sh.Point:
    replica = Replica(gpu("h100-sxm"), open_model("llama-3.1-8b"), tp=tp)
    return sh.Point(replica, Load(1000, 0.5, 10), Throughput(seconds, 0.0, 1), 1.0,
                    sh.Served((1000,), (500,), "by hand"), price)


def test_the_crossing_by_hand():
    # one GPU at $3,600 an hour is $1 a second; a request takes it 1 s: $1 at full load. Against an API
    # request of $1.50 the GPU is cheaper from 1 / 1.5 = 0.667 requests/s (one replica, never idle
    # enough); on (1, 2] two replicas cost 2 / R, cheaper from 1.333; past 2 requests/s, always (K = 3)
    pt = _point(1, 1.0, 3600.0)
    first, always = sh.crossing([pt], 1.5)
    assert (first, always) == pytest.approx((1 / 1.5, 2 / 1.5))
    assert sh.cost_at([pt], 1.2)[0] == pytest.approx(2 / 1.2) and sh.cost_at([pt], 0.5)[0] == pytest.approx(2.0)
    # at full load a request costs $1: against an API at $0.90 the GPUs are never cheaper
    assert sh.crossing([pt], 0.9) == (None, None)
    # a second size, 2 GPUs at 0.4 s a request ($0.80 at full load), closes the gap (1, 1.333): from
    # 1.333 one size or the other is cheaper at every rate
    both = [pt, _point(2, 0.4, 3600.0)]
    assert sh.crossing(both, 1.5) == pytest.approx((1 / 1.5, 2 / 1.5))
    assert sh.cost_at(both, 2.5)[1].replica.tp == 2   # one 2-GPU replica: $2 / 2.5 = $0.80 < $3 / 2.5


def test_the_default_agent_answers_and_agrees_with_the_runner():
    f, lists = parse_pairs("api-vs-selfhosted", [])
    study, check = run_study("api-vs-selfhosted", _prices(), f, lists, when=PRICE_DATE)
    assert check["ok"] and check["points"] == 3 and check["max_abs_diff_usd"] <= 1e-6
    row = study.table[0]
    # 4 x $2.69 an hour = $0.0029889 a second, over $0.01755 a request: 0.170307 requests/s
    assert row["selfhosted_cheaper_from_per_s"] == pytest.approx(4 * 2.69 / 3600 / 0.01755, rel=1e-9)
    assert row["gpus_at_rate"] == 4 and row["api_per_day_usd"] == pytest.approx(0.01755 * 86_400)
    assert "Assumed: " in study.reading and "quality is yours to weigh" in study.reading


def test_sessions_that_do_not_fit_the_kv_are_measured_by_the_engine():
    # 12 turns of 8,000 tokens, a turn every 200 s: 40 sessions in flight on 4 H100s need far more
    # than their 448K KV tokens; LRU on that cycle keeps little beyond the static prefix
    f = SelfHostedParams(static=2000, growth=8000, turns=12, pace=200)
    pts = sh.points(f, gpu("h100-sxm"))
    four = next(pt for pt in pts if pt.replica.tp == 4)
    assert four.served.how.startswith("vllm's cache simulated: 8 of ")
    assert four.served.hit_rate < 0.2 < sh.engine_reads(f).hit_rate
    # the default design's sessions fit: each turn reads the one before, on every replica size
    assert all(pt.served == sh.engine_reads(SelfHostedParams()) for pt in sh.points(SelfHostedParams(), gpu("h100-sxm")))


@pytest.mark.parametrize("width", [80, 120])
def test_the_command_fits_its_width(tmp_path, capsys, width):
    code, out, err = _exit(["breakeven", "api-vs-selfhosted", "--width", str(width), "--out", str(tmp_path), *DATE],
                           capsys)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= width
    assert "self-hosting is cheaper from" in out and "0.17 requests/s (14,715 a day)" in out
    assert out.rstrip().endswith("agree")
    assert {p.name for p in tmp_path.iterdir()} == {f"api-vs-selfhosted.{x}" for x in ("csv", "png", "svg")}


def test_json_keeps_the_numbers(tmp_path, capsys):
    code, out, _ = _exit(["breakeven", "api-vs-selfhosted", "-p", "rate=2", "--format", "json", "--out",
                          str(tmp_path), *DATE], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["study"] == "api-vs-selfhosted" and doc["check"]["ok"]
    row = doc["crossings"][0]
    assert row["rate_per_s"] == 2.0 and math.isclose(row["api_per_day_usd"], 0.01755 * 2 * 86_400)
    assert doc["params"]["gpu"] == "h100-sxm" and len(doc["curve"]) == 81


def test_a_users_gpu_row_is_served_on(tmp_path, capsys):
    rows = tmp_path / "gpus.yaml"
    rows.write_text("h100-sxm:\n  usd_per_hour: 1.0\n  source: our contract\nmy-card:\n  bf16_tflops: 500\n"
                    "  hbm_gb: 96\n  hbm_tb_s: 2\n  usd_per_hour: 1.2\n")
    code, out, err = _exit(["breakeven", "api-vs-selfhosted", "--gpus", str(rows), "-p", "gpu=my-card",
                            "--format", "json", "--out", str(tmp_path / "o"), *DATE], capsys)
    assert code == 0, err
    assert json.loads(out)["crossings"][0]["gpu_hour_usd"] == 1.2
    code, out, err = _exit(["breakeven", "api-vs-selfhosted", "--gpus", str(rows), "--format", "json",
                            "--out", str(tmp_path / "o"), *DATE], capsys)
    assert code == 0 and "our contract" in json.loads(out)["reading"]


@pytest.mark.parametrize("args,said", [
    (["-p", "gpu=h100-sxn"], "--param gpu: 'h100-sxn' is not one of h100-sxm, h200, b200, a100-80gb, l40s, mi300x "
                             "(did you mean 'h100-sxm'?)"),
    (["-p", "rate=0"], "--param rate: 0 is out of its range, 0.001 to 10,000 (requests a second)"),
    (["-p", "rate=fast"], "--param rate: 'fast' is not a number (e.g. 0.5)"),
    (["-p", "memory_efficiency=2"], "--param memory_efficiency: 2 is out of its range, 0.01 to 1"),
    (["-p", "gpu_hour_usd=-1"], "--param gpu_hour_usd: '-1' must be a finite number, not negative"),
    (["-p", "gpu=a100-80gb", "-p", "dtype=fp8"], "a100-80gb has no FP8 tensor cores: serve its weights in bf16"),
    (["-p", "gpu=l40s", "-p", "static=200000", "-p", "turns=50", "-p", "growth=10000"],
     "llama-3.1-70b at bf16 does not fit 8 x l40s with the KV of one 700,300-token request"),
    (["--model", "gpt-4o"], "breakeven api-vs-selfhosted models Anthropic's rules, not openai's"),
    (["--gpus", "{GPUS}"], "@{GPUS}:2:3: --gpus h100-sxm.usd_per_hour: 'cheap' is not USD per GPU-hour"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, said):
    bad = tmp_path / "gpus.yaml"
    bad.write_text("h100-sxm:\n  usd_per_hour: cheap\n")
    args = [a.replace("{GPUS}", str(bad)) for a in args]
    code, out, err = _exit(["breakeven", "api-vs-selfhosted", *args, "--out", str(tmp_path / "o"), *DATE], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    said = said.replace("{GPUS}", str(bad))   # a file's mistake is located, path first (no prefix)
    assert err.startswith(said[1:] if said.startswith("@") else f"prefixsim: {said}"), err
    assert not (tmp_path / "o").exists()


def test_gpus_belongs_to_the_serving_study(tmp_path, capsys):
    rows = tmp_path / "g.yaml"
    rows.write_text("h100-sxm: {usd_per_hour: 1}\n")
    code, _, err = _exit(["breakeven", "ttl", "--gpus", str(rows), "--out", str(tmp_path), *DATE], capsys)
    assert code == 2 and err == "prefixsim: --gpus belongs to the api-vs-selfhosted study, not ttl\n"
