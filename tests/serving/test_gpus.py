"""The GPU catalogue as data: every row's figures are its datasheet's (dense: half NVIDIA's printed
"with sparsity" figure), each row and each price names its source and a date, and a user's rows
replace or add GPUs (one line naming a bad value)."""
import re

import pytest

from prefixsim.errors import UserError
from prefixsim.serving.gpus import CATALOGUE, catalogue, gpu


def test_the_six_gpus_with_their_datasheet_figures():
    # (dense BF16 TFLOPS, dense FP8 TFLOPS, HBM GB, TB/s): NVIDIA's printed sparse figures halved
    assert {n: (g.bf16_tflops, g.fp8_tflops, g.hbm_gb, g.hbm_tb_s) for n, g in CATALOGUE.items()} == {
        "h100-sxm": (1979 / 2, 3958 / 2, 80, 3.35),
        "h200": (1979 / 2, 3958 / 2, 141, 4.8),
        "b200": (36_000 / 8 / 2, 72_000 / 8 / 2, 1440 / 8, 64 / 8),
        "a100-80gb": (312, None, 80, 2.039),
        "l40s": (362.05, 733, 48, 0.864),
        "mi300x": (1307.4, 2614.9, 192, 5.3),
    }


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_every_row_and_price_names_its_source_and_the_price_its_date(name):
    g = CATALOGUE[name]
    assert g.source.startswith(("NV-DS, ", "AMD-DS, ")) and ("nvidia.com" in g.source or "amd.com" in g.source)
    assert g.price_source.startswith("GPU-PR, ") and re.search(r"\d{4}-\d{2}-\d{2}", g.price_source)
    assert f"${g.usd_per_hour:.2f}/h" in g.price_source


def test_peak_flops_by_dtype_and_no_fp8_on_an_a100():
    assert gpu("H100-SXM").peak_flops("bf16") == 989.5e12 and gpu("h100-sxm").peak_flops("fp8") == 1979e12
    with pytest.raises(UserError, match="a100-80gb has no FP8 tensor cores"):
        gpu("a100-80gb").peak_flops("fp8")


def test_a_users_rows_replace_a_price_or_add_a_gpu():
    rows = catalogue({"h100-sxm": {"usd_per_hour": 2.0, "source": "our contract, 2026-12"},
                      "my-card": {"bf16_tflops": 100, "hbm_gb": 24, "hbm_tb_s": 1, "usd_per_hour": 0.5}})
    h = rows["h100-sxm"]
    assert (h.usd_per_hour, h.price_source, h.source) == (2.0, "our contract, 2026-12", CATALOGUE["h100-sxm"].source)
    assert rows["my-card"].fp8_tflops is None and rows["my-card"].bandwidth == 1e12
    assert CATALOGUE["h100-sxm"].usd_per_hour == 2.69   # the catalogue itself is unchanged


@pytest.mark.parametrize("rows,said", [
    ({"h100-sxm": {"usd_per_hour": -1}}, "--gpus h100-sxm.usd_per_hour: -1 is not USD per GPU-hour"),
    ({"h100-sxm": {"usd_per_hour": True}}, "--gpus h100-sxm.usd_per_hour: True is not"),
    ({"h100-sxm": {"tflops": 1}}, "--gpus h100-sxm.tflops: not a GPU figure"),
    ({"new": {"bf16_tflops": 1}}, "--gpus new: a GPU the catalogue does not hold needs hbm_gb, hbm_tb_s, usd_per_hour"),
    ({"h100-sxm": 3}, "--gpus h100-sxm: a GPU is a mapping"),
])
def test_a_bad_row_is_one_line_naming_it(rows, said):
    with pytest.raises(UserError) as e:
        catalogue(rows)
    assert said in e.value.message and "\n" not in e.value.message


def test_an_unknown_gpu_names_the_nearest():
    with pytest.raises(UserError, match="did you mean 'h100-sxm'"):
        gpu("h100-sxn")
