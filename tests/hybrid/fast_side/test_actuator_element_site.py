"""ActuatorElementSite: the OpenFresco element site behind the Carrion–Spencer actuator
(end to end over TCP in tests/test_serve_site_command.py). Here: a linear specimen
(R = k·x exactly, so force and measured displacement are tied by a closed form), the
two-node basic DOFs, trials that start from the committed state, and the limit stop."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.hybrid.fast_side.actuator import ActuatorLimitError, CarrionSpencerParams
from rths_ident.hybrid.fast_side.actuator_element_site import ActuatorElementSite
from rths_ident.models import LinearElement

K = 1.0e6  # N/m


def _site(**changes):
    actuator = CarrionSpencerParams.scaled_for(peak_force=5e4, peak_displacement=0.05, peak_velocity=1.0, **changes)
    return ActuatorElementSite(LinearElement, LinearElement.Params(k=K), actuator, n_basic=2)


def test_two_node_site_measures_the_actuator_and_the_specimen():
    site = _site()
    site.set_trial([0.001, 0.011], None, None, 0.01)  # base moved 1 mm, command 10 mm
    x_a = site.measured_displacement()[1] - 0.001
    assert 0.0 < x_a < 0.01  # the actuator lags its command
    np.testing.assert_allclose(site.force(), [-K * x_a, K * x_a], rtol=1e-12)  # R = k x_a
    assert site.measured_displacement()[0] == 0.001
    first = site.force().copy()
    site.set_trial([0.0, 0.002], None, None, 0.01)  # another trial from the same committed state
    site.set_trial([0.001, 0.011], None, None, 0.01)
    np.testing.assert_array_equal(site.force(), first)  # trials are pure
    site.commit()
    assert site.history[-1][:2] == (0.01, 0.011 - 0.001)  # (time, command deformation)
    site.set_trial([0.001, 0.011], None, None, 0.01)  # Δt = 0: the actuator stays where committed
    np.testing.assert_array_equal(site.force(), first)
    np.testing.assert_array_equal(site.initial_stiffness(), K * np.array([[1.0, -1.0], [-1.0, 1.0]]))


def test_limit_stops_at_the_commit_that_crossed_it():
    site = _site(stroke_limit=0.002)
    site.set_trial([0.0, 0.01], None, None, 0.02)
    with pytest.raises(ActuatorLimitError, match="stroke limit exceeded"):
        site.commit()
