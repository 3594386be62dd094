"""The compensators by name: the one place ``"damb"``, ``"amb"``, ``"polynomial"`` and
``"none"`` become objects (test files, ``run --compensation``, ``calibrate``).

Each entry holds the compensator's pure module (``init``/``step``), its default
parameters for a loop (the fast rate it runs at, the actuator's loop gain g), and what
``rths-ident calibrate`` tunes (:class:`CalibrationGains`: θ, its units, bounds and the
sources' values, and θ → parameters and initial state), and the gains a test file
declares (:class:`GainField`, ``[compensation]`` of a test file: the same names as
``calibrate --bounds``, e.g. ``log10_P0``, ``rho``; left out, the compensator's default).
``none`` has no module: the target goes to the actuator as it is.

Each entry also says the rate transition's continuity its command needs
(:attr:`Compensator.continuity`, what a test file's ``transition.continuity`` left out
means; docs/hybrid/smooth_commands.md): 3 (value to jerk continuous across slow steps)
for AMB and the polynomial extrapolation, whose backward third difference turns every
jump of the target's jerk into a command step (their largest command jump 2.5–9 × smaller
than with 2); 2 (to the curvature) for dAMB, whose first-order lead on the target's
curvature makes 3 worse, and without compensation (the command is the target).

Add a compensator: its module (pure ``init``/``step`` with
:class:`~rths_ident.hybrid.fast_side.compensation.inputs.CompensatorInputs`, and
``with_calibration_gains`` if it can be calibrated), one :data:`COMPENSATORS` line, its
section in docs/hybrid/compensation.md.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from rths_ident._params import replace
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.compensation import amb, damb, polynomial
from rths_ident.registry import Registry

__all__ = ["CalibrationGains", "Compensator", "COMPENSATORS", "GainField", "GAIN_FIELDS", "gain_kinds"]


class CalibrationGains(NamedTuple):
    """θ of a compensator as ``rths-ident calibrate`` searches it (SI unless a unit says).

    ``build(θ, κ, params, state) -> (params, initial state)`` is pure and traceable
    (``vmap``/``grad`` over θ); κ is the specimen's sampled time-scale factor."""

    names: tuple
    units: tuple
    low: np.ndarray
    high: np.ndarray
    source: np.ndarray  # the sources' (or the module's default) θ
    build: Callable


class GainField(NamedTuple):
    """One gain a test file declares under ``[compensation]`` (``compensation.NAME``).

    ``name`` is how ``rths-ident calibrate --bounds`` spells it
    (:func:`rths_ident.calibration.gains.option_name` of a :class:`CalibrationGains` name);
    ``low``/``high`` its valid range (inclusive), ``default`` the value the compensator
    takes when the file leaves it out (None: it depends on the loop, said in ``doc``)."""

    name: str
    unit: str
    low: float
    high: float
    default: float | None
    doc: str


class Compensator(NamedTuple):
    """One registered compensator (module doc)."""

    description: str
    module: Any  # pure init/step module; None: no compensation
    # (fast rate [Hz], actuator loop gain g [1/s]) -> Params
    default_params: Callable[[float, float], Any] | None
    # actuator loop gain g [1/s] -> CalibrationGains (None: nothing to calibrate)
    calibration: Callable[[float], CalibrationGains] | None = None
    # the gains a test file may declare (GainField names) and
    # (params, {name: value}) -> params with those gains (the others as they are)
    gains: tuple = ()
    with_gains: Callable[[Any, dict], Any] | None = None
    # the rate transition's continuity order this compensator's command needs (module doc)
    continuity: int = 2

    def strategy_parts(self, fast_rate: float, loop_gain: float,
                       gains: dict | None = None) -> tuple[Any, Any] | None:
        """(module, params) for a loop at ``fast_rate`` behind an actuator of loop gain
        ``loop_gain``, with the declared ``gains`` ({name: value}, :class:`GainField`
        names; the rest at their defaults); None for no compensation."""
        if self.module is None:
            return None
        params = self.default_params(fast_rate, loop_gain)
        if gains:
            unknown = sorted(set(gains) - set(self.gains))
            if unknown:
                raise ParameterError(f"compensator gains {', '.join(unknown)}: expected "
                                     f"{', '.join(self.gains) or 'none'}")
            params = self.with_gains(params, gains)
        return self.module, params


def _amb_gains(loop_gain: float) -> CalibrationGains:
    del loop_gain
    source = np.r_[np.log10(amb.SEED_000_GAINS), 1.0]
    return CalibrationGains(("log10 Γ0", "log10 Γ1", "log10 Γ2", "log10 Γ3", "s"),
                            ("log10(s^-1/in²)", "log10(s/in²)", "log10(s^3/in²)", "log10(s^5/in²)", "-"),
                            np.r_[source[:4] - 3.0, 0.25], np.r_[source[:4] + 3.0, 2.0], source,
                            amb.with_calibration_gains)


def _damb_gains(loop_gain: float) -> CalibrationGains:
    del loop_gain
    return CalibrationGains(("log10 P0", "ρ", "s"), ("log10(-)", "-", "-"), np.array([0.0, 0.99, 0.25]),
                            np.array([12.0, 1.0, 2.0]), np.array([10.0, 1.0, 1.0]), damb.with_calibration_gains)


def _polynomial_gains(loop_gain: float) -> CalibrationGains:
    return CalibrationGains(("τ",), ("s",), np.array([0.0]), np.array([0.05]), np.array([1.0 / loop_gain]),
                            polynomial.with_calibration_gains)


#: the gains a test file declares, by name (module doc); every name is one of a
#: compensator's :class:`CalibrationGains` names as ``calibrate --bounds`` spells it
GAIN_FIELDS: dict[str, GainField] = {field.name: field for field in (
    GainField("log10_P0", "log10(-)", -30.0, 30.0, 10.0,
              "damb: RLS initial covariance P0 = 10^log10_P0 · I (seed 000 Eq. 2.44)"),
    GainField("rho", "", 1e-6, 1.0, 1.0, "damb: RLS forgetting factor ρ (seed 000 Eq. 2.43)"),
    GainField("log10_Gamma0", "log10(s^-1/in²)", -30.0, 30.0, 6.03,
              "amb: adaptation gain Γ0 = 10^log10_Gamma0 (seed 000 Eq. 2.34; seed 003's value)"),
    GainField("log10_Gamma1", "log10(s/in²)", -30.0, 30.0, 4.23, "amb: adaptation gain Γ1 = 10^log10_Gamma1"),
    GainField("log10_Gamma2", "log10(s^3/in²)", -30.0, 30.0, 1.48, "amb: adaptation gain Γ2 = 10^log10_Gamma2"),
    GainField("log10_Gamma3", "log10(s^5/in²)", -30.0, 30.0, -1.10, "amb: adaptation gain Γ3 = 10^log10_Gamma3"),
    GainField("s", "", 1e-3, 1e3, 1.0, "amb, damb: time scale of the initial plant model, a(0)_k = a_src,k · s^k "
              "(amb: seed 000 §4.2's a_src; damb: the repository's)"),
    GainField("tau", "s", 0.0, 1.0, None, "polynomial: the delay τ compensated by extrapolation (leave out: 1/g, "
              "the actuator's loop gain; seed 000 Eqs. 2.27–2.31)"),
)}


def gain_kinds(name: str) -> tuple[str, ...]:
    """The compensators that take gain ``name``."""
    return tuple(kind for kind, entry in COMPENSATORS.items() if name in entry.gains)


def _plant_scale(s: float) -> np.ndarray:
    return float(s) ** np.arange(4.0)


def _damb_with_gains(params, gains: dict):
    changes = {}
    if "log10_P0" in gains:
        changes["initial_covariance"] = 10.0 ** float(gains["log10_P0"])
    if "rho" in gains:
        changes["forgetting_factor"] = float(gains["rho"])
    if "s" in gains:
        changes["initial_plant_coefficients"] = damb.REPOSITORY_INITIAL_PLANT * _plant_scale(gains["s"])
    return replace(params, **changes)


def _amb_with_gains(params, gains: dict):
    changes = {}
    adaptation = np.array(params.adaptation_gains, dtype=float)
    for k in range(4):
        if f"log10_Gamma{k}" in gains:
            adaptation[k] = 10.0 ** float(gains[f"log10_Gamma{k}"])
            changes["adaptation_gains"] = adaptation
    if "s" in gains:
        changes["initial_coefficients"] = amb.SEED_000_INITIAL_COEFFICIENTS * _plant_scale(gains["s"])
    return replace(params, **changes)


def _polynomial_with_gains(params, gains: dict):
    return replace(params, delay=float(gains["tau"])) if "tau" in gains else params


#: name -> :class:`Compensator`
COMPENSATORS: Registry[Compensator] = Registry("compensator", {
    "damb": Compensator(
        "discrete adaptive model-based: inverse-plant FIR identified by RLS (seed 000 Eqs. 2.37–2.44)", damb,
        lambda fast_rate, loop_gain: damb.DAMBParams(filter_sample_rate=fast_rate), _damb_gains,
        ("log10_P0", "rho", "s"), _damb_with_gains),
    "amb": Compensator(
        "adaptive model-based, continuous normalised gradient (seed 000 Eqs. 2.32–2.34)", amb,
        lambda fast_rate, loop_gain: amb.AMBParams(filter_sample_rate=fast_rate), _amb_gains,
        ("log10_Gamma0", "log10_Gamma1", "log10_Gamma2", "log10_Gamma3", "s"), _amb_with_gains, continuity=3),
    "polynomial": Compensator(
        "polynomial extrapolation by the delay τ = 1/g (seed 000 Eqs. 2.27–2.31)", polynomial,
        lambda fast_rate, loop_gain: polynomial.PolynomialExtrapolationParams(delay=1.0 / loop_gain),
        _polynomial_gains, ("tau",), _polynomial_with_gains, continuity=3),
    "none": Compensator("no compensation: the target is the command", None, None),
})
