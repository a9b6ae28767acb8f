"""The defaults re-derived from the published figures they cite (docs/rules.md#latency)."""
import numpy as np
import pytest

from prefixsim.latency.defaults import ANTHROPIC, PUBLISHED, default_for


def test_anthropic_default_is_the_least_squares_fit_of_the_launch_post():
    x = np.array([[1, p.uncached / 1000, p.cached / 1000] for p in PUBLISHED])
    y = np.array([p.seconds for p in PUBLISHED])
    beta = np.linalg.lstsq(x, y, rcond=None)[0]
    # by hand: the normal equations give overhead 0.7278, a 0.10752, b 0.016925 s per 1K
    assert beta == pytest.approx([0.72778, 0.107519, 0.016925], abs=1e-5)
    assert (ANTHROPIC.overhead_s, ANTHROPIC.uncached_s_per_1k, ANTHROPIC.cached_s_per_1k) == (0.728, 0.108, 0.0169)
    # the published times within 0.21 s: 11.5 -> 11.53, 2.4 -> 2.42, 1.6 -> 1.81, 1.1 -> 0.90
    assert [round(ANTHROPIC.ttft(p.uncached, p.cached), 2) for p in PUBLISHED] == [11.53, 2.42, 1.81, 0.90]
    assert "anthropic.com/news/prompt-caching" in ANTHROPIC.source


def test_other_families_take_it_marked_derived_with_what_they_publish():
    assert default_for("claude-opus-4-5") is ANTHROPIC
    for model, says in (("gpt-4o", "up to 80%"), ("gemini-2.5-pro", "publishes no latency figure"),
                        ("deepseek-chat", "DeepSeek"), ("llama-3.1-8b", "no published figure")):
        d = default_for(model)
        assert d.coefficients() == ANTHROPIC.coefficients() and d.source.startswith("derived") and says in d.source
