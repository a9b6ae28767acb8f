"""The fit on hand-computed requests: exact on three, robust to what is held back, refusals said."""
import pytest

from prefixsim.latency.fit import MIN_REQUESTS, Sample, fit_model, robust_fit, wall_time
from prefixsim.latency.model import LatencyModel


def test_three_requests_solve_the_model_by_hand():
    # 1.5 = o + a x 1;  2.5 = o + a x 3;  2.0 = o + a x 1 + b x 10  (thousands of tokens)
    # -> a = 0.5, o = 1.0, b = (2.0 - 1.5) / 10 = 0.05
    beta, notes = robust_fit([Sample(1000, 0, 1.5), Sample(3000, 0, 2.5), Sample(1000, 10_000, 2.0)])
    assert list(beta) == pytest.approx([1.0, 0.5, 0.05, 0.0], abs=1e-6) and notes == ()


def test_negative_and_slower_reads_are_constrained():
    # exact, b would be (0.5 - 1.0) / 10 = -0.05: fixed at 0, o and a refitted by least absolute
    # deviations on (U, t) = (1, 1.5), (3, 2.5), (0, 0.5): the line through the last two (o 0.5, a 2/3)
    # misses the first by 1/3, less than the other two lines' 0.5 and 1
    beta, notes = robust_fit([Sample(1000, 0, 1.5), Sample(3000, 0, 2.5), Sample(0, 10_000, 0.5)])
    assert list(beta) == pytest.approx([0.5, 2 / 3, 0.0, 0.0], abs=1e-6)
    assert notes == ("cached fixed at 0, negative or not varied",)
    # exact, o 1, a 0.1, b 0.2: a read slower than computing, so one coefficient c for every token:
    # (U + C, t) = (1, 1.1), (1, 1.2), (0, 1.0), (2, 1.3); the line through the last two (o 1, c 0.15)
    # misses each of the first two by 0.05, and no line misses that pair by less than 0.1 in all
    beta, notes = robust_fit([Sample(1000, 0, 1.1), Sample(0, 1000, 1.2), Sample(0, 0, 1.0),
                              Sample(1000, 1000, 1.3)])
    assert list(beta) == pytest.approx([1.0, 0.15, 0.15, 0.0], abs=1e-6)
    assert notes == ("cached tied to uncached, the fit read slower than computing",)


def test_the_generation_before_the_timed_line_is_fitted_beside_and_left_out_of_the_ttft():
    # t = o + a x U + b x C + g x G (thousands): four requests solve it; 3.5 = 1.0 + 0.5 + 20 x 0.1
    beta, notes = robust_fit([Sample(1000, 0, 1.5, 0), Sample(3000, 0, 2.5, 0), Sample(1000, 10_000, 2.0, 0),
                              Sample(1000, 0, 3.5, 100)])
    assert list(beta) == pytest.approx([1.0, 0.5, 0.05, 20.0], abs=1e-6) and notes == ()


#: t = 1 + 0.5 x U/1K + 0.05 x C/1K, but the 5th (+0.3 s).
TEN = [Sample(1000, 0, 1.5), Sample(2000, 0, 2.0), Sample(3000, 0, 2.5), Sample(0, 10_000, 1.5),
       Sample(4000, 0, 3.3), Sample(0, 20_000, 2.0), Sample(2000, 10_000, 2.5), Sample(4000, 0, 3.0),
       Sample(1000, 20_000, 2.5), Sample(0, 0, 1.0)]


def test_held_back_error_against_a_constant_by_hand():
    fit = fit_model("m", TEN)
    assert fit.held == 10 and fit.n == fit.used == 10     # each request held back once
    # folds by position (i mod 5): each fit on the other eight, at most one of them off the line, is the
    # line; the held-back errors are 0 but the 5th's 0.3: median 0
    assert fit.mae_held == pytest.approx(0.0, abs=1e-4)
    # the others' medians, fold by fold: 2.5, 2.25, 2.0, 2.25, 2.25; errors (1.0, 0.5), (0.25, 0.25),
    # (0.5, 1.0), (0.75, 0.25), (1.05, 1.25): median (0.5 + 0.75) / 2
    assert fit.mae_constant == pytest.approx(0.625) and fit.beats_constant
    assert fit.constant == 2.25     # the median of all ten, shown beside it
    # on all ten the least absolute deviations keep the line; the one off it is the residuals' top end
    assert fit.latency.coefficients() == pytest.approx({"overhead_s": 1.0, "uncached_s_per_1k": 0.5,
                                                        "cached_s_per_1k": 0.05}, abs=1e-3)
    assert fit.generation_s_per_1k == 0.0 and fit.ungenerated == 0
    assert fit.residuals["p50"] == pytest.approx(0.0, abs=1e-3)
    assert "10 requests of m" in fit.latency.source


def test_requests_whose_generation_is_unknown_are_left_out_while_others_show_theirs():
    # the ten with 100 tokens generated before their line at 20 s/1K, and two whose generation the
    # source does not show (far off the line): left out, counted
    shown = [Sample(s.uncached, s.cached, s.ttft + 2.0, 100 * (i % 3)) for i, s in enumerate(TEN)]
    shown = [Sample(s.uncached, s.cached, s.ttft - 2.0 + 0.02 * s.generated, s.generated) for s in shown]
    fit = fit_model("m", shown + [Sample(1000, 0, 30.0, None), Sample(2000, 0, 40.0, None)])
    assert (fit.n, fit.ungenerated, fit.used) == (12, 2, 10)
    assert fit.generation_s_per_1k == pytest.approx(20.0, abs=1e-3)
    assert fit.latency.coefficients() == pytest.approx({"overhead_s": 1.0, "uncached_s_per_1k": 0.5,
                                                        "cached_s_per_1k": 0.05}, abs=1e-3)
    # a source that shows no request's generation: all fitted, none left out, no generation term
    none = fit_model("m", [Sample(s.uncached, s.cached, s.ttft, None) for s in TEN])
    assert none.ungenerated == 0 and none.used == 10 and none.generation_s_per_1k == 0.0


def test_what_the_stamps_cannot_carry_is_said_not_fitted():
    few = fit_model("m", TEN[:MIN_REQUESTS - 1])
    assert few.latency is None and few.refused == f"{MIN_REQUESTS - 1} timed requests; a fit needs at least 10"
    stamped = fit_model("m", [Sample(1000 * i, 0, 0.001) for i in range(8)] + TEN[:4])
    assert stamped.latency is None and stamped.repeated == 8
    assert stamped.refused.startswith("8 of 12 requests have equal start and response stamps")
    same = fit_model("m", [Sample(1000 * i, 0, 2.0) for i in range(12)])
    assert same.latency is None and "same time" in same.refused


def test_wall_time_with_and_without_the_reads():
    lm = LatencyModel(1.0, 0.5, 0.05)
    # with: (1 + 0.5) + (1 + 0.5 + 0.5) = 3.5; without: (1 + 0.5) + (1 + 0.5 + 5) = 8
    assert wall_time(lm, [Sample(1000, 0, 0), Sample(1000, 10_000, 0)]) == pytest.approx((3.5, 8.0))
