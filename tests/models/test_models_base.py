"""The shared wrapper of rths_ident.models.base: construction, step-wise use equals the
scanned history, input checks, finite-difference velocity, exports."""

from __future__ import annotations

import numpy as np
import pytest
from _models_helpers import random_cyclic_history

import rths_ident.models as models
from rths_ident.models import (
    BilinearKinematic,
    BilinearParams,
    BoucWen,
    BoucWenParams,
    ElementInputs,
    ModifiedLuGre,
    direction_of_motion,
    velocity_from_displacement,
)
from rths_ident.models.base import _jitted_step


def test_construction_from_params_or_fields():
    p = BilinearParams(k=1e6, fy=1e4, b=0.1)
    assert BilinearKinematic(p).params == BilinearKinematic(k=1e6, fy=1e4, b=0.1).params
    with pytest.raises(TypeError, match="either"):
        BilinearKinematic(p, k=2e6)
    with pytest.raises(TypeError, match="BilinearParams"):
        BilinearKinematic(BoucWenParams(k=1e6, alpha=0.1, A=1.0, beta=50.0, gamma=50.0, n=1.0))


def test_stepwise_update_equals_history_and_reset():
    x = random_cyclic_history(70, 60, 0.03)
    model = BoucWen(BoucWenParams.from_yield(k=1e6, alpha=0.05, yield_displacement=0.01, n=3.0))
    history = model.force_history(x)
    stepwise = [model.update(xi) for xi in x]
    np.testing.assert_allclose(stepwise, history, rtol=1e-12, atol=1e-9)
    assert float(model.state.displacement) == x[-1]
    model.reset()
    assert float(model.state.z) == 0.0 and float(model.state.displacement) == 0.0


def test_trial_steps_do_not_commit():
    p = BoucWenParams.from_yield(k=1e6, alpha=0.05, yield_displacement=0.01, n=2.0)
    step = _jitted_step(BoucWen)
    state = BoucWen.init(p)
    state, _ = step(p, state, ElementInputs(0.02, 0.0), 0.0)
    first = float(step(p, state, ElementInputs(0.015, 0.0), 0.0)[1])
    step(p, state, ElementInputs(-0.05, 0.0), 0.0)
    assert float(step(p, state, ElementInputs(0.015, 0.0), 0.0)[1]) == first
    assert float(state.displacement) == 0.02


def test_input_checks():
    model = ModifiedLuGre.from_physical(1.34e6, 2.24e4)
    with pytest.raises(ValueError, match="1-D"):
        model.force_history(np.zeros((3, 2)), dt=0.01)
    with pytest.raises(ValueError, match="finite"):
        model.force_history(np.array([0.0, np.nan]), dt=0.01)
    with pytest.raises(ValueError, match="dt"):
        model.force_history(np.zeros(3), dt=0.0)
    with pytest.raises(ValueError, match="shape"):
        model.force_history(np.zeros(3), velocity=np.zeros(4))


def test_velocity_from_displacement_is_second_order():
    t = np.linspace(0.0, 1.0, 11)
    x = 3.0 * t**2 - t + 0.5  # exact for quadratics, including both ends
    np.testing.assert_allclose(velocity_from_displacement(x, t[1] - t[0]), 6.0 * t - 1.0, atol=1e-12)


def test_direction_of_motion():
    assert [float(direction_of_motion(dx, v)) for dx, v in
            ((0.1, -5.0), (-0.1, 5.0), (0.0, -2.0), (0.0, 2.0), (0.0, 0.0))] == [1, -1, -1, 1, 1]


def test_everything_is_exported():
    for name in models.__all__:
        assert hasattr(models, name), name
    for cls in (models.ModifiedLuGre, models.BoucWen, models.DegradingBoucWen,
                models.BilinearKinematic, models.LinearElement):
        assert issubclass(cls, models.HystereticModel)
        for attr in ("Params", "State", "init", "step", "tangent", "force_history"):
            assert hasattr(cls, attr), (cls, attr)
