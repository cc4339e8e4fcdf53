import gc

from engine.play.collector import THRESHOLDS, tuned_collector


def test_a_run_freezes_what_is_loaded_and_sets_the_thresholds_then_puts_them_back():
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0 and before != THRESHOLDS
    with tuned_collector():
        assert gc.get_threshold() == THRESHOLDS
        assert gc.get_freeze_count() > 1000  # modules, classes, functions loaded so far
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
