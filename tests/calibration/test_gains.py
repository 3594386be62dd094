"""Gain boxes set by the user (``calibrate --bounds``): replaced, or one clear error."""

import numpy as np
import pytest

from rths_ident.calibration.gains import gain_space, option_name, with_bounds
from rths_ident.errors import ParameterError


def test_bounds_replace_the_box_by_either_spelling():
    space = gain_space("damb", 100.0)
    narrowed = with_bounds(space, {"log10_P0": (6.0, 9.0), "ρ": (0.999, 1.0)})
    assert narrowed.low.tolist() == [6.0, 0.999, 0.25] and narrowed.high.tolist() == [9.0, 1.0, 2.0]
    assert np.array_equal(space.low, [0.0, 0.99, 0.25])  # the original is unchanged
    assert [option_name(n) for n in space.names] == ["log10_P0", "rho", "s"]
    assert option_name("log10 Γ0") == "log10_Gamma0" and option_name("τ") == "tau"


@pytest.mark.parametrize("bounds, message", [
    ({"P0": (6.0, 9.0)}, "damb has no gain 'P0': expected one of log10_P0, rho, s"),
    ({"log10_P0": (9.0, 6.0)}, "log10_P0 bounds 9:6: expected LOW:HIGH with LOW < HIGH, both finite"),
    ({"rho": (0.99, 1.5)}, "rho bounds 0.99:1.5: expected LOW:HIGH with LOW < HIGH, within (0, 1]"),
    ({"s": (0.0, 2.0)}, "within (0, ∞)"),
])
def test_bad_bounds_name_the_gain_and_the_range(bounds, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
        with_bounds(gain_space("damb", 100.0), bounds)
