"""Calibration of seed 002's rig: servo angle ↔ displacement, ADC counts → force, limits.

Seed 002 (Martínez Brugarolas 2020, §4.3–4.6; digest 002 §3):

* **Kinematics** (§4.5, Fig. 4-6): a servo arm of radius r = 15 mm drives the specimen;
  the point it pushes moves by u = r·sin(θ − θ_0) for a servo angle θ (neutral θ_0 = 90°).
  The thesis commands the *arc* θ − θ_0 = u/r (arc ≈ chord): at u = 10 mm the specimen
  reaches r·sin(0.667 rad) = 9.28 mm, a 7.2 % error, which sets its stroke limit
  |u| ≤ 10 mm. The *exact* inverse θ − θ_0 = asin(u/r) has no such error
  (:class:`ServoKinematics`, ``model="asin"``, our default; ``"arc"`` reproduces the thesis).
* **Force** (§4.3, eq. 4-1): the servo's supply current, read by an ACS712 through the
  10-bit ADC, F(v) = 0.662·v − 339.05 N for ADC count v (least squares over the 15-point
  hanging-water table, R² = 0.985 — the thesis calls it "R"). The idle current reads
  v = 513 for loads of 0 … 1.45 N: a **dead band**, F = 0 for v ≤ 513 here. Supply
  current carries no direction; the thesis does not say how the sign was recovered
  (digest ⚠ 10), so the **sign policy** is explicit (:class:`ForceCalibration`):
  ``"displacement"`` (default) gives the force the sign of the commanded displacement —
  right for a spring-like specimen, wrong near zero crossings where damping dominates
  (those forces sit inside the dead band on this rig) — and ``"unsigned"`` returns the
  magnitude.
* **Force limit** (§4.6): stall torque 2.5 kgf·cm over the 1.5 cm arm = 1.667 kgf, which
  the thesis writes as 16.67 N (g = 10 m/s²); with g = 9.81 it is 16.35 N
  (:func:`servo_force_limit`). We keep the thesis' 16.67 N as the default limit.

Units SI (m, N, s, rad) except servo angles in degrees, as servo libraries use them.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from rths_ident.errors import ParameterError

__all__ = [
    "ServoKinematics",
    "ForceCalibration",
    "LinearCalibrationFit",
    "fit_force_calibration",
    "servo_force_limit",
    "arc_error_at_stroke",
    "SEED002_CALIBRATION_FORCE_N",
    "SEED002_CALIBRATION_COUNTS",
    "SEED002_FORCE_LIMIT_N",
    "SEED002_STROKE_LIMIT_M",
    "KINEMATIC_MODELS",
    "SIGN_POLICIES",
]

#: seed 002 §4.3 table: hanging load [N] (water 0 … 1.2 kg + 0.048 kg container, g = 9.81) …
SEED002_CALIBRATION_FORCE_N = (0.0, 0.47088, 1.45188, 2.43288, 3.41388, 4.39488, 5.37588, 6.35688, 7.33788,
                               8.31888, 9.29988, 10.28088, 11.26188, 12.24288, 13.22388)
#: … and the ADC count v read for it
SEED002_CALIBRATION_COUNTS = (513, 513, 513, 515, 517, 519, 521, 523, 524, 525, 526, 527, 530, 530, 531)
#: §4.6: 2.5 kgf·cm / 1.5 cm written as 16.67 N
SEED002_FORCE_LIMIT_N = 16.67
#: §4.5: |u| ≤ 10 mm (7.2 % arc error there)
SEED002_STROKE_LIMIT_M = 0.010
KINEMATIC_MODELS = ("asin", "arc")
SIGN_POLICIES = ("displacement", "unsigned")


@dataclasses.dataclass(frozen=True)
class ServoKinematics:
    """Servo arm kinematics (module doc). arm_radius r [m]; neutral_angle θ_0 [deg];
    model ``"asin"`` (exact) or ``"arc"`` (the thesis' θ − θ_0 = u/r); angle_range [deg]."""

    arm_radius: float = 0.015
    neutral_angle: float = 90.0
    model: str = "asin"
    angle_range: tuple = (0.0, 180.0)

    def __post_init__(self):
        if not (np.isfinite(self.arm_radius) and self.arm_radius > 0):
            raise ParameterError(f"arm_radius must be a positive length [m]; got {self.arm_radius!r}")
        if self.model not in KINEMATIC_MODELS:
            raise ParameterError(f"model must be one of {', '.join(KINEMATIC_MODELS)}; got {self.model!r}")
        low, high = self.angle_range
        if not (low < self.neutral_angle < high):
            raise ParameterError(f"neutral_angle must lie inside angle_range {self.angle_range}; "
                                 f"got {self.neutral_angle!r}")

    def angle(self, displacement) -> np.ndarray:
        """Servo angle θ [deg] commanded for displacement u [m]."""
        u = np.asarray(displacement, dtype=float)
        ratio = u / self.arm_radius
        if self.model == "asin":
            if np.any(np.abs(ratio) > 1.0):
                raise ParameterError(f"displacement {u!r} m is beyond the arm radius {self.arm_radius} m")
            rad = np.arcsin(ratio)
        else:
            rad = ratio
        theta = self.neutral_angle + np.degrees(rad)
        low, high = self.angle_range
        if np.any((theta < low) | (theta > high)):
            raise ParameterError(f"displacement {u!r} m needs servo angle {theta!r}°, outside {self.angle_range}")
        return theta

    def displacement(self, angle) -> np.ndarray:
        """Displacement u = r·sin(θ − θ_0) [m] the arm reaches at servo angle θ [deg]."""
        return self.arm_radius * np.sin(np.radians(np.asarray(angle, dtype=float) - self.neutral_angle))

    def relative_error(self, displacement) -> np.ndarray:
        """(u − reached)/u of commanding u with this model (0 for ``asin``; 7.2 % at 10 mm for ``arc``)."""
        u = np.asarray(displacement, dtype=float)
        return (u - self.displacement(self.angle(u))) / u


@dataclasses.dataclass(frozen=True)
class LinearCalibrationFit:
    """F = slope·v + intercept [N] for ADC count v; R² of the fit."""

    slope: float
    intercept: float
    r_squared: float


def fit_force_calibration(force, counts) -> LinearCalibrationFit:
    """Least squares of force [N] on ADC counts (seed 002 §4.3, digest §6 D)."""
    f = np.asarray(force, dtype=float)
    v = np.asarray(counts, dtype=float)
    if f.ndim != 1 or f.shape != v.shape or f.size < 2:
        raise ParameterError(f"force and counts must be 1-D of equal length ≥ 2; got {f.shape} and {v.shape}")
    if np.ptp(v) == 0:
        raise ParameterError("counts must take at least two different values")
    slope, intercept = np.polyfit(v, f, 1)
    residual = f - (slope * v + intercept)
    r2 = 1.0 - float(np.sum(residual**2) / np.sum((f - f.mean()) ** 2))
    return LinearCalibrationFit(float(slope), float(intercept), r2)


def servo_force_limit(stall_torque_kgf_cm: float = 2.5, arm_radius: float = 0.015, gravity: float = 10.0) -> float:
    """Largest force [N] the servo holds at the arm: torque/arm in kgf times ``gravity``.

    The thesis' 16.67 N is ``gravity = 10``; 9.81 gives 16.35 N (digest 002 ⚠ 8)."""
    if not (stall_torque_kgf_cm > 0 and arm_radius > 0 and gravity > 0):
        raise ParameterError("stall_torque_kgf_cm, arm_radius and gravity must be positive")
    return stall_torque_kgf_cm / (arm_radius * 100.0) * gravity


@dataclasses.dataclass(frozen=True)
class ForceCalibration:
    """ADC counts → force (module doc). slope [N/count], intercept [N] (eq. 4-1);
    idle_counts: the dead band (v ≤ idle_counts reads 0 N); sign_policy; adc_bits."""

    slope: float = 0.662
    intercept: float = -339.05
    idle_counts: int = 513
    sign_policy: str = "displacement"
    adc_bits: int = 10

    def __post_init__(self):
        if not (np.isfinite(self.slope) and self.slope > 0 and np.isfinite(self.intercept)):
            raise ParameterError(f"slope must be > 0 [N/count] and intercept finite; got {self.slope!r}, "
                                 f"{self.intercept!r}")
        if self.sign_policy not in SIGN_POLICIES:
            raise ParameterError(f"sign_policy must be one of {', '.join(SIGN_POLICIES)}; got {self.sign_policy!r}")
        if not (1 <= self.adc_bits <= 24 and 0 <= self.idle_counts < 2**self.adc_bits):
            raise ParameterError(f"adc_bits must be in [1, 24] and idle_counts in [0, 2^adc_bits); got "
                                 f"{self.adc_bits!r}, {self.idle_counts!r}")

    @property
    def resolution(self) -> float:
        """Force of one ADC count [N] (0.662 N on seed 002's rig)."""
        return self.slope

    def magnitude(self, counts) -> np.ndarray:
        """|F| [N] from counts, zero inside the dead band."""
        v = np.asarray(counts, dtype=float)
        return np.where(v <= self.idle_counts, 0.0, np.maximum(self.slope * v + self.intercept, 0.0))

    def force(self, counts, displacement) -> np.ndarray:
        """Restoring force [N] from counts, signed by the policy (``displacement``: the
        commanded displacement [m] the reading belongs to)."""
        magnitude = self.magnitude(counts)
        if self.sign_policy == "unsigned":
            return magnitude
        return magnitude * np.sign(np.asarray(displacement, dtype=float))

    def counts(self, force_magnitude) -> np.ndarray:
        """The (unrounded) count eq. 4-1 gives for |F| [N] (the inverse, for emulators and checks)."""
        return (np.abs(np.asarray(force_magnitude, dtype=float)) - self.intercept) / self.slope


def arc_error_at_stroke(arm_radius: float = 0.015, stroke: float = SEED002_STROKE_LIMIT_M) -> float:
    """Closed form of the arc model's error at u = stroke: 1 − (r/u)·sin(u/r)."""
    return 1.0 - arm_radius / stroke * math.sin(stroke / arm_radius)
