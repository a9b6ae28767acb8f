"""`engine: {gpu:, gpus:}`: a scenario's engine sized by the roofline (its KV capacity the HBM left
after the weights, its prefill and decode rates), on figures worked by hand, and its refusals."""
import datetime as dt
import json

import pytest
from conftest import cli_exit as _exit

from prefixsim.api import run_scenario
from prefixsim.errors import UserError
from prefixsim.serving.engine_spec import sized

SCENARIO = {"name": "sized", "model": "llama-3.1-8b", "provider": "vllm", "tokenizer": "approx",
            "engine": {"gpu": "h100-sxm"}, "base": {"system": 1500}, "timeline": [{"request": 3}]}


def test_one_h100_under_llama_8b_by_hand():
    # KV: 80e9 x 0.9 - 8.03e9 x 2 = 55.94e9 bytes / 131,072 = 426,788 tokens; prefill: 50 % of
    # 989.5 TFLOPS over 2 x 8.03e9 FLOPs a token = 30,806 tokens/s; a lone request decodes a token a
    # step of (16.06e9 + 8,000 x 131,072) / (60 % of 3.35e12) s: 117.4 tokens/s
    g = sized("h100-sxm", None, "llama-3.1-8b")
    assert g.capacity == 426_788
    assert g.prefill_tokens_per_s == pytest.approx(0.5 * 989.5e12 / (2 * 8.03e9), rel=1e-12)
    assert g.decode_tokens_per_s == pytest.approx(0.6 * 3.35e12 / (16.06e9 + 8000 * 131_072), rel=1e-12)
    assert sized("h100-sxm", 4, "llama-3.1-70b").capacity == 447_998


def test_a_scenario_runs_on_the_sized_engine():
    res = run_scenario(SCENARIO, dt.date(2026, 11, 30))
    engine = res.variants[0].assumptions
    assert engine["capacity"] == "426,788 tokens" and engine["prefill rate"] == "30,806 tokens/s"
    # given rates win over the roofline's
    given = run_scenario({**SCENARIO, "engine": {"gpu": "h100-sxm", "prefill_tokens_per_s": 5000}}, dt.date(2026, 11, 30))
    assert given.variants[0].assumptions["prefill rate"] == "5,000 tokens/s"


@pytest.mark.parametrize("engine,said", [
    ({"gpu": "h100-sxm", "capacity": "2GiB"}, "engine: give capacity or gpu, not both"),
    ({"gpu": "h100-sxm", "gpus": 3}, "engine.gpus 3: the weights split over 1, 2, 4, 8 GPUs"),
    ({"gpu": "h100-sxm", "kv_model": "llama-3.1-70b"}, "engine.gpu: llama-3.1-70b's weights (141.2 GB) leave no KV "
                                                       "cache on 1 x h100-sxm (72.0 GB usable): more engine.gpus"),
])
def test_a_sized_engine_that_cannot_be_is_one_line(engine, said, tmp_path, capsys):
    p = tmp_path / "s.yaml"
    p.write_text(json.dumps({**SCENARIO, "engine": engine}))
    code, out, err = _exit(["run", str(p), "--no-write", "--price-date", "2026-11-30"], capsys)
    # the mistake at the file's line, then run's count of the files that failed
    assert code == 2 and said in err.splitlines()[0] and err.splitlines()[0].startswith(f"{p}:"), err
    with pytest.raises(UserError):
        run_scenario({**SCENARIO, "engine": engine}, dt.date(2026, 11, 30))
