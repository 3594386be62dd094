import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401  (x64)
from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.model_updating import UpdateGuards, guards_pass, hook_init, hook_step


def _apply(params, estimate):
    # element params: dict of batched fields; estimate = [k, fy]
    return {"k": jnp.full_like(params["k"], estimate[0]), "fy": jnp.full_like(params["fy"], estimate[1])}


GUARDS = UpdateGuards(lower_bounds=[1.0, 1.0], upper_bounds=[10.0, 10.0], max_relative_std=0.1, freeze_until_s=1.0)
PARAMS = {"k": jnp.array([2.0, 2.0, 2.0]), "fy": jnp.array([3.0, 3.0, 3.0])}


def test_update_applied_only_when_every_guard_passes():
    state = hook_init([2.0, 3.0])
    cases = [
        # estimate, rel std, time, expected applied
        ([5.0, 6.0], [0.01, 0.01], 2.0, True),
        ([5.0, np.nan], [0.01, 0.01], 2.0, False),  # not finite
        ([50.0, 6.0], [0.01, 0.01], 2.0, False),  # above bound
        ([0.5, 6.0], [0.01, 0.01], 2.0, False),  # below bound
        ([5.0, 6.0], [0.5, 0.01], 2.0, False),  # too uncertain
        ([5.0, 6.0], [0.01, 0.01], 0.5, False),  # frozen
    ]
    for estimate, rel_std, t, expected in cases:
        new_state, new_params, applied = hook_step(GUARDS, state, PARAMS, estimate, rel_std, True, t, 0, _apply)
        assert bool(applied) is expected
        want_k = estimate[0] if expected else 2.0
        np.testing.assert_allclose(new_params["k"], want_k)
        assert int(new_state.n_updates) == int(expected)
        assert int(new_state.n_rejected) == int(not expected)


def test_rate_and_converged_flag():
    guards = UpdateGuards(lower_bounds=[1.0, 1.0], upper_bounds=[10.0, 10.0], update_every_slow_steps=5,
                          require_converged=True)
    state = hook_init([2.0, 3.0])
    _, _, applied = hook_step(guards, state, PARAMS, [5.0, 6.0], [0.0, 0.0], True, 2.0, 3, _apply)
    assert not bool(applied)  # not due (3 % 5 != 0)
    _, _, applied = hook_step(guards, state, PARAMS, [5.0, 6.0], [0.0, 0.0], False, 2.0, 10, _apply)
    assert not bool(applied)  # due, but not converged
    state2, params2, applied = hook_step(guards, state, PARAMS, [5.0, 6.0], [0.0, 0.0], True, 2.0, 10, _apply)
    assert bool(applied) and float(state2.last_update_time) == 2.0
    np.testing.assert_allclose(params2["fy"], 6.0)


def test_hook_runs_inside_scan():
    estimates = jnp.array([[5.0, 6.0], [20.0, 6.0], [7.0, 8.0]])

    def body(carry, inp):
        state, params = carry
        i, est = inp
        state, params, applied = hook_step(GUARDS, state, params, est, jnp.zeros(2), True, 2.0, i, _apply)
        return (state, params), applied

    (state, params), applied = jax.lax.scan(jax.jit(body), (hook_init([2.0, 3.0]), PARAMS),
                                            (jnp.arange(3), estimates))
    assert applied.tolist() == [True, False, True]
    np.testing.assert_allclose(params["k"], 7.0)
    np.testing.assert_allclose(state.applied_estimate, [7.0, 8.0])


def test_bad_guards_raise_clear_errors():
    with pytest.raises(ParameterError, match="lower_bounds"):
        UpdateGuards(lower_bounds=[2.0], upper_bounds=[1.0])
    with pytest.raises(ParameterError, match="max_relative_std"):
        UpdateGuards(lower_bounds=[0.0], upper_bounds=[1.0], max_relative_std=-1.0)
    with pytest.raises(ParameterError, match="update_every_slow_steps"):
        UpdateGuards(lower_bounds=[0.0], upper_bounds=[1.0], update_every_slow_steps=0)
    assert bool(guards_pass(GUARDS, [5.0, 5.0], [0.0, 0.0], False, 5.0))


# ------------------------------------------------------------------------------------------
# every guard of UpdateGuards, made to fire and to pass, with estimates of the REAL online
# identifiers (rths_ident.estimators.online_identifier) on a LuGre column record
# ------------------------------------------------------------------------------------------

import dataclasses  # noqa: E402

from rths_ident.estimators import (  # noqa: E402
    IdentifierInputs,
    lugre_rls_online_identifier,
    lugre_ukf_online_identifier,
    run_identifier,
)
from rths_ident.models import ModifiedLuGre  # noqa: E402

FS = 2000.0
DT = 1.0 / FS
TRUE_COLUMN = ModifiedLuGre.params_from_physical(k=1.34e6, Fy=2.24e4)  # seed 001 Table 2.1
GUESS_COLUMN = dataclasses.replace(TRUE_COLUMN, sigma0=0.7 * TRUE_COLUMN.sigma0, Fc=0.7 * TRUE_COLUMN.Fc,
                                   sigma3=0.7 * TRUE_COLUMN.sigma3)  # Scenario 2: all −30 %
GUESS_VALUES = np.array([float(GUESS_COLUMN.sigma0), float(GUESS_COLUMN.Fc), float(GUESS_COLUMN.sigma3)])
COLUMNS = {name: jnp.full(3, value) for name, value in zip(("sigma0", "Fc", "sigma3"), GUESS_VALUES)}
EARLY, LATE = 1.0, 19.99  # s: before yield (σ3 unidentified) / after 14 s of yielding cycles


def _apply_lugre(columns, estimate):
    return {name: jnp.full_like(columns[name], estimate[i]) for i, name in enumerate(("sigma0", "Fc", "sigma3"))}


@pytest.fixture(scope="module")
def record():
    """x(t) = 5 x_y (t/20 s) sin(π t) with its exact velocity, the true column's force
    plus 0.5 % (of RMS) white noise; the column yields from ≈ 6 s."""
    t = np.arange(1, int(20.0 * FS) + 1) * DT
    rate, omega = 5 * (2.24e4 / 1.34e6) / 20.0, np.pi
    x = rate * t * np.sin(omega * t)
    v = rate * (np.sin(omega * t) + t * omega * np.cos(omega * t))
    force = ModifiedLuGre(TRUE_COLUMN).force_history(x, velocity=v)
    measured = force + 0.005 * np.sqrt(np.mean(force**2)) * np.random.default_rng(0).standard_normal(force.size)
    return x, v, measured


def _estimates(identifier, record):
    x, v, force = record
    final, (_, estimates) = jax.jit(lambda s: run_identifier(identifier, s, x, v, force, DT))(
        identifier.initial_state())
    return final, estimates


@pytest.fixture(scope="module")
def rls(record):
    """The constrained-RLS identifier (2.5 s memory) and its estimates at EARLY and LATE."""
    ident = lugre_rls_online_identifier(GUESS_COLUMN, forgetting=1.0 - 1.0 / (2.5 * FS))
    final, estimates = _estimates(ident, record)
    at = {time: jax.tree_util.tree_map(lambda a: a[int(time * FS) - 1], estimates) for time in (EARLY, LATE)}
    return ident, final, at


@pytest.fixture(scope="module")
def ukf(record):
    ident = lugre_ukf_online_identifier(GUESS_COLUMN)
    _, estimates = _estimates(ident, record)
    return {time: jax.tree_util.tree_map(lambda a: a[int(time * FS) - 1], estimates) for time in (EARLY, LATE)}


def _hook(guards, estimate, time_s=10.0, slow_step_index=0):
    state, columns, applied = hook_step(guards, hook_init(GUESS_VALUES), COLUMNS, estimate.theta,
                                        estimate.relative_std, estimate.converged, time_s, slow_step_index,
                                        _apply_lugre)
    applied = bool(applied)
    # an applied update changes every column to θ̂; a refused one leaves the guess
    want = np.asarray(estimate.theta) if applied else GUESS_VALUES
    for i, name in enumerate(("sigma0", "Fc", "sigma3")):
        np.testing.assert_array_equal(np.asarray(columns[name]), want[i])
    return applied, int(state.n_updates), int(state.n_rejected)


def _guards(**changes):
    base = dict(lower_bounds=0.4 * GUESS_VALUES, upper_bounds=2.5 * GUESS_VALUES)
    return UpdateGuards(**{**base, **changes})


def test_max_relative_std_guard_refuses_the_unconverged_rls_and_accepts_it_later(rls):
    _, _, at = rls
    early, late = at[EARLY], at[LATE]
    # premise from the identifier itself: σ̂3's std is its prior before yield (the
    # hardening slope shows only past yield), every std is small after
    assert float(early.relative_std[2]) > 0.2 and float(np.max(late.relative_std)) < 0.02
    guards = _guards(max_relative_std=0.05)
    assert _hook(guards, early) == (False, 0, 1)
    assert _hook(guards, late) == (True, 1, 0)
    np.testing.assert_allclose(late.theta / np.array([TRUE_COLUMN.sigma0, TRUE_COLUMN.Fc, TRUE_COLUMN.sigma3]),
                               1.0, atol=0.01)


def test_require_converged_guard_with_the_ukf(ukf):
    early, late = ukf[EARLY], ukf[LATE]
    assert not bool(early.converged) and bool(late.converged)
    assert _hook(_guards(require_converged=True), early) == (False, 0, 1)
    assert _hook(_guards(require_converged=False), early) == (True, 1, 0)  # the same estimate passes without it
    assert _hook(_guards(require_converged=True), late) == (True, 1, 0)


def test_require_converged_guard_with_the_rls(rls):
    _, _, at = rls
    assert not bool(at[EARLY].converged) and bool(at[LATE].converged)
    assert _hook(_guards(require_converged=True), at[EARLY]) == (False, 0, 1)
    assert _hook(_guards(require_converged=True), at[LATE]) == (True, 1, 0)


def test_finite_guard_refuses_an_identifier_fed_a_nan_sample(rls, record):
    ident, final, at = rls
    x, v, _ = record
    # a sensor dropout: one NaN force sample poisons the RLS estimate
    state, _ = ident.step(ident.params, final, IdentifierInputs(x[-1], v[-1], jnp.nan), DT)
    poisoned = ident.estimate(ident.params, state)
    assert not np.all(np.isfinite(np.asarray(poisoned.theta)))
    guards = _guards()
    assert _hook(guards, poisoned) == (False, 0, 1)
    assert _hook(guards, at[LATE]) == (True, 1, 0)


def test_bounds_guard(rls):
    _, _, at = rls
    late = at[LATE]  # ≈ the truth = guess / 0.7
    assert _hook(_guards(), late) == (True, 1, 0)
    # bounds that exclude the truth (upper 1.2 × guess < 1/0.7 × guess): refused
    assert _hook(_guards(upper_bounds=1.2 * GUESS_VALUES), late) == (False, 0, 1)
    # and from below (lower 1.5 × guess > 1/0.7 × guess)
    assert _hook(_guards(lower_bounds=1.5 * GUESS_VALUES, upper_bounds=3.0 * GUESS_VALUES), late) == (False, 0, 1)


def test_freeze_until_guard(rls):
    _, _, at = rls
    guards = _guards(freeze_until_s=5.0)
    assert _hook(guards, at[LATE], time_s=4.99) == (False, 0, 1)
    assert _hook(guards, at[LATE], time_s=5.0) == (True, 1, 0)


def test_update_every_slow_steps_guard(rls):
    _, _, at = rls
    guards = _guards(update_every_slow_steps=4)
    assert _hook(guards, at[LATE], slow_step_index=6) == (False, 0, 0)  # not due: neither applied nor rejected
    assert _hook(guards, at[LATE], slow_step_index=8) == (True, 1, 0)
