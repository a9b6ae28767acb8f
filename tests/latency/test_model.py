"""The latency model's arithmetic, its percentiles and its fitted-model file."""
import math

import pytest

from prefixsim.errors import UserError
from prefixsim.latency.model import LatencyBook, LatencyModel, fitted_document, percentile, read_fitted
from prefixsim.model import Usage


def test_ttft_counts_writes_as_uncached_and_reads_as_cached():
    lm = LatencyModel(0.5, 0.1, 0.01)
    u = Usage(input_tokens=1000, cache_write_5m=2000, cache_write_1h=1000, cache_read=50_000)
    # 0.5 + 0.1 x (1,000 + 2,000 + 1,000)/1,000 + 0.01 x 50,000/1,000 = 0.5 + 0.4 + 0.5
    assert lm.of(u) == pytest.approx(1.4)
    # nothing read: every one of the 54,000 tokens computed, 0.5 + 5.4
    assert lm.without_cache(u) == pytest.approx(5.9)


def test_percentile_interpolates_between_ranks_as_numpy_does():
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert percentile([7.0], 95) == 7.0
    assert math.isnan(percentile([], 50))


def test_book_takes_fitted_then_family_default_then_inline_on_top():
    fitted = LatencyModel(2.0, 0.05, 0.01, source="fitted")
    book = LatencyBook({"claude-opus-4-5": fitted}, lambda m: LatencyModel(9, 9, 9, "default"),
                       {"overhead_s": 1.0}, "inline", canonical=lambda m: m.removesuffix("-20251101"))
    got = book.for_model("claude-opus-4-5-20251101")
    assert got.coefficients() == {"overhead_s": 1.0, "uncached_s_per_1k": 0.05, "cached_s_per_1k": 0.01}
    assert got.source == "inline; the rest: fitted"
    assert book.for_model("gpt-4o").coefficients() == {"overhead_s": 1.0, "uncached_s_per_1k": 9,
                                                       "cached_s_per_1k": 9}


def test_book_without_fallback_names_what_the_file_fits():
    book = LatencyBook({"claude-opus-4-5": LatencyModel(1, 1, 1)})
    with pytest.raises(UserError, match=r"no model fitted for gpt-4o \(the file fits: claude-opus-4-5\)"):
        book.for_model("gpt-4o")


def test_fitted_document_reads_back():
    lm = LatencyModel(2.5, 0.04, 0.01, source="fitted by test")
    doc = fitted_document({"claude-opus-4-5": (lm, {"requests": 20})})
    assert doc["models"]["claude-opus-4-5"]["requests"] == 20
    assert read_fitted(doc, "f.json") == {"claude-opus-4-5": lm}


@pytest.mark.parametrize("doc,says", [
    ({"models": {}}, "f.json: not a fitted latency model"),
    ({"format": "prefixsim-latency", "version": 2, "models": {}}, "version 2"),
    ({"format": "prefixsim-latency", "version": 1, "models": {}}, "holds no fitted model"),
    ({"format": "prefixsim-latency", "version": 1, "models": {"m": {"overhead_s": -1, "uncached_s_per_1k": 0,
                                                                    "cached_s_per_1k": 0}}},
     "models.m.overhead_s must be a number of seconds from 0 to 3600, not -1"),
    ({"format": "prefixsim-latency", "version": 1, "models": {"m": {"overhead_s": 1, "uncached_s_per_1k": True,
                                                                    "cached_s_per_1k": 0}}},
     "models.m.uncached_s_per_1k must be a number"),
])
def test_a_fitted_file_of_another_shape_is_refused_by_name(doc, says):
    with pytest.raises(UserError, match=says):
        read_fitted(doc, "f.json")
