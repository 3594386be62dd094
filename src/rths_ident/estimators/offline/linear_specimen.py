"""Identification of a linear specimen (M_e, C_e, K_e) as in seed 002 (Martínez
Brugarolas 2020, §5.2): a static stiffness test, then the logarithmic decrement of a
free-vibration (hybrid) test of specimen + known numerical part.

1. Static stiffness (§5.2.1): impose displacements, measure forces, K_e = slope of the
   least-squares line F = K_e u + F_0 (:func:`static_stiffness`; the thesis takes the
   ratio ΔF/Δu; the slope of the LS line is that ratio for two points and its best
   estimate for more).
2. Free vibration (Eqs. 5-2 … 5-9): from two peaks u_0, u_j j cycles apart and the damped
   period T_d,

       δ = ln(u_0/u_j)/j                    (5-2, per cycle)
       ζ = δ / √(4π² + δ²)                  (exact form of δ = 2πζ/√(1−ζ²))
       ω_n = 2π / (T_d √(1 − ζ²))           (5-7)
       M_T = K_T / ω_n²                     (5-8), K_T = K_1 + K_e (eq. 5-1)
       C_T = 2 ζ √(K_T M_T)                 (5-9)
       M_e = M_T − M_1,  C_e = C_T − C_1    (eq. 5-1)

   :func:`log_decrement` does the arithmetic from given peaks; :func:`free_vibration_peaks`
   finds the positive peaks of a sampled record (parabolic interpolation of each local
   maximum, so peak times are not quantised to the sample interval) and
   :func:`identify_free_vibration` chains both, averaging δ and T_d over all cycles.

:func:`fit_static_stiffness` and :func:`fit_free_vibration` run the two procedures on a
logged record (:class:`~rths_ident.estimators.offline.fit_data.FitData`) and return a
:class:`~rths_ident.estimators.offline.result.FitResult` of the linear model
(:class:`~rths_ident.models.LinearElement`), as ``rths-ident fit --method static|logdec``
prints and writes it.

Units SI: m, N, s, kg (peaks may be in any length unit — only their ratio enters).
Seed 002 Table 5-3 (u0/u1 = 8.3/6.87 mm, T_d = 0.93 s, K_T = 1570 N/m, M_1 = 34 kg,
C_1 = 8.5 N·s/m) gives δ = 0.189, ζ = 0.0301, ω_n = 6.76 rad/s, M_e ≈ 0.36 kg,
C_e ≈ 5.43 N·s/m. M_e is ill-conditioned: ∂M_T/∂T_d ≈ 2 M_T/T_d (digest 002 §4).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.result import FitResult, make_result
from rths_ident.models.linear import LinearElement
from rths_ident.models.registry import name_of_model

__all__ = [
    "fit_static_stiffness",
    "fit_free_vibration",
    "StaticStiffness",
    "static_stiffness",
    "FreeVibrationIdentification",
    "log_decrement",
    "free_vibration_peaks",
    "identify_free_vibration",
]


@dataclasses.dataclass(frozen=True)
class StaticStiffness:
    """K_e [N/m] = slope of F = K_e u + F_0 [N]; R² of the line."""

    stiffness: float
    intercept: float
    r_squared: float


def static_stiffness(displacement, force) -> StaticStiffness:
    """Least-squares line through static (displacement [m], force [N]) pairs (§5.2.1)."""
    u = np.asarray(displacement, dtype=float)
    f = np.asarray(force, dtype=float)
    if u.ndim != 1 or u.shape != f.shape or u.size < 2:
        raise ParameterError(f"displacement and force must be 1-D of equal length ≥ 2; got {u.shape} and {f.shape}")
    if np.ptp(u) == 0.0:
        raise ParameterError("static_stiffness needs at least two different displacements")
    design = np.column_stack([u, np.ones_like(u)])
    (slope, intercept), *_ = np.linalg.lstsq(design, f, rcond=None)
    residual = f - design @ np.array([slope, intercept])
    total = np.sum((f - f.mean()) ** 2)
    r2 = 1.0 - float(np.sum(residual**2) / total) if total > 0 else 1.0
    return StaticStiffness(float(slope), float(intercept), r2)


@dataclasses.dataclass(frozen=True)
class FreeVibrationIdentification:
    """Results of the log-decrement identification (seed 002 Eqs. 5-2 … 5-9), SI units."""

    log_decrement: float  # δ per cycle
    damping_ratio: float  # ζ
    damped_period: float  # T_d [s]
    natural_frequency: float  # ω_n [rad/s]
    total_mass: float  # M_T [kg]
    total_damping: float  # C_T [N·s/m]
    total_stiffness: float  # K_T [N/m]
    specimen_mass: float  # M_e = M_T − M_1 [kg]
    specimen_damping: float  # C_e = C_T − C_1 [N·s/m]
    specimen_stiffness: float  # K_e = K_T − K_1 [N/m]
    mass_sensitivity_to_period: float  # ∂M_T/∂T_d [kg/s]


def log_decrement(first_peak: float, later_peak: float, damped_period: float, total_stiffness: float, *,
                  cycles: int = 1, numerical_mass: float = 0.0, numerical_damping: float = 0.0,
                  numerical_stiffness: float = 0.0) -> FreeVibrationIdentification:
    """Eqs. 5-2 … 5-9 from two peaks ``cycles`` apart and T_d [s]; K_T [N/m] is known.

    ``numerical_*`` (M_1 [kg], C_1 [N·s/m], K_1 [N/m]) are subtracted to give the
    specimen's share (eq. 5-1); leave them 0 for a specimen vibrating alone.
    """
    for name, value in (("first_peak", first_peak), ("later_peak", later_peak),
                        ("damped_period", damped_period), ("total_stiffness", total_stiffness)):
        if not (np.isfinite(value) and value > 0):
            raise ParameterError(f"{name} must be a positive number; got {value!r}")
    if int(cycles) != cycles or cycles < 1:
        raise ParameterError(f"cycles must be a positive integer; got {cycles!r}")
    if later_peak >= first_peak:
        raise ParameterError(
            f"later_peak ({later_peak!r}) must be smaller than first_peak ({first_peak!r}) for a decaying vibration"
        )
    delta = math.log(first_peak / later_peak) / cycles
    zeta = delta / math.sqrt(4.0 * math.pi**2 + delta**2)
    omega_n = 2.0 * math.pi / (damped_period * math.sqrt(1.0 - zeta**2))
    total_mass = total_stiffness / omega_n**2
    total_damping = 2.0 * zeta * math.sqrt(total_stiffness * total_mass)
    return FreeVibrationIdentification(
        log_decrement=delta,
        damping_ratio=zeta,
        damped_period=float(damped_period),
        natural_frequency=omega_n,
        total_mass=total_mass,
        total_damping=total_damping,
        total_stiffness=float(total_stiffness),
        specimen_mass=total_mass - numerical_mass,
        specimen_damping=total_damping - numerical_damping,
        specimen_stiffness=float(total_stiffness) - numerical_stiffness,
        mass_sensitivity_to_period=2.0 * total_mass / damped_period,
    )


def free_vibration_peaks(time, displacement) -> tuple[np.ndarray, np.ndarray]:
    """Times [s] and values of the positive local maxima of a free-vibration record.

    Each sampled maximum is refined by the parabola through it and its two neighbours.
    """
    t = np.asarray(time, dtype=float)
    u = np.asarray(displacement, dtype=float)
    if t.ndim != 1 or t.shape != u.shape or t.size < 5:
        raise ParameterError(f"time and displacement must be 1-D of equal length ≥ 5; got {t.shape} and {u.shape}")
    if np.any(np.diff(t) <= 0):
        raise ParameterError("time must be strictly increasing")
    inner = np.flatnonzero((u[1:-1] > u[:-2]) & (u[1:-1] >= u[2:]) & (u[1:-1] > 0)) + 1
    times, values = [], []
    for i in inner:
        y0, y1, y2 = u[i - 1], u[i], u[i + 1]
        curvature = y0 - 2.0 * y1 + y2
        shift = 0.5 * (y0 - y2) / curvature if curvature < 0 else 0.0
        h = 0.5 * (t[i + 1] - t[i - 1])
        times.append(t[i] + shift * h)
        values.append(y1 - 0.25 * (y0 - y2) * shift)
    return np.array(times), np.array(values)


def identify_free_vibration(time, displacement, total_stiffness: float, *, numerical_mass: float = 0.0,
                            numerical_damping: float = 0.0, numerical_stiffness: float = 0.0,
                            min_peak: float = 0.0) -> FreeVibrationIdentification:
    """Log-decrement identification from a sampled free-vibration record (SI).

    Uses every positive peak above ``min_peak`` (e.g. the force-resolution floor, about
    2 mm on the seed 002 rig): δ = ln(u_first/u_last)/(number of cycles) and T_d = mean
    peak spacing.
    """
    times, values = free_vibration_peaks(time, displacement)
    keep = values > min_peak
    times, values = times[keep], values[keep]
    if times.size < 2:
        raise ParameterError(f"need at least two positive peaks above {min_peak!r}; found {times.size}")
    cycles = times.size - 1
    period = (times[-1] - times[0]) / cycles
    return log_decrement(values[0], values[-1], period, total_stiffness, cycles=cycles,
                         numerical_mass=numerical_mass, numerical_damping=numerical_damping,
                         numerical_stiffness=numerical_stiffness)


def fit_static_stiffness(data: FitData) -> FitResult:
    """K_e of a static test (:func:`static_stiffness`) as a fit of the linear model
    (m = c = 0); the fitted force is the LS line K_e u + F_0."""
    line = static_stiffness(data.displacement, data.force)
    fitted = line.stiffness * data.displacement + line.intercept
    return make_result(name_of_model(LinearElement), "static", LinearElement,
                       {"m": 0.0, "c": 0.0, "k": line.stiffness}, ["k"], data, fitted,
                       details={"intercept_N": line.intercept, "line_r_squared": line.r_squared})


def fit_free_vibration(data: FitData, specimen_stiffness: float, *, numerical_mass: float = 0.0,
                       numerical_damping: float = 0.0, numerical_stiffness: float = 0.0) -> FitResult:
    """M_e, C_e, K_e of a free-vibration record by the log decrement
    (:func:`identify_free_vibration` with K_T = K_e + K_1) as a fit of the linear model;
    the fitted force is M_e ẍ + C_e ẋ + K_e x with ẋ, ẍ from second-order differences.

    ``specimen_stiffness`` K_e [N/m] comes from a static test; ``numerical_*`` (M_1 [kg],
    C_1 [N·s/m], K_1 [N/m]) are the known numerical part of the hybrid test. A specimen
    mass or damping below zero (the record's totals are below the numerical part's) is
    refused.
    """
    if not data.time_is_physical:
        raise ParameterError("the log decrement needs a record with a physical time axis; this one is "
                             "quasi-static (a pseudo-time)")
    if not (np.isfinite(specimen_stiffness) and specimen_stiffness > 0):
        raise ParameterError(f"specimen_stiffness K_e must be > 0 [N/m] (from a static test); "
                             f"got {specimen_stiffness!r}")
    ident = identify_free_vibration(
        data.time, data.displacement, specimen_stiffness + numerical_stiffness,
        numerical_mass=numerical_mass, numerical_damping=numerical_damping, numerical_stiffness=numerical_stiffness,
    )
    for name, value in (("mass", ident.specimen_mass), ("damping", ident.specimen_damping)):
        if value < 0:
            raise ParameterError(
                f"the identified specimen {name} is negative ({value:.4g}): the free vibration gives a total "
                f"{name} below the numerical part's; check the numerical {name} and the record"
            )
    velocity = np.gradient(data.displacement, data.time, edge_order=2)
    acceleration = np.gradient(velocity, data.time, edge_order=2)
    fitted = (ident.specimen_mass * acceleration + ident.specimen_damping * velocity
              + ident.specimen_stiffness * data.displacement)
    return make_result(name_of_model(LinearElement), "logdec", LinearElement,
                       {"m": ident.specimen_mass, "c": ident.specimen_damping, "k": ident.specimen_stiffness},
                       ["m", "c", "k"], data, fitted, details=dict(vars(ident)))
