"""``rths-ident bench --only calibrate`` on a smoke-sized study."""

import pytest

from rths_ident.speed import calibration
from rths_ident.calibration.sdof_rths import StudySettings


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


def test_a_full_size_amb_population_batch_runs_its_loops_as_single_kernels():
    """8 candidates × 64 specimens (the bench's batch): AMB's batched multiply-sums are
    not handed to a library fusion, so every loop stays one kernel (small_loop_kernels;
    with XLA's YNNPACK reductions the two loops ran kernel by kernel, 4–5× slower)."""
    import numpy as np

    from rths_ident import small_loop_kernels
    from rths_ident.calibration.sample import sample_specimens
    from rths_ident.calibration.sdof_rths import make_batch_j2, specimen_arrays
    from rths_ident.scenarios.sdof_calibration import build_study

    study = build_study("amb", StudySettings(start=1.5, duration=0.05, fast_rate=2000.0))
    specimens = specimen_arrays(study, sample_specimens(64, 0))
    thetas = np.tile(study.space.source, (8, 1))
    text = make_batch_j2(study).lower(thetas, specimens).compile().as_text()
    loops = [loop for loop in small_loop_kernels.loop_kernels(text) if "threefry" not in loop.op_name
             and "uniform" not in loop.op_name]
    assert len(loops) == 2 and all(loop.single_kernel for loop in loops), loops
