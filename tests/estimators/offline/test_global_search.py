"""Global stage: reversal detection robust to noise, the decimated record, and
differential evolution locating the global minimum of a multimodal cost."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.estimators.offline.global_search import decimated_record, global_search, reversal_indices
from rths_ident.estimators.offline.simulation import NormalisedRecord

from offline_synthetic import growing_triangle_wave


def test_reversals_of_a_triangle_wave_with_and_without_noise():
    x = growing_triangle_wave(401, 1.0, cycles=4)  # 8 peaks, evenly spaced in the samples
    exact = np.flatnonzero((np.diff(x)[1:] * np.diff(x)[:-1]) < 0) + 1
    assert exact.size == 8
    np.testing.assert_array_equal(reversal_indices(x), exact)
    noisy = x + 0.002 * np.random.default_rng(1).normal(size=x.size)  # 0.1 % of the range
    found = reversal_indices(noisy)
    assert found.size == 8 and np.max(np.abs(found - exact)) <= 3


def test_decimated_record_keeps_every_reversal_and_the_ends():
    x = growing_triangle_wave(3001, 1.0, cycles=6)
    record = NormalisedRecord(jnp.asarray(x), jnp.asarray(np.gradient(x)), jnp.zeros_like(x), jnp.asarray(2 * x),
                              jnp.float64(1.0))
    coarse = decimated_record(record, 300)
    xc = np.asarray(coarse[0])
    assert x.size // 11 <= xc.size <= 300 + 12 + 2  # stride ⌈3001/300⌉ = 11, 12 reversals, the ends
    assert set(x[reversal_indices(x)]) <= set(xc) and xc[0] == x[0] and xc[-1] == x[-1]
    np.testing.assert_array_equal(np.asarray(coarse[3]), 2 * xc)  # force samples follow
    assert float(coarse[4]) == pytest.approx((x.size - 1) / (xc.size - 1))  # mean step grows
    assert decimated_record(record, 5000) is record


def test_differential_evolution_finds_the_global_minimum_of_rastrigin():
    # Rastrigin in 3 of 4 coordinates (the 4th held at 0.5): global minimum 0 at the origin,
    # local minima at every integer point; a local method from the box corner fails
    @jax.jit
    def costs(Q):
        active = Q[:, :3]
        return jnp.sum(active**2 - 10.0 * jnp.cos(2 * jnp.pi * active) + 10.0, axis=1) + (Q[:, 3] - 0.5) ** 2

    base = np.array([4.0, 4.0, 4.0, 0.5])
    lower, upper = np.full(4, -5.12), np.full(4, 5.12)
    found = global_search(costs, base, np.array([0, 1, 2]), lower, upper, seed=0, generations=300, popsize=15,
                          starts=[base])
    np.testing.assert_allclose(found["x"][:3], 0.0, atol=1e-2)
    assert found["x"][3] == 0.5 and found["cost"] < 1e-3
