"""The SDOF test as a function θ, specimen → J2 (tiny: 1 s of record at 2 kHz)."""

import jax
import numpy as np
import pytest
import scipy.signal

from rths_ident.calibration import sdof_rths as st
from rths_ident.calibration.sample import sample_specimens
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.loop.engine import run_fused
from rths_ident.hybrid.fast_side.fast_chunk import make_fast_chunk
from rths_ident.metrics import j2_tracking_error
from rths_ident.scenarios.sdof_calibration import build_study

SETTINGS = st.StudySettings(start=1.5, duration=1.0, fast_rate=2000.0)


@pytest.fixture(scope="module")
def polynomial_study():
    return build_study("polynomial", SETTINGS)


def _one(study, specimens, i):
    return jax.tree_util.tree_map(lambda a: a[i], st.specimen_arrays(study, specimens))


def test_j2_accumulated_in_the_loop_equals_the_metric_on_the_full_log(polynomial_study):
    study = polynomial_study
    specimens = sample_specimens(2, 0)
    theta = study.space.source
    j2, failed = jax.jit(lambda s: st.run_one(study, theta, s))(_one(study, specimens, 0))
    # second implementation: the unreduced chunk, the whole fast log, metrics.j2_tracking_error
    full = study._replace(functions=study.functions._replace(fast_chunk=make_fast_chunk(study.side)))
    s = _one(study, specimens, 0)
    cp, cs = study.space.build(theta, s["kappa"], study.template_fast_params["compensation"],
                               study.template_fast_state["compensation"])
    from rths_ident.models import LinearParams
    fp = dict(study.template_fast_params, compensation=cp, specimen=LinearParams(m=0.0, c=0.0, k=s["lab_stiffness"]))
    initial = study.initial._replace(fast_state=dict(study.template_fast_state, compensation=cs), ns_params=s["ns"])
    _, logs = jax.jit(lambda: run_fused(full.functions, fp, initial, study.ground_accel))()
    expected = j2_tracking_error(np.ravel(logs["fast"]["target"]), np.ravel(logs["fast"]["measured"]))
    assert not bool(failed)
    assert float(j2) == pytest.approx(expected, rel=1e-9)


def test_prototype_response_matches_the_closed_loop_free_sdof(polynomial_study):
    """The hybrid SDOF's displacement vs scipy's lsim of m ẍ + c ẋ + k x = −m ẍ_g (same
    window, at rest at its start): the partition, scales and integrator are right."""
    study = polynomial_study
    specimens = sample_specimens(4, 1)
    i = int(np.argmin(specimens.period))  # the stiffest: the shortest period in 1 s
    s = _one(study, specimens, i)
    cp, cs = study.space.build(study.space.source, s["kappa"], study.template_fast_params["compensation"],
                               study.template_fast_state["compensation"])
    from rths_ident.models import LinearParams
    fp = dict(study.template_fast_params, compensation=cp, specimen=LinearParams(m=0.0, c=0.0, k=s["lab_stiffness"]))
    initial = study.initial._replace(fast_state=dict(study.template_fast_state, compensation=cs), ns_params=s["ns"])
    _, logs = jax.jit(lambda: run_fused(study.functions, fp, initial, study.ground_accel))()
    x_hybrid = np.asarray(logs["ns"]["displacement"])[:, 0]  # x at t_{k+1}: the target the chunk k reached
    omega = 2 * np.pi / specimens.period[i]
    zeta = specimens.damping_ratio[i]
    ag = np.concatenate([[0.0], np.asarray(study.ground_accel)])
    t = np.arange(ag.size) / SETTINGS.slow_rate
    system = scipy.signal.lti([[0, 1], [-omega**2, -2 * zeta * omega]], [[0], [-1]], [[1, 0]], [[0]])
    _, x_exact, _ = scipy.signal.lsim(system, ag, t)
    x_exact = x_exact[1:]
    assert np.max(np.abs(x_hybrid - x_exact)) < 0.03 * np.max(np.abs(x_exact))


def test_a_run_that_hits_the_stroke_limit_is_failed_never_a_small_j2():
    study = build_study("polynomial", SETTINGS, act.CarrionSpencerParams(substeps=1, stroke_limit=1e-4))
    specimens = sample_specimens(2, 0)
    j2, failed = st.make_batch_j2(study)(study.space.source[None, :], st.specimen_arrays(study, specimens))
    assert np.all(np.asarray(failed))
    assert np.all(np.isinf(np.asarray(j2)))
    assert st.score(np.asarray(j2))[0] == np.inf
    assert st.summary(np.asarray(j2)[0])["failed"] == 2


def test_known_bad_gains_score_as_failed(polynomial_study):
    """Extrapolating 1 s ahead (τ = 1 s, outside the bounds) drives the actuator into its
    limits: failed, J2 = inf; the sources' τ does not fail."""
    study = polynomial_study
    specimens = st.specimen_arrays(study, sample_specimens(2, 0))
    j2, failed = st.make_batch_j2(study)(np.array([[1.0], study.space.source]), specimens)
    assert np.all(np.asarray(failed)[0]) and np.all(np.isinf(np.asarray(j2)[0]))
    assert not np.any(np.asarray(failed)[1]) and np.all(np.asarray(j2)[1] < 20.0)


def test_bad_settings_are_refused_before_work():
    with pytest.raises(Exception, match="length_scale"):
        st.StudySettings(length_scale=0.0).check()
    with pytest.raises(Exception, match="within the record"):
        build_study("polynomial", st.StudySettings(start=50.0, duration=10.0))
