"""``rths-ident bench --only calibrate`` on a smoke-sized study."""

import pytest

from rths_ident.bench import calibration
from rths_ident.calibration.sdof_test import StudySettings


@pytest.mark.slow
def test_calibration_bench_counts_the_tests_it_ran():
    r = calibration.run(n_specimens=2, iterations=1, population=2,
                        settings=StudySettings(start=1.5, duration=0.2, fast_rate=2000.0), repeats=1)
    assert r["hybrid_tests"] == (1 + 1) * 2 * 2  # PSO: the first population + 1 iteration, × specimens
    assert r["simulated_s"] == pytest.approx(r["hybrid_tests"] * 0.2)
    assert set(r["population_batch"]) == {"polynomial", "damb", "amb"}
    assert r["study_wall_s"] >= r["compile_s"] + r["search_s"]
    lines = calibration.report(r)
    assert "calibrate amb (PSO)" in lines[0] and len(lines) == 5
