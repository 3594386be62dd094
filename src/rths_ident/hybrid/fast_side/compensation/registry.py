"""The compensators by name: the one place ``"damb"``, ``"amb"``, ``"polynomial"`` and
``"none"`` become objects (test files, ``run --compensation``, ``calibrate``).

Each entry holds the compensator's pure module (``init``/``step``), its default
parameters for a loop (the fast rate it runs at, the actuator's loop gain g), and what
``rths-ident calibrate`` tunes (:class:`CalibrationGains`: θ, its units, bounds and the
sources' values, and θ → parameters and initial state). ``none`` has no module: the
target goes to the actuator as it is.

Add a compensator: its module (pure ``init``/``step`` with
:class:`~rths_ident.hybrid.fast_side.compensation.inputs.CompensatorInputs`, and
``with_calibration_gains`` if it can be calibrated), one :data:`COMPENSATORS` line, its
section in docs/hybrid/compensation.md.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from rths_ident.hybrid.fast_side.compensation import amb, damb, polynomial
from rths_ident.registry import Registry

__all__ = ["CalibrationGains", "Compensator", "COMPENSATORS"]


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


class Compensator(NamedTuple):
    """One registered compensator (module doc)."""

    description: str
    module: Any  # pure init/step module; None: no compensation
    # (fast rate [Hz], actuator loop gain g [1/s]) -> Params
    default_params: Callable[[float, float], Any] | None
    # actuator loop gain g [1/s] -> CalibrationGains (None: nothing to calibrate)
    calibration: Callable[[float], CalibrationGains] | None = None

    def strategy_parts(self, fast_rate: float, loop_gain: float) -> tuple[Any, Any] | None:
        """(module, default params) for a loop at ``fast_rate`` behind an actuator of
        loop gain ``loop_gain``; None for no compensation."""
        if self.module is None:
            return None
        return self.module, self.default_params(fast_rate, loop_gain)


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


#: name -> :class:`Compensator`
COMPENSATORS: Registry[Compensator] = Registry("compensator", {
    "damb": Compensator(
        "discrete adaptive model-based: inverse-plant FIR identified by RLS (seed 000 Eqs. 2.37–2.44)", damb,
        lambda fast_rate, loop_gain: damb.DAMBParams(filter_sample_rate=fast_rate), _damb_gains),
    "amb": Compensator(
        "adaptive model-based, continuous normalised gradient (seed 000 Eqs. 2.32–2.34)", amb,
        lambda fast_rate, loop_gain: amb.AMBParams(filter_sample_rate=fast_rate), _amb_gains),
    "polynomial": Compensator(
        "polynomial extrapolation by the delay τ = 1/g (seed 000 Eqs. 2.27–2.31)", polynomial,
        lambda fast_rate, loop_gain: polynomial.PolynomialExtrapolationParams(delay=1.0 / loop_gain),
        _polynomial_gains),
    "none": Compensator("no compensation: the target is the command", None, None),
})
