"""The one wrapper of the identifiers (estimators/identifier_wrapper.py): it calls the
identifier's pure functions and holds the state, nothing else — so what it reports
equals the functions run directly (run_identifier, the protocol's estimate)."""

import jax
import numpy as np
import pytest

import rths_ident  # noqa: F401  (x64)
from rths_ident.errors import ParameterError
from rths_ident.estimators.joint_ukf_identifier import JointUKFIdentifier, joint_ukf_online_identifier
from rths_ident.estimators.online_identifier import run_identifier
from rths_ident.models import BoucWen, BoucWenParams

DT = 1e-3
FIELDS = ("k", "alpha", "beta", "gamma")
TRUE = BoucWenParams(k=1.34e6, alpha=0.04, A=1.0, beta=30.0, gamma=20.0, n=1.0, substeps=2)
GUESS = BoucWenParams(k=1.0e6, alpha=0.03, A=1.0, beta=22.0, gamma=15.0, n=1.0, substeps=2)
TRUE_VALUES = np.array([1.34e6, 0.04, 30.0, 20.0])


@pytest.fixture(scope="module")
def record():
    t = np.arange(1, 4001) * DT
    x = 0.06 * np.sin(2 * np.pi * 1.0 * t) * np.minimum(t / 1.0, 1.0)
    v = np.gradient(x, DT)
    force = BoucWen(TRUE).force_history(x, velocity=v)
    return x, v, force + 100.0 * np.random.default_rng(0).standard_normal(force.size)


def _identifier():
    return joint_ukf_online_identifier(BoucWen, GUESS, FIELDS, force_noise_std=100.0, parameter_std=0.5)


def test_update_and_run_equal_the_pure_functions(record):
    x, v, force = record
    ident = _identifier()
    final, (outputs, estimates) = jax.jit(lambda s: run_identifier(ident, s, x, v, force, DT))(ident.initial_state())
    scanned = JointUKFIdentifier(ident)
    history = scanned.run(x, v, force, DT)
    # to rounding: here the params are constants of the compiled scan, in the wrapper its
    # arguments (XLA folds the two differently)
    np.testing.assert_allclose(np.asarray(history.theta), np.asarray(outputs.theta), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(scanned.estimates.relative_std), np.asarray(estimates.relative_std),
                               rtol=1e-8)
    np.testing.assert_allclose(scanned.theta, np.asarray(estimates.theta[-1]), rtol=1e-10)
    np.testing.assert_allclose(scanned.P, np.asarray(final.filter.P), rtol=1e-8,
                               atol=1e-12 * np.abs(np.asarray(final.filter.P)).max())
    assert scanned.converged == bool(estimates.converged[-1])
    # step by step (dt positional, then by keyword): the same numbers to rounding (the
    # scan is one compiled loop, the steps separate calls)
    stepwise = JointUKFIdentifier(ident)
    for k in range(200):
        if k % 2:
            stepwise.update(x[k], v[k], force[k], DT)
        else:
            stepwise.update(x[k], v[k], force[k], dt=DT)
    np.testing.assert_allclose(stepwise.theta, np.asarray(estimates.theta[199]), rtol=1e-10)
    # the identified column (the record yields it): within 2 % of the truth
    np.testing.assert_allclose(scanned.theta / TRUE_VALUES, 1.0, atol=0.02)
    assert scanned.params_estimate.k == pytest.approx(float(scanned.theta[0]))


def test_arguments_are_checked_before_any_work():
    wrapper = JointUKFIdentifier(_identifier())
    with pytest.raises(ParameterError, match="give dt"):
        wrapper.update(0.0, 0.0, 0.0)
    with pytest.raises(ParameterError, match="takes 3 inputs"):
        wrapper.update(0.0, 0.0)
    with pytest.raises(ParameterError, match="dt must be a positive"):
        wrapper.run(np.zeros(3), np.zeros(3), np.zeros(3), -1e-3)
    with pytest.raises(ParameterError, match="equal length"):
        wrapper.run(np.zeros(3), np.zeros(2), np.zeros(3), DT)
    with_dt = JointUKFIdentifier(_identifier(), dt=DT)
    with_dt.update(0.001, 0.0, 1000.0)  # the wrapper's dt
    assert float(with_dt.state.time) == pytest.approx(DT)
