"""A dynamic test prepared for output-error identification: an input (a force on the
mass, or a ground acceleration) and a measured output (displacement, velocity or
acceleration of the mass), uniformly sampled, SI.

The restoring force of the specimen is not measured in such a test (a shaking table,
an actuator driving a mass): it is what the identified model supplies. A periodic
record (a multisine repeated over periods) is recognised from its input or declared;
its first period is then run in and not scored, the field's convention for periodic
steady state.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["DynamicRecord", "INPUT_KINDS", "OUTPUT_KINDS", "MIN_SAMPLES", "detect_period"]

#: what drives the single-degree-of-freedom oscillator, and its SI unit
INPUT_KINDS = {"force": "N", "ground-acceleration": "m/s2"}
#: what is measured on the mass, and its SI unit (with a ground acceleration: displacement
#: and velocity relative to the ground, acceleration absolute, as an accelerometer reads)
OUTPUT_KINDS = {"displacement": "m", "velocity": "m/s", "acceleration": "m/s2"}

#: the fewest samples an output-error fit accepts (one period of the slowest mode of a
#: record sampled at ≥ 8 points per period of its fastest content, several times over)
MIN_SAMPLES = 64


def detect_period(signal: np.ndarray, max_periods: int = 64, tolerance: float = 1e-9) -> int | None:
    """The shortest period P (samples) with which ``signal`` repeats exactly — the record
    is a whole number k ≥ 2 of periods and max|u[P:] − u[:-P]| ≤ ``tolerance``·max|u| —
    or None. Tries k = ``max_periods`` … 2 (shortest period first)."""
    u = np.asarray(signal, dtype=float)
    scale = float(np.max(np.abs(u))) if u.size else 0.0
    if scale == 0.0:
        return None
    for k in range(max_periods, 1, -1):
        if u.size % k:
            continue
        period = u.size // k
        if period >= 2 and float(np.max(np.abs(u[period:] - u[:-period]))) <= tolerance * scale:
            return period
    return None


@dataclasses.dataclass(frozen=True)
class DynamicRecord:
    """Input and output samples of one dynamic test, SI, uniformly sampled.

    input : the force on the mass [N] or the ground acceleration [m/s²] (``input_kind``).
    output : the measured displacement [m], velocity [m/s] or acceleration [m/s²]
        (``output_kind``).
    dt : sample interval [s].
    period : samples per period of a periodic record (None: not periodic).
    source : where the record came from.
    """

    input: np.ndarray
    output: np.ndarray
    dt: float
    input_kind: str
    output_kind: str
    period: int | None = None
    source: str = "arrays"

    @classmethod
    def from_arrays(cls, input, output, *, dt: float | None = None, time=None, input_kind: str = "force",
                    output_kind: str = "displacement", period: int | None | str = "detect",
                    source: str = "arrays") -> "DynamicRecord":
        """Check and wrap SI arrays. Give ``dt`` [s] or a uniformly sampled ``time`` [s].
        ``period``: samples per period, None (not periodic) or ``"detect"`` (from the
        input: :func:`detect_period`)."""
        if input_kind not in INPUT_KINDS:
            raise ParameterError(f"input must be one of {', '.join(INPUT_KINDS)}; got {input_kind!r}")
        if output_kind not in OUTPUT_KINDS:
            raise ParameterError(f"output must be one of {', '.join(OUTPUT_KINDS)}; got {output_kind!r}")
        u = np.asarray(input, dtype=float)
        y = np.asarray(output, dtype=float)
        if u.ndim != 1 or y.ndim != 1 or u.shape != y.shape:
            raise ParameterError(f"input and output must be 1-D arrays of equal length; got shapes {u.shape} and {y.shape}")
        if u.size < MIN_SAMPLES:
            raise ParameterError(f"a dynamic fit needs at least {MIN_SAMPLES} samples; got {u.size}")
        for name, arr in (("input", u), ("output", y)):
            if not np.all(np.isfinite(arr)):
                raise ParameterError(f"{name} must be finite (found NaN or inf at sample {int(np.argmin(np.isfinite(arr)))})")
            if np.ptp(arr) == 0.0:
                raise ParameterError(f"{name} is constant: nothing to identify")
        dt = _sample_interval(dt, time, u.size)
        if period == "detect":
            period = detect_period(u)
        elif period is not None:
            if int(period) != period or not 2 <= period <= u.size // 2:
                raise ParameterError(f"period must be a whole number of samples in [2, {u.size // 2}] "
                                     f"(at least two periods in the record); got {period!r}")
            period = int(period)
            if u.size % period:
                raise ParameterError(f"period = {period} samples does not divide the record's {u.size} samples "
                                     f"into whole periods")
        return cls(input=u, output=y, dt=dt, input_kind=input_kind, output_kind=output_kind, period=period,
                   source=source)

    @property
    def n_samples(self) -> int:
        return int(self.input.size)

    @property
    def n_periods(self) -> int | None:
        return None if self.period is None else self.n_samples // self.period

    @property
    def time(self) -> np.ndarray:
        """Sample instants [s] from 0."""
        return np.arange(self.n_samples) * self.dt

    @property
    def input_unit(self) -> str:
        return INPUT_KINDS[self.input_kind]

    @property
    def output_unit(self) -> str:
        return OUTPUT_KINDS[self.output_kind]


def _sample_interval(dt, time, n: int) -> float:
    if (dt is None) == (time is None):
        raise ParameterError("give the sample interval dt [s] or the time [s] of every sample (one of them)")
    if time is not None:
        t = np.asarray(time, dtype=float)
        if t.shape != (n,):
            raise ParameterError(f"time must have one value per sample ({n}); got shape {t.shape}")
        steps = np.diff(t)
        if not np.all(np.isfinite(t)) or np.any(steps <= 0.0):
            raise ParameterError("time must be finite and strictly increasing [s]")
        dt = float((t[-1] - t[0]) / (n - 1))
        worst = float(np.max(np.abs(steps - dt)))
        if worst > 1e-6 * dt:
            raise ParameterError(f"a dynamic fit needs uniform sampling: the time step varies by {worst:.3g} s "
                                 f"around its mean {dt:.6g} s (resample the record first)")
    if not (np.isfinite(dt) and dt > 0.0):
        raise ParameterError(f"the sample interval dt must be a positive time [s]; got {dt!r}")
    return float(dt)
