"""The pre-test check's delay margin (runner.delay_margin).

* the prediction — the fused twin batched with ``jax.vmap`` over the extra delay — agrees
  within 10 % with the delay at which the **step-wise loop** (the virtual site, one
  compiled call per slow step, the loop's own interlock monitor and safe stop) trips,
  bisected run by run: the independent number a lab would find by trial;
* the same for the specimen's stiffness error (lugre-frame, σ0 and σ3 × s): the batch
  rebuilds the specimen inside the ``vmap``; the step-wise loop runs a virtual site
  given the changed parameters with ``VirtualSite.with_params``;
* the bracket search finds a known threshold (a closed form) to its tolerance;
* a bad sweep value is one error naming ``margin.FIELD``, before any work, also from the
  command line.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rths_ident.cli import main
from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.assembled import run_loop
from rths_ident.runner import delay_margin as dm
from rths_ident.scenarios import lugre_frame as lugre
from rths_ident.scenarios import rc_frame as rc


@pytest.mark.slow
def test_predicted_delay_margin_agrees_with_the_stepwise_loop_bisected():
    """rc-frame's first 2.5 s (its margin ends by the tracking limit at t ≈ 1.7 s): both
    brackets narrower than 6 % of the margin, so both hold the threshold and the two
    margins differ by less than 10 % unless the two loops disagree."""
    cfg = rc.RCFrameConfig(duration=2.5)
    test = rc.build(cfg)
    logs, _ = run_loop(test, "fused", variant=cfg.variant, interlocks=False)
    peak = float(np.max(np.abs(logs["fast"]["target"])))
    sweep = dm.MarginSweep(max_delay=0.025, window=None, tolerance=0.06)
    predicted = dm.predict_margins(test, cfg.variant, sweep, peak, quantities=("delay",))
    actual = dm.stepwise_delay_margin(test, cfg.variant, sweep, peak)
    assert predicted["delay"]["margin"] is not None and actual["margin"] is not None
    assert abs(predicted["delay"]["margin"] - actual["margin"]) <= 0.1 * actual["margin"]
    assert predicted["delay"]["trip"].name == actual["trip"].name  # the same interlock ends both
    assert 0 < predicted["delay"]["bracket"][0] < predicted["delay"]["margin"]


@pytest.mark.slow
def test_predicted_specimen_stiffness_margin_agrees_with_the_stepwise_loop_bisected():
    """lugre-frame's first 3 s (a stiffer specimen ends it by command_velocity at
    t ≈ 2.4 s): the stiffness factor at which the batched fused twin fails, against the
    one at which the step-wise loop trips, bisected run by run; both brackets narrower
    than 6 % of the margin's distance from ×1, so the two differ by less than 10 % unless
    the two loops disagree."""
    cfg = lugre.LugreFrameConfig(duration=3.0)
    test = lugre.build(cfg)
    logs, _ = run_loop(test, "fused", variant=cfg.variant, interlocks=False)
    peak = float(np.max(np.abs(logs["fast"]["target"])))
    sweep = dm.MarginSweep(window=None, tolerance=0.06, specimen_high=4.0)
    predicted = dm.predict_margins(test, cfg.variant, sweep, peak, quantities=("specimen",))
    actual = dm.stepwise_margin(test, cfg.variant, sweep, peak, "specimen", sweep.specimen_high)
    assert predicted["specimen_fields"] == ("sigma0", "sigma3")
    over = predicted["specimen_over"]
    assert over["margin"] is not None and actual["margin"] is not None
    assert abs(over["margin"] - actual["margin"]) <= 0.1 * (actual["margin"] - 1.0)
    assert over["trip"].name == actual["trip"].name  # the same interlock ends both
    assert 1.0 < over["bracket"][0] < over["margin"]
    assert predicted["actuator_over"] is None and predicted["gain_over"] is None  # not asked for


def test_an_actuator_limit_is_a_failure_at_its_slow_step():
    """The actuator's own velocity limit (bit 2 of its latched limit code) set from the
    fourth slow step: the trip is the measured-velocity interlock at that step, with the
    actuator's velocity limit; no code set, no trip."""
    from types import SimpleNamespace

    from rths_ident.hybrid.fast_side import actuator as act

    actuator = act.CarrionSpencerParams(velocity_limit=0.7)
    test = SimpleNamespace(fast_side=SimpleNamespace(actuator=actuator), slow_rate=50.0)
    codes = np.zeros((6, 4), np.int32)
    codes[3:, 2:] = act.LIMIT_VELOCITY
    trip = dm.actuator_limit_trip(test, codes)
    assert (trip.name, trip.step, trip.limit, trip.time) == ("measured_velocity", 3, 0.7, 3 / 50.0)
    assert dm.actuator_limit_trip(test, np.zeros((6, 4), np.int32)) is None


class _Trip:
    name = "tracking_error"


def test_refine_finds_a_known_threshold_to_its_tolerance():
    threshold = 0.0137
    calls = []

    def evaluate(values):
        calls.append(len(values))
        return [_Trip() if value >= threshold else None for value in values]

    result = dm._refine(evaluate, 0.0, 0.05, 8, 0.04)
    low, high = result["bracket"]
    assert low < threshold <= high and high - low <= 0.04 * high
    assert result["margin"] == high and all(n == 8 for n in calls)
    # downwards (a gain below 1) and nothing failing in range
    down = dm._refine(lambda values: [_Trip() if v <= 0.3 else None for v in values], 1.0, 0.0, 8, 0.04)
    assert down["bracket"][1] <= 0.3 < down["bracket"][0] and abs(down["bracket"][0] - 0.3) <= 0.04 * 0.7
    assert dm._refine(lambda values: [None] * len(values), 0.0, 0.05, 8, 0.04)["margin"] is None
    # a twin that fails as it is: margin 0 after one call
    failing = dm._refine(lambda values: [_Trip()] * len(values), 0.0, 0.05, 8, 0.04)
    assert failing["margin"] == 0.0 and failing["calls"] == 1


@pytest.mark.parametrize("field, value", [("max_delay", -0.01), ("max_delay", 0.0), ("min_delay_margin", 0.2),
                                          ("window", -1.0), ("gain_low", 1.5), ("gain_high", 0.5),
                                          ("points", 1), ("tolerance", 0.0), ("tracking_share", math.nan),
                                          ("actuator_field", "stroke_limit"), ("actuator_low", 0.0),
                                          ("actuator_high", 1.0), ("specimen_low", 1.2), ("specimen_high", math.inf)])
def test_a_bad_sweep_value_names_the_field(field, value):
    with pytest.raises(ParameterError, match=rf"^margin\.{field} = "):
        dm.MarginSweep(**{field: value})


def test_the_command_line_says_a_bad_sweep_value_in_one_line(capsys):
    assert main(["check", "rc-frame", "--predict", "--margin", "max_delay=-0.01"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "margin.max_delay = -0.01" in err and "Traceback" not in err
    assert main(["check", "rc-frame", "--predict", "--margin", "actuator_field=area"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "margin.actuator_field = 'area'" in err and "valve_flow_gain" in err
    assert main(["check", "rc-frame", "--predict", "--margin", "specimen_high=x"]) == 1
    assert "margin.specimen_high = 'x': expected a number" in capsys.readouterr().err
    assert main(["check", "rc-frame", "--margin", "max_delay=0.03"]) == 1
    assert "add --predict" in capsys.readouterr().err
