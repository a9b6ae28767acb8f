"""`_perf.gc.gc_paused`: the collector's thresholds and frozen objects as they were, after."""
import gc

from prefixsim._perf.gc import gc_paused


def test_thresholds_raised_inside_and_restored_after():
    was = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        with gc_paused():
            assert gc.get_threshold() == (100_000, 11, 12)
        assert gc.get_threshold() == (700, 11, 12)
    finally:
        gc.set_threshold(*was)
