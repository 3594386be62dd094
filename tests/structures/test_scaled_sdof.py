"""The SDOF test's numerical substructure (stiffness split, length scale) against the
project's explicit Newmark on the whole SDOF (a second implementation of the scheme)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.datasets import load_ground_motion
from rths_ident.structures.newmark import ExplicitNewmark
from rths_ident.structures.scaled_sdof import ScaledSDOFNewmark, scaled_sdof_params, scaled_sdof_step
from rths_ident.structures.structure import structure_from_matrices

DT = 0.02  # s


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_split_sdof_with_an_ideal_spring_is_explicit_newmark_on_the_whole_sdof(alpha):
    """An ideal lab spring (r_lab = k_lab x_t, no delay) closes the split: the NS with
    (1 − α) k and the scaled spring is the whole SDOF m, c, k under ExplicitNewmark."""
    m, period, zeta, k_lab, lam = 2500.0, 0.8, 0.03, 3.0e4, 0.05
    params = scaled_sdof_params(m, period, zeta, alpha, k_lab, lam)
    _, ag = load_ground_motion("elcentro_1940")
    ag = np.asarray(ag[1:301], dtype=float)

    def step(carry, a):
        state, target = carry
        state, target, log = scaled_sdof_step(params, state, k_lab * target, a, DT)
        return (state, target), (log["displacement"][0], target[0])

    integrator = ScaledSDOFNewmark()
    state0 = integrator.init(params, DT)
    target0 = integrator.predicted_displacement(params, state0, DT)
    _, (x, targets) = jax.lax.scan(step, (state0, target0), jnp.asarray(ag))

    omega = 2 * np.pi / period
    structure, sp = structure_from_matrices([[m]], [[m * omega**2]], [[2 * zeta * m * omega]])
    newmark = ExplicitNewmark(structure)
    _, out = newmark.simulate(sp, ag, DT, state=newmark.init(sp, DT))
    expected = np.asarray(out.displacement)[:, 0]
    peak = np.max(np.abs(expected))
    assert peak > 1e-3  # the record moves it
    np.testing.assert_allclose(np.asarray(x), expected, rtol=0, atol=1e-12 * peak)
    # the target is λ times the next step's displacement
    np.testing.assert_allclose(np.asarray(targets)[:-1], lam * expected[1:], rtol=0, atol=1e-12 * lam * peak)


def test_at_rest_the_state_is_zero_and_so_is_the_target():
    params = scaled_sdof_params(1000.0, 1.0, 0.02, 0.5, 1e4, 0.05)
    integrator = ScaledSDOFNewmark()
    state = integrator.init(params, DT)
    assert [float(s) for s in state] == [0.0, 0.0]
    assert np.asarray(integrator.predicted_displacement(params, state, DT)).tolist() == [0.0]
