"""A rig as the hybrid loop's physical side (rigs.loop_site): the virtual side's log shape,
the identifier on the rig's readings, any model as the emulated board's specimen."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.models import BilinearKinematic, BilinearParams, BoucWen, BoucWenParams
from rths_ident.protocols import SiteReading
from rths_ident.rigs.loop_site import HystereticSpecimen, RigLoopSite


@pytest.mark.parametrize("model, params", [(BilinearKinematic, BilinearParams(k=1540.0, fy=8.0, b=0.05)),
                                           (BoucWen, BoucWenParams(k=1540.0, alpha=0.1, A=1.0, beta=150.0,
                                                                   gamma=50.0, n=1.0))])
def test_the_emulated_specimen_is_the_models_own_force_history(model, params):
    """Step by step through force(u, history) = the model's force_history (its own
    wrapper, a second path through the same step) on a cyclic history."""
    dt = 0.01
    u = 0.008 * np.sin(2 * np.pi * 0.7 * np.arange(1, 301) * dt) * np.linspace(0.3, 1.0, 300)
    specimen = HystereticSpecimen(model, params, test_dt=dt)
    history, forces = (0.0, 0.0), []
    for value in u:
        forces.append(specimen.force(value, history))
        history = (value, history[0])
    expected = model(params).force_history(u, dt=dt)
    np.testing.assert_allclose(forces, expected, rtol=1e-10, atol=1e-12 * np.max(np.abs(expected)))


def test_inertia_adds_mass_times_the_second_difference():
    dt = 0.01
    specimen = HystereticSpecimen(BilinearKinematic, BilinearParams(k=1000.0, fy=100.0, b=0.05), test_dt=dt,
                                  mass=0.5)
    force = specimen.force(0.002, (0.001, 0.0))  # first step: elastic, u̇ finite, ü = (0.002 − 0.002 + 0)/dt²
    assert force == pytest.approx(1000.0 * 0.002 + 0.5 * (0.002 - 2 * 0.001 + 0.0) / dt**2)
    with pytest.raises(ParameterError, match="mass"):
        HystereticSpecimen(BilinearKinematic, BilinearParams(k=1.0, fy=1.0, b=0.0), mass=-1.0)


class _Rig:
    """A rig whose reading is the target and a spring's force, that records its calls."""

    n_interface, where = 1, "test rig"

    def __init__(self, k: float):
        self.k, self.closed, self.stopped = k, False, False

    def step(self, target):
        x = np.asarray(target, float).reshape(1)
        return SiteReading(x, self.k * x, {"command": 2.0 * x})

    def safe_stop(self):
        self.stopped = True
        return "ramped"

    def close(self):
        self.closed = True


def test_readings_come_in_the_virtual_sides_log_with_the_identifiers_estimate():
    from rths_ident.estimators.joint_ukf_identifier import joint_ukf_online_identifier

    guess = BilinearParams(k=700.0, fy=50.0, b=0.05)  # 30 % soft; never yields here
    identifier = joint_ukf_online_identifier(BilinearKinematic, guess, ("k",), force_noise_std=0.01,
                                             parameter_std=0.5)
    closed = []
    site = RigLoopSite(_Rig(1000.0), identifier, 0.01, on_close=lambda: closed.append(True))
    for k in range(200):
        reading = site.step(np.array([0.005 * np.sin(0.2 * k)]))
    assert set(reading.log) == {"target", "command", "command_raw", "measured", "force", "limit"}
    # the command in metres is the target; the rig's own command (here 2× it) is kept raw
    assert reading.log["command"][0] == reading.log["target"][0]
    assert reading.log["command_raw"][0] == pytest.approx(2.0 * reading.log["target"][0])
    assert float(reading.estimate.theta[0]) == pytest.approx(1000.0, rel=1e-3)  # the spring's k, identified
    assert site.safe_stop() == "ramped"
    site.close()
    assert site.hardware.closed and closed == [True]


def test_without_an_identifier_the_estimate_is_empty():
    site = RigLoopSite(_Rig(10.0), None, 0.02)
    reading = site.step(np.array([0.001]))
    assert reading.estimate.theta.shape == (0,) and not bool(reading.estimate.converged)
    with pytest.raises(ParameterError, match="dt"):
        RigLoopSite(_Rig(10.0), None, 0.0)
