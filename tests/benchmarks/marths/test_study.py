"""A maRTHS study end to end on the fused engine (short: 5 s of strong motion)."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.study import StudyConfig, run_study

pytestmark = pytest.mark.slow
SHORT = 10.0  # s: the El Centro record of the package opens with 5 s of zeros


def test_perfect_transfer_leaves_only_the_lag_of_the_partition():
    result = run_study(StudyConfig(controller="ideal", uncertain=0, duration=SHORT))
    j = result["J_nominal"]
    for name in ("J1", "J2", "J3", "J4", "J5", "J6"):
        assert np.allclose(j[name], 0.0, atol=1e-9), name
    assert all(0 < v < 2.0 for v in j["J7"] + j["J8"])  # the one-step lag of f̂, and no more
    assert result["J_uncertain_mean"] is None and result["J_reported"] == {k: v for k, v in j.items()}


def test_lqg_over_random_plants_is_realisable_and_bottom_tracks_worse():
    result = run_study(StudyConfig(controller="lqg", uncertain=2, duration=SHORT, convention="official"))
    assert result["realisable"]  # the package's test: commands within ±3.8 V
    assert len(result["plants"]) == 3 and len(result["J_runs"]) == 3
    # digest 004 §15 check 11: actuator 1 (it works against the frame) tracks worse
    for run in result["J_runs"]:
        assert run["J2"][0] > run["J2"][1]
        assert run["J4"] == run["J1"]  # the official scorer's J4 is J1
    mean = np.mean([r["J7"] for r in result["J_runs"][1:]], axis=0)
    assert np.allclose(result["J_uncertain_mean"]["J7"], np.round(mean, 1))
    assert result["modal_frequencies_hz"][0] == pytest.approx(2.2913, abs=1e-3)


def test_bad_configuration_is_refused_before_running():
    with pytest.raises(ParameterError, match="record"):
        StudyConfig(record="northridge")
    with pytest.raises(ParameterError, match="uncertain"):
        StudyConfig(uncertain=-1)


def _assert_same_study(a: dict, b: dict, rtol: float = 1e-10):
    assert len(a["J_runs"]) == len(b["J_runs"])
    for run_a, run_b in zip(a["J_runs"], b["J_runs"]):
        for name in run_a:
            np.testing.assert_allclose(run_a[name], run_b[name], rtol=rtol, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(a["J2_estimated_uncertain_mean"], b["J2_estimated_uncertain_mean"], rtol=rtol)
    assert a["realisable"] == b["realisable"] and a["plants"] == b["plants"]


def test_vmapped_batches_give_the_one_by_one_numbers():
    """3 plants (nominal + 2 draws) one by one and in vmap-ed batches of 2 (the second
    batch padded): the same J1–J10 per run to 1e-10, the same histories kept."""
    base = dict(controller="lqg", uncertain=2, duration=7.0)
    one_by_one = run_study(StudyConfig(**base))
    batched = run_study(StudyConfig(**base, batch=2), keep_histories=1)
    _assert_same_study(one_by_one, batched)
    assert batched["batch"] == 2 and len(batched["_arrays"]["histories"]) == 1
    np.testing.assert_allclose(batched["_arrays"]["histories"][0]["eta_measured"],
                               one_by_one["_arrays"]["histories"][0]["eta_measured"], rtol=0, atol=1e-12)


def test_a_batch_is_one_kernel_and_shares_the_ns_matrices():
    """The batched record loop compiles to one small-loop kernel (no library dot or
    fusion inside: small_loop_kernels), with the NS's modal shapes and load projections
    passed once, not stacked per run."""
    import jax.numpy as jnp

    from rths_ident import small_loop_kernels
    from rths_ident.benchmarks.marths import study as st
    from rths_ident.benchmarks.marths.model import marths_model
    from rths_ident.benchmarks.marths.site import stack_plants, true_plant
    from rths_ident.benchmarks.marths.substructure import ns_params

    cfg = StudyConfig(uncertain=2, duration=0.05)
    model, dt = marths_model(), 1.0 / st.LOOP_RATE_HZ
    plants = st.study_plants(cfg)
    site = st._site_params(cfg, model, dt, plants[0])
    site = site._replace(plant=stack_plants([true_plant(p, dt) for p in plants]))
    nsp = ns_params(model, dt)
    initial = st.batch_initial_state(site, nsp, [1, 2, 3])
    assert initial.ns_params.modal.output_shapes.shape == (6, 29)  # shared: no run axis
    assert initial.ns_params.modal.load_projection.shape == (29, 3)
    assert initial.ns_state.coordinate.shape == (3, 29)
    ag = jnp.asarray(st.ground_motion(cfg.record, cfg.scale, cfg.duration))
    text = st._batched_runner("lqg", dt).lower(site, initial, ag).compile().as_text()
    loops = small_loop_kernels.loop_kernels(text)
    assert loops and all(loop.single_kernel for loop in loops), [loop.op_name for loop in loops]


def test_batches_on_two_threads_give_the_one_thread_numbers_in_run_order():
    """5 runs in batches of 1 on 2 threads (the first alone, then two in flight): the
    same J per run as on one thread, the kept histories those of runs 0 and 1."""
    base = dict(controller="lqg", uncertain=4, duration=6.0, batch=1)
    one_thread = run_study(StudyConfig(**base, threads=1))
    two_threads = run_study(StudyConfig(**base, threads=2))
    _assert_same_study(one_thread, two_threads)
    for a, b in zip(one_thread["_arrays"]["histories"], two_threads["_arrays"]["histories"]):
        np.testing.assert_array_equal(a["eta_measured"], b["eta_measured"])


def test_bad_batch_is_refused():
    with pytest.raises(ParameterError, match="batch"):
        StudyConfig(batch=-1)
    with pytest.raises(ParameterError, match="batch"):
        StudyConfig(batch=2.5)
    with pytest.raises(ParameterError, match="threads"):
        StudyConfig(threads=-2)
