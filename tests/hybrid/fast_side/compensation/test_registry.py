"""The gains a test file declares (registry.GAIN_FIELDS) against calibrate's θ → params
(each module's ``with_calibration_gains``, a second implementation of the same map)."""

import jax
import numpy as np
import pytest

from rths_ident.calibration.gains import option_name
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS, GAIN_FIELDS, gain_kinds

FAST_RATE, LOOP_GAIN = 4000.0, 80.0


def _state_leaves(module, params):
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(module.init(params))]


@pytest.mark.parametrize("kind", ["damb", "amb", "polynomial"])
def test_test_file_gains_are_calibrates_names(kind):
    """One naming: a compensator's declared gains are its calibration θ's names as
    ``calibrate --bounds`` spells them, each with a field."""
    entry = COMPENSATORS[kind]
    names = tuple(option_name(n) for n in entry.calibration(LOOP_GAIN).names)
    assert entry.gains == names
    assert all(name in GAIN_FIELDS for name in names)


@pytest.mark.parametrize("kind, theta", [
    ("damb", {"log10_P0": 7.5, "rho": 0.995, "s": 1.3}),
    ("amb", {"log10_Gamma0": 5.0, "log10_Gamma1": 4.0, "log10_Gamma2": 2.0, "log10_Gamma3": -1.5, "s": 0.8}),
    ("polynomial", {"tau": 0.013}),
])
def test_declared_gains_build_what_calibrate_builds(kind, theta):
    """params with the declared gains, then init, equal calibrate's θ → (params, state)
    at κ = 1 (the frame tests sample no specimen time scale)."""
    entry = COMPENSATORS[kind]
    module, params = entry.strategy_parts(FAST_RATE, LOOP_GAIN, theta)
    base = entry.default_params(FAST_RATE, LOOP_GAIN)
    vector = np.array([theta[n] for n in entry.gains])
    ref_params, ref_state = entry.calibration(LOOP_GAIN).build(vector, 1.0, base, module.init(base))
    for ours, theirs in zip(_state_leaves(module, params), jax.tree_util.tree_leaves(ref_state)):
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-14, atol=0.0)
    # calibrate puts the initial model into the state only; the test file into the params
    # (init then builds the same state, checked above); the gains themselves: the same params
    for name in {"damb": ("forgetting_factor", "initial_covariance"), "amb": ("adaptation_gains",),
                 "polynomial": ("delay",)}[kind]:
        np.testing.assert_allclose(np.asarray(getattr(params, name)), np.asarray(getattr(ref_params, name)),
                                   rtol=1e-14, atol=0.0)


def test_gains_at_their_defaults_are_the_default_params():
    """The documented defaults are the compensators' own values: seed 000 Table/§4.2 (amb
    Γ = 10^[6.03, 4.23, 1.48, −1.10]) and [REPO] damb (P0 = 1e10, ρ = 1)."""
    for kind in ("damb", "amb"):
        entry = COMPENSATORS[kind]
        defaults = {name: GAIN_FIELDS[name].default for name in entry.gains}
        _, params = entry.strategy_parts(FAST_RATE, LOOP_GAIN, defaults)
        base = entry.default_params(FAST_RATE, LOOP_GAIN)
        for ours, theirs in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(base)):
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))  # bit for bit
    params = COMPENSATORS["damb"].strategy_parts(FAST_RATE, LOOP_GAIN, {"log10_P0": 10.0})[1]
    assert params.initial_covariance == 1e10


def test_a_gain_of_another_compensator_is_named():
    assert gain_kinds("s") == ("damb", "amb")
    with pytest.raises(ParameterError, match="tau"):
        COMPENSATORS["damb"].strategy_parts(FAST_RATE, LOOP_GAIN, {"tau": 0.01})
