"""The whole study on a tiny problem: calibration improves a deliberately poor start."""

import pytest

from rths_ident.calibration.sdof_rths import StudySettings
from rths_ident.scenarios import sdof_calibration as study

TINY = StudySettings(start=1.5, duration=0.6, fast_rate=2000.0)


@pytest.mark.slow
def test_gradient_calibration_improves_held_out_j2_over_no_compensation():
    """τ = 0 (no delay compensation) is a poor start; L-BFGS-B through the loop lowers
    held-out J2 (reproducibility: test_sample.py and test_search.py, seeded)."""
    kwargs = dict(n_specimens=3, n_holdout=3, method="gradient", iterations=4, seed=5, settings=TINY, start=[0.0])
    r = study.calibrate("polynomial", **kwargs)
    assert r["J2_after"]["mean"] < 0.8 * r["J2_before"]["mean"]
    assert r["J2_calibration_after"]["mean"] < r["J2_calibration_before"]["mean"]
    assert 0.0 < r["gains"]["τ"] <= 0.05


def test_bad_method_and_gains_are_refused_before_work():
    with pytest.raises(Exception, match="method"):
        study.calibrate("polynomial", method="newton", settings=TINY)
    with pytest.raises(Exception, match="τ = 0.2"):
        study.calibrate("polynomial", start=[0.2], settings=TINY)


@pytest.mark.parametrize("method", ["pso", "gradient"])
def test_ctrl_c_keeps_the_best_gains_so_far_scored_like_a_finished_search(method):
    """Ctrl-C after the search's second iteration: the gains kept are the best candidate
    the search had evaluated (its best mean J2 so far), scored on both samples as a
    finished search's are — the calibration sample's J2 of the kept gains equals the
    search's own best score, recomputed independently by the scoring batch."""
    from rths_ident.operator_stop import OperatorStopped

    seen = []

    def progress(iteration, best):
        seen.append(best)
        if iteration == 2:
            raise KeyboardInterrupt

    with pytest.raises(OperatorStopped) as caught:
        study.calibrate("polynomial", n_specimens=3, n_holdout=3, method=method, iterations=10, population=4, seed=5,
                        settings=TINY, start=[0.0], progress=progress)
    kept = caught.value.partial
    assert kept["interrupted"] and kept["iterations_done"] == 2
    assert kept["J2_calibration_after"]["mean"] == pytest.approx(min(kept["history"]), rel=1e-12)
    assert min(kept["history"]) <= min(seen) + 1e-12  # never worse than what the search reported
    assert kept["J2_calibration_after"]["mean"] <= kept["J2_calibration_before"]["mean"] + 1e-12
    assert set(kept["gains"]) == {"τ"} and 0.0 <= kept["gains"]["τ"] <= 0.05
