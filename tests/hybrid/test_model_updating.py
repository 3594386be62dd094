import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401  (x64)
from rths_ident._params import ParameterError
from rths_ident.hybrid.model_updating import UpdateGuards, guards_pass, hook_init, hook_step


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
