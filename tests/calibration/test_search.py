"""The population searches on a batched closed-form objective (known minimum)."""

import numpy as np

from rths_ident.calibration import search

MINIMUM = np.array([0.3, 0.7, 0.55])


def objective(u):
    u = np.atleast_2d(u)
    return np.sum((u - MINIMUM) ** 2, axis=1) * 10.0 + 1.0


def test_particle_swarm_finds_the_minimum_and_never_loses_the_start():
    calls = []

    def counted(u):
        calls.append(len(u))
        return objective(u)

    r = search.particle_swarm(counted, np.full(3, 0.9), 12, 60, seed=1)
    np.testing.assert_allclose(r.best_u, MINIMUM, atol=1e-2)
    assert r.best_score <= objective(np.full(3, 0.9))[0]
    assert np.all(np.diff(r.history) <= 0)
    assert calls == [12] * 61  # one batch per population


def test_particle_swarm_is_reproducible_for_a_seed():
    a = search.particle_swarm(objective, np.zeros(3), 6, 5, seed=3)
    b = search.particle_swarm(objective, np.zeros(3), 6, 5, seed=3)
    np.testing.assert_array_equal(a.best_u, b.best_u)


def test_particle_swarm_ignores_failed_candidates():
    def with_failures(u):
        s = objective(u)
        return np.where(u[:, 0] < 0.5, s, np.inf)  # the right half "fails"

    r = search.particle_swarm(with_failures, np.full(3, 0.1), 8, 30, seed=0)
    assert np.isfinite(r.best_score) and r.best_u[0] < 0.5


def test_differential_evolution_finds_the_minimum_with_batched_calls():
    sizes = []

    def counted(u):
        sizes.append(len(u))
        return objective(u)

    r = search.differential_evolution(counted, np.full(3, 0.9), 12, 80, seed=2)
    np.testing.assert_allclose(r.best_u, MINIMUM, atol=1e-2)
    assert max(sizes) >= 12 and len(sizes) <= 81
