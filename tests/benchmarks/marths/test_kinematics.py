"""Coupler kinematics (digest 004 §15 check 4)."""

from __future__ import annotations

import math

import jax
import numpy as np

from rths_ident.benchmarks.marths.kinematics import (
    COUPLER_ANGLE_RAD,
    COUPLER_ARM_M,
    actuator_to_frame,
    frame_to_actuator,
    jacobian,
)


def test_round_trip_over_the_working_range():
    x, theta = np.meshgrid(np.linspace(-4e-3, 4e-3, 9), np.linspace(-0.05, 0.05, 11))
    back_x, back_theta = actuator_to_frame(*frame_to_actuator(x, theta))
    assert np.abs(np.asarray(back_x) - x).max() < 1e-12 and np.abs(np.asarray(back_theta) - theta).max() < 1e-12


def test_geometry_and_small_angle_forms():
    assert abs(2 * COUPLER_ARM_M * math.sin(COUPLER_ANGLE_RAD) * 1e3 - 253.97) < 0.05
    eta1, eta2 = frame_to_actuator(2e-3, 0.0)
    assert float(eta1) == float(eta2) == 2e-3
    theta = 1e-5
    eta1, eta2 = frame_to_actuator(0.0, theta)
    assert abs((float(eta1) - float(eta2)) / theta - 0.25397) < 1e-4  # η1 − η2 ≈ 253.97 mm · θ
    assert float(eta1) > 0 > float(eta2)  # bottom actuator ≈ x + 127 θ


def test_jacobian_is_the_derivative():
    numeric = jax.jacfwd(lambda q: jax.numpy.stack(frame_to_actuator(q[0], q[1])))(
        jax.numpy.array([1e-3, 0.01]))
    assert np.allclose(numeric, jacobian(0.01), rtol=1e-12)
