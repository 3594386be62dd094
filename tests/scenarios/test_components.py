"""The slow-rate record of a scenario: scaling, duration and zero padding."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.datasets import load_ground_motion
from rths_ident.scenarios.components import slow_record
from rths_ident.scenarios.config import HybridTestConfig


def test_padding_prepends_zeros_and_shifts_the_record():
    t, ag = slow_record(HybridTestConfig(duration=2.0))
    t_pad, ag_pad = slow_record(HybridTestConfig(duration=2.0, pad_seconds=0.5))
    assert len(ag) == 100 and len(ag_pad) == 125  # 50 Hz: 2 s, then 0.5 s more
    np.testing.assert_array_equal(ag_pad[:25], 0.0)
    np.testing.assert_array_equal(ag_pad[25:], ag)
    np.testing.assert_allclose(np.diff(t_pad), 0.02, rtol=1e-9)
    np.testing.assert_allclose(t_pad[25:], t + 0.5, rtol=1e-12)
    # the El Centro file is already at 50 Hz: the record is the file's samples
    t_file, ag_file = load_ground_motion("elcentro_1940")
    np.testing.assert_allclose(ag, ag_file[1:101], rtol=1e-12)


def test_bad_padding_names_the_field():
    with pytest.raises(ParameterError, match="pad_seconds"):
        HybridTestConfig(pad_seconds=-1.0)


def test_declared_compensation_gains_reach_the_compensator():
    from rths_ident.hybrid.fast_side.actuator import CarrionSpencerParams  # noqa: PLC0415
    from rths_ident.scenarios.components import compensation  # noqa: PLC0415

    actuator = CarrionSpencerParams()
    default = compensation(HybridTestConfig(compensation="damb"), actuator)
    tuned = compensation(HybridTestConfig(compensation="damb", compensation_rho=0.99, compensation_log10_P0=8.0),
                         actuator)
    assert float(default.params.forgetting_factor) == 1.0 and float(default.params.initial_covariance) == 1e10
    assert float(tuned.params.forgetting_factor) == 0.99 and float(tuned.params.initial_covariance) == 1e8
    delay = compensation(HybridTestConfig(compensation="polynomial"), actuator).params.delay
    assert float(delay) == pytest.approx(1.0 / actuator.loop_gain(), rel=1e-15)
    given = compensation(HybridTestConfig(compensation="polynomial", compensation_tau=0.004), actuator).params.delay
    assert float(given) == 0.004


@pytest.mark.parametrize("changes, words", [
    ({"compensation_rho": 1.5}, ["compensation.rho = 1.5", "[1e-06, 1]"]),
    ({"compensation_tau": 0.01}, ["compensation.tau", "polynomial", "compensation.kind = damb"]),
    ({"compensation": "amb", "compensation_log10_P0": 8.0}, ["compensation.log10_P0", "damb", "log10_Gamma0"]),
])
def test_bad_compensation_gains_name_the_field(changes, words):
    with pytest.raises(ParameterError) as error:
        HybridTestConfig(**changes)
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize("compensator, order", [("amb", 3), ("polynomial", 3), ("damb", 2), ("none", 2)])
def test_continuity_left_out_is_the_compensators_own(compensator, order):
    """``transition.continuity`` left out: 3 with AMB and the polynomial extrapolation, 2
    with dAMB and without compensation (docs/hybrid/smooth_commands.md, "Which
    continuity"); a declared order is taken as it is."""
    from rths_ident.scenarios.components import transition  # noqa: PLC0415

    realisation = lambda: np.sin(np.linspace(0.0, 20.0, 500))  # noqa: E731  (DDMRT's training signal)
    for kind in ("predictor-corrector", "ddmrt"):
        cfg = HybridTestConfig(compensation=compensator, transition=kind)
        assert cfg.transition_continuity is None
        assert transition(cfg, realisation).params.continuity == order
        declared = HybridTestConfig(compensation=compensator, transition=kind, transition_continuity=1)
        assert transition(declared, realisation).params.continuity == 1
