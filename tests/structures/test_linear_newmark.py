"""Effective-stiffness linear Newmark against the Newton-iteration Newmark (a second
implementation of the same scheme) and its input checks."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.structures import NewmarkFixedIteration, structure_from_matrices
from rths_ident.structures.linear_newmark import linear_newmark_params, linear_newmark_simulate


def test_matches_newmark_fixed_iteration_on_a_damped_mdof():
    rng = np.random.default_rng(4)
    n = 4
    mass = np.diag(rng.uniform(50.0, 150.0, n))
    a = rng.normal(size=(n, n))
    stiffness = 1e5 * (a @ a.T + n * np.eye(n))
    damping = 0.3 * mass + 2e-4 * stiffness
    dt = 1.0 / 1024.0
    ground = np.sin(2 * np.pi * 3.0 * np.arange(1, 501) * dt)
    structure, params = structure_from_matrices(mass, stiffness, damping)
    integ = NewmarkFixedIteration(structure, iterations=1)
    _, expected = integ.simulate(params, ground, dt)
    fast = linear_newmark_params(mass, damping, stiffness, dt)
    got = linear_newmark_simulate(fast, -np.outer(ground, mass @ np.ones(n)))
    scale = np.abs(np.asarray(expected.displacement)).max()
    assert np.abs(np.asarray(got.displacement) - np.asarray(expected.displacement)).max() < 1e-10 * scale
    assert np.allclose(got.velocity, expected.velocity, rtol=1e-8, atol=1e-12)


def test_massless_dofs_are_allowed_but_not_a_mechanism():
    k = np.array([[2.0, -1.0], [-1.0, 1.0]]) * 1e4
    linear_newmark_params(np.diag([1.0, 0.0]), np.zeros((2, 2)), k, 1e-3)
    with pytest.raises(ParameterError, match="singular"):
        linear_newmark_params(np.diag([1.0, 0.0]), np.zeros((2, 2)), np.diag([1.0, 0.0]), 1e-3)


def test_bad_input_names_the_field():
    with pytest.raises(ParameterError, match="damping"):
        linear_newmark_params(np.eye(2), np.eye(3), np.eye(2), 1e-3)
    with pytest.raises(ParameterError, match="dt"):
        linear_newmark_params(np.eye(2), np.eye(2), np.eye(2), 0.0)
