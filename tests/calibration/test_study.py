"""The whole study on a tiny problem: calibration improves a deliberately poor start."""

import pytest

from rths_ident.calibration import study
from rths_ident.calibration.sdof_rths import StudySettings

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
