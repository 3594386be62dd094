"""LMS / NLMS / leaky LMS (seed 000 Eqs. 3.6–3.8): convergence to the (regularised)
Wiener solution below the step-size bound, divergence above it."""

import warnings

import jax
import numpy as np
import pytest
import scipy.linalg
import scipy.signal

import rths_ident  # noqa: F401  (float64)
from rths_ident.errors import ParameterError
from rths_ident.estimators import lms

run = jax.jit(lms.run)
TAPS = 4
W_TRUE = np.array([0.8, -0.5, 0.3, 0.1])


def _coloured_record(N=20000, seed=0, input_scale=1.0):
    """Coloured input (white noise through a 2nd-order low-pass) and an FIR plant."""
    rng = np.random.default_rng(seed)
    white = rng.normal(size=N + TAPS)
    u = input_scale * scipy.signal.lfilter([1.0], [1.0, -1.2, 0.5], white)
    U = np.stack([u[TAPS - i : N + TAPS - i] for i in range(TAPS)], axis=1)  # [u_n, …, u_{n−3}]
    d = U @ W_TRUE + 0.05 * input_scale * rng.normal(size=N)
    return u, U, d


def _wiener(U, d, leak):
    """Regularised Wiener solution (R + λI)⁻¹ r with sample R, r (seed 000 Eq. 3.4)."""
    R = U.T @ U / len(d)
    r = U.T @ d / len(d)
    return np.linalg.solve(R + leak * np.eye(U.shape[1]), r)


def test_stability_bound_closed_forms():
    assert lms.lms_stability_bound(np.diag([1.0, 4.0]), leak=0.5) == pytest.approx(2.0 / 4.5)
    # from a signal: Toeplitz autocorrelation built independently with numpy/scipy
    u, U, _ = _coloured_record(N=5000)
    acf = np.correlate(u, u, mode="full")[len(u) - 1 : len(u) - 1 + TAPS] / len(u)
    R = scipy.linalg.toeplitz(acf)
    assert lms.lms_stability_bound(u, leak=0.1, order=TAPS) == pytest.approx(2.0 / (0.1 + np.linalg.eigvalsh(R).max()), rel=1e-12)
    # from regressor samples: R = UᵀU/N
    assert lms.lms_stability_bound(U) == pytest.approx(2.0 / np.linalg.eigvalsh(U.T @ U / len(U)).max(), rel=1e-12)


@pytest.mark.parametrize("leak, bound_fraction", [(0.0, 0.05), (2.0, 0.005)])
def test_below_the_bound_converges_to_the_wiener_solution(leak, bound_fraction):
    u, U, d = _coloured_record()
    bound = lms.lms_stability_bound(U, leak=leak)
    # with a leak the error keeps a model-error part correlated with the (time-
    # correlated) regressors, which biases the mean by O(μ) (the independence
    # assumption behind Eq. 3.8): 0.5 % of the bound keeps that below 1 %
    params = lms.LMSParams(step_size=bound_fraction * bound, leak=leak)
    _, hist = run(params, lms.init(params, np.zeros(TAPS)), U, d)
    tail_mean = np.asarray(hist.weights)[-10000:].mean(axis=0)
    target = _wiener(U, d, leak)
    np.testing.assert_allclose(tail_mean, target, atol=0.02 * np.linalg.norm(target))
    if leak > 0:  # the leak really regularises: the target differs from the plain solution
        assert np.linalg.norm(target - _wiener(U, d, 0.0)) > 0.1 * np.linalg.norm(target)


@pytest.mark.parametrize("leak", [0.0, 2.0])
def test_above_the_bound_diverges_and_warns(leak):
    u, U, d = _coloured_record(N=3000)
    bound = lms.lms_stability_bound(U, leak=leak)
    with pytest.warns(lms.LMSStabilityWarning, match="stability bound"):
        filt = lms.LMS(TAPS, step_size=1.3 * bound, leak=leak, input_correlation=U.T @ U / len(U))
    hist = filt.run(U, d)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(np.asarray(hist.weights), axis=1)
    assert not np.all(np.isfinite(norms)) or norms[-1] > 1e6 * np.linalg.norm(W_TRUE)
    # just below the mean-convergence bound does not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lms.LMS(TAPS, step_size=0.9 * bound, leak=leak, input_correlation=U.T @ U / len(U))


def test_nlms_is_insensitive_to_input_scale():
    _, U, d = _coloured_record(N=20000, input_scale=1e3)
    params = lms.LMSParams(step_size=0.1, normalized=True)
    _, hist = run(params, lms.init(params, np.zeros(TAPS)), U, d)
    target = _wiener(U, d, 0.0)
    np.testing.assert_allclose(np.asarray(hist.weights)[-5000:].mean(axis=0), target, atol=0.02 * np.linalg.norm(target))
    # the plain-LMS step that works at unit scale diverges at this scale
    _, U1, _ = _coloured_record(N=2000)
    mu_unit = 0.05 * lms.lms_stability_bound(U1)
    assert mu_unit > lms.lms_stability_bound(U)
    plain = lms.LMSParams(step_size=mu_unit)
    _, hist_plain = run(plain, lms.init(plain, np.zeros(TAPS)), U[:2000], d[:2000])
    assert not np.all(np.isfinite(hist_plain.weights)) or np.abs(hist_plain.weights[-1]).max() > 1e6


def test_one_step_predictor_of_an_ar2_process_learns_its_coefficients():
    """DDMRT use (seed 000 Eq. 3.6): the L = 2 Wiener one-step predictor of
    u_n = a1 u_{n−1} + a2 u_{n−2} + e_n is exactly [a1, a2]."""
    a1, a2 = 1.5, -0.7
    rng = np.random.default_rng(4)
    u = scipy.signal.lfilter([1.0], [1.0, -a1, -a2], rng.normal(size=40000))
    U, d = lms.delay_line_regressors(u, 2)
    np.testing.assert_array_equal(U[5], [u[6], u[5]])
    assert d[5] == u[7]
    # small μ: the O(μ) bias of LMS on time-correlated regressors stays < 0.01
    filt = lms.LMS(2, step_size=0.005 * lms.lms_stability_bound(u, order=2), input_correlation=u)
    hist = filt.run(U, d)
    np.testing.assert_allclose(np.asarray(hist.weights)[-20000:].mean(axis=0), [a1, a2], atol=0.02)


def test_wrapper_matches_core_and_validates():
    _, U, d = _coloured_record(N=300)
    filt = lms.LMS(TAPS, np.ones(TAPS), step_size=0.01, leak=0.1)
    errors = [filt.update(u, y) for u, y in zip(U, d)]
    params = lms.LMSParams(step_size=0.01, leak=0.1)
    state, hist = run(params, lms.init(params, np.ones(TAPS)), U, d)
    np.testing.assert_allclose(filt.weights, state.weights, rtol=1e-12)
    np.testing.assert_allclose(errors, hist.error, rtol=1e-10, atol=1e-13)
    with pytest.raises(ParameterError, match="LMSParams.step_size"):
        lms.LMS(2, step_size=-0.1)
    with pytest.raises(ParameterError, match="order"):
        lms.lms_stability_bound(np.ones(10))
    with pytest.raises(ParameterError, match="shape"):
        filt.update(np.ones(3), 0.0)
