"""Eq. 31's specimen model: the condensed ES and the paper's 4 mm ramp (§3.6.1)."""

from __future__ import annotations

import numpy as np

from rths_ident.benchmarks.marths.force_estimation import estimate_force, reduced_specimen
from rths_ident.benchmarks.marths.kinematics import jacobian
from rths_ident.benchmarks.marths.model import marths_model


def test_condensed_flexibility_is_the_block_of_the_full_flexibility():
    model = marths_model()
    spec = reduced_specimen(model)
    es = list(model.es_equations)
    keep = [es.index(model.equations["x4"]), es.index(model.equations["theta4"])]
    flexibility = np.linalg.inv(model.stiffness_es[np.ix_(es, es)])[np.ix_(keep, keep)]
    sign = np.diag([1.0, -1.0])
    assert np.allclose(np.linalg.inv(np.asarray(spec.stiffness)), sign @ flexibility @ sign, rtol=1e-8)


def test_four_mm_ramp_pushes_the_bottom_actuator_and_pulls_the_top():
    """Equal 4 mm strokes (x = 4 mm, θ = 0): the bottom actuator carries the push plus
    the coupler's compression, the top one goes into tension (seed 004 §3.6.1, Fig. 16B)."""
    spec = reduced_specimen(marths_model())
    frame_force = estimate_force(spec, np.array([4e-3, 0.0]), np.zeros(2), np.zeros(2))
    actuators = np.linalg.solve(np.asarray(jacobian(0.0)).T, np.asarray(frame_force))
    assert actuators[0] > frame_force[0] > 0 > actuators[1]
