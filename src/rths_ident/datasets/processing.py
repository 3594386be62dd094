"""Scaling and resampling of ground-acceleration records (any units, SI by convention)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from rths_ident.errors import ParameterError


def _as_record(name: str, values) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size < 2:
        raise ParameterError(f"{name} must be a 1-D array with at least 2 samples; got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ParameterError(f"{name} must be finite; index {int(np.flatnonzero(~np.isfinite(array))[0])} is not")
    return array


def _positive_finite(name: str, value, unit: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number in (0, inf) {unit}; got {value!r}") from None
    if not (math.isfinite(number) and number > 0.0):
        raise ParameterError(f"{name} must be in (0, inf) {unit}; got {value!r}")
    return number


def peak_ground_acceleration(ag) -> float:
    """PGA = max |a_g| over the record, in the units of ``ag``."""
    return float(np.max(np.abs(_as_record("ag", ag))))


def scale_ground_motion(ag, factor: float | None = None, *, target_pga: float | None = None) -> np.ndarray:
    """Scale a ground-acceleration record.

    Give exactly one of

    * ``factor``: returns ``factor * ag`` (e.g. 0.40 for the multi-axial benchmark);
      ``factor`` must be finite and > 0;
    * ``target_pga``: returns ``ag * target_pga / max|ag|``, a record whose peak
      absolute value is ``target_pga`` (same units as ``ag``, m/s² by convention; e.g.
      ``target_pga=1.5 * STANDARD_GRAVITY`` for "scaled to 1.5 g").

    Raises :class:`ParameterError` for a bad value, both or neither given, or an
    all-zero record with ``target_pga``.
    """
    record = _as_record("ag", ag)
    if (factor is None) == (target_pga is None):
        raise ParameterError("scale_ground_motion: give exactly one of factor or target_pga")
    if factor is not None:
        return _positive_finite("factor", factor, "(dimensionless)") * record
    target = _positive_finite("target_pga", target_pga, "(units of ag)")
    peak = float(np.max(np.abs(record)))
    if peak == 0.0:
        raise ParameterError("scale_ground_motion: ag is all zeros; it cannot be scaled to a target PGA")
    return record * (target / peak)


def _new_time_grid(t: np.ndarray, dt_new: float) -> np.ndarray:
    """t[0] + k dt_new for every k with t[0] + k dt_new <= t[-1] (to 1e-9 dt_new)."""
    n_new = int(math.floor((t[-1] - t[0]) / dt_new + 1e-9)) + 1
    return t[0] + dt_new * np.arange(n_new, dtype=np.float64)


def _fourier_interpolate(ag: np.ndarray, dt: float, times_from_start: np.ndarray, max_frequency: float) -> np.ndarray:
    """Evaluate the trigonometric interpolant of the uniformly sampled ``ag`` (period
    n dt) at ``times_from_start``, keeping only frequencies <= ``max_frequency`` [Hz]
    (ideal low-pass; used when coarsening)."""
    n = ag.size
    spectrum = np.fft.rfft(ag)
    frequencies = np.fft.rfftfreq(n, dt)
    weights = np.full(spectrum.size, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        # The Nyquist bin of an even-length record: its cosine part only (the real
        # interpolant of the samples, as scipy.signal.resample splits it).
        weights[-1] = 1.0
    keep = frequencies <= max_frequency * (1.0 + 1e-12)
    coefficients = (weights * spectrum / n)[keep]
    angular = 2.0 * np.pi * frequencies[keep]
    result = np.empty(times_from_start.size)
    chunk = max(1, 4_000_000 // max(1, coefficients.size))
    for start in range(0, times_from_start.size, chunk):
        tt = times_from_start[start : start + chunk]
        phases = np.exp(1j * np.outer(tt, angular))
        result[start : start + chunk] = (phases @ coefficients).real
    return result


def resample_ground_motion(t, ag, dt_new: float, *, method: str = "linear") -> tuple[np.ndarray, np.ndarray]:
    """Resample a ground-acceleration record onto a uniform grid of step ``dt_new`` [s].

    The new grid is ``t[0] + k dt_new`` for every ``k`` that stays within
    ``[t[0], t[-1]]`` (no extrapolation).

    Methods
    -------
    ``"linear"`` (default)
        Linear interpolation between samples (what a Simulink signal source and an
        OpenSees ``Path`` time series do). Works on non-uniform ``t``. Reproduces a
        record that is linear in time exactly; when coarsening it does not filter, so
        content above the new Nyquist frequency aliases.
    ``"fourier"``
        Band-limited interpolation: the trigonometric interpolant of the uniformly
        sampled record, taken as one period of length ``n dt`` (records that start and
        end near zero suit it), evaluated on the new grid. When coarsening, frequencies
        above the new Nyquist frequency ``1/(2 dt_new)`` are removed first (ideal
        low-pass). Exact for a periodic signal band-limited below both Nyquist
        frequencies. Needs uniform ``t``.

    Warns
    -----
    UserWarning
        When ``dt_new`` > the record's step: coarsening loses the content above
        ``1/(2 dt_new)`` Hz and can change a structure's response a lot (the
        client-server vRTHS thesis reports > 87 % change for 0.02 → 0.03 s).

    Raises
    ------
    ParameterError
        For arrays of different length, non-finite values, ``t`` not strictly
        increasing, ``dt_new`` not > 0, an unknown method, or non-uniform ``t`` with
        ``method="fourier"``.
    """
    time = _as_record("t", t)
    acceleration = _as_record("ag", ag)
    if time.size != acceleration.size:
        raise ParameterError(f"t and ag must have the same length; got {time.size} and {acceleration.size}")
    steps = np.diff(time)
    if not np.all(steps > 0.0):
        raise ParameterError(f"t must increase strictly; it does not at index {int(np.flatnonzero(~(steps > 0))[0]) + 1}")
    step_new = _positive_finite("dt_new", dt_new, "s")
    if method not in ("linear", "fourier"):
        raise ParameterError(f"method must be 'linear' or 'fourier'; got {method!r}")

    dt_old = float(np.mean(steps))
    if step_new > float(np.max(steps)) * (1.0 + 1e-9):
        warnings.warn(
            f"resampling from dt = {dt_old:g} s to dt_new = {step_new:g} s coarsens the record: "
            f"content above {1.0 / (2.0 * step_new):g} Hz is "
            + ("aliased (linear interpolation does not filter)" if method == "linear" else "removed")
            + "; the structural response can change a lot.",
            UserWarning,
            stacklevel=2,
        )
    new_time = _new_time_grid(time, step_new)
    if method == "linear":
        return new_time, np.interp(new_time, time, acceleration)

    if np.max(np.abs(steps - dt_old)) > 1e-6 * dt_old:
        raise ParameterError("method='fourier' needs a uniformly sampled t (steps equal to within 1e-6 dt)")
    ratio = acceleration.size * dt_old / step_new
    points_per_period = round(ratio)
    if points_per_period > acceleration.size and abs(ratio - points_per_period) <= 1e-9 * ratio:
        # Refining onto a grid that divides the period: the same interpolant, by FFT.
        return new_time, _fourier_refine_by_fft(acceleration, points_per_period)[: new_time.size]
    nyquist = 0.5 / max(dt_old, step_new)
    return new_time, _fourier_interpolate(acceleration, dt_old, new_time - time[0], nyquist)


def _fourier_refine_by_fft(ag: np.ndarray, points_per_period: int) -> np.ndarray:
    """The trigonometric interpolant of ``ag`` (period n dt) at ``points_per_period`` > n
    uniform points of the period, by zero-padding the spectrum."""
    n = ag.size
    spectrum = np.fft.rfft(ag)
    if n % 2 == 0:
        spectrum[-1] *= 0.5  # the old Nyquist bin becomes an ordinary (cosine) bin
    padded = np.zeros(points_per_period // 2 + 1, dtype=complex)
    padded[: spectrum.size] = spectrum
    return np.fft.irfft(padded, points_per_period) * (points_per_period / n)
