"""A linear oscillator fitted to the record's frequency response: the starting point of
the output-error fit and its unit scales.

The best linear approximation of the input–output relation is measured first:

* periodic record: the ratio of the output's to the input's discrete Fourier transform,
  averaged over the periods after the first, at the frequency lines the input excites
  (|U| above 1e-3 of its largest line);
* otherwise the H1 estimate S_uy/S_uu (Welch averages, ``scipy.signal.csd``/``welch``,
  segments of 1/8 of the record, at most 4096 samples) where the coherence exceeds 0.5.

It is turned into the displacement response H_d(ω) (velocity: /(iω), acceleration:
/(−ω²); with a ground acceleration the absolute acceleration minus 1 first) and the
oscillator 1/H_d = k − m ω² + i c ω (force input; a ground acceleration gives
−1/H_d = ω_n² − ω² + 2iζω_nω, per unit mass) is fitted by linear least squares on
(k − mω² + icω) H_d − 1 = 0 (Levy's method: the equation error weighted by |H_d|, which
keeps the resonance from being drowned by the far lines).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.signal

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.dynamic.record import DynamicRecord

__all__ = ["LinearOscillator", "fit_linear_oscillator", "frequency_response"]


@dataclasses.dataclass(frozen=True)
class LinearOscillator:
    """m [kg], c [N·s/m], k [N/m] of the linear fit (per unit mass when ``per_unit_mass``:
    a ground acceleration does not see the mass), and the band it used [Hz]."""

    m: float
    c: float
    k: float
    band: tuple[float, float]
    lines: int
    per_unit_mass: bool = False

    @property
    def natural_frequency(self) -> float:
        """ω_n = √(k/m) [rad/s]."""
        return float(np.sqrt(self.k / self.m))

    @property
    def damping_ratio(self) -> float:
        return float(self.c / (2.0 * np.sqrt(self.k * self.m)))


def frequency_response(record: DynamicRecord) -> tuple[np.ndarray, np.ndarray]:
    """(ω [rad/s], H(ω)) of output over input at the lines used (module docstring)."""
    u, y, dt = record.input, record.output, record.dt
    if record.period is not None and record.n_periods >= 2:
        p = record.period
        periods = slice(p, None)  # the first period runs in
        U = np.fft.rfft(u[periods].reshape(-1, p), axis=1).mean(axis=0)
        Y = np.fft.rfft(y[periods].reshape(-1, p), axis=1).mean(axis=0)
        lines = np.abs(U) > 1e-3 * np.abs(U).max()
        lines[0] = False
        frequency = np.fft.rfftfreq(p, dt)
        return 2.0 * np.pi * frequency[lines], Y[lines] / U[lines]
    segment = int(min(4096, max(64, u.size // 8)))
    frequency, s_uy = scipy.signal.csd(u, y, fs=1.0 / dt, nperseg=segment)
    _, s_uu = scipy.signal.welch(u, fs=1.0 / dt, nperseg=segment)
    _, coherence = scipy.signal.coherence(u, y, fs=1.0 / dt, nperseg=segment)
    lines = (coherence > 0.5) & (frequency > 0.0) & (s_uu > 1e-6 * s_uu.max())
    return 2.0 * np.pi * frequency[lines], s_uy[lines] / s_uu[lines]


def fit_linear_oscillator(record: DynamicRecord, mass: float | None = None) -> LinearOscillator:
    """The linear oscillator of the module docstring. ``mass`` [kg]: known mass (a ground
    acceleration needs it to give m, c, k in SI; otherwise they are per unit mass)."""
    omega, H = frequency_response(record)
    if omega.size < 3:
        raise ParameterError(f"{record.source}: the input excites fewer than 3 frequency lines with a coherent "
                             f"output; a dynamic fit needs a broadband input (a multisine, noise, a sweep)")
    s = 1j * omega
    if record.output_kind == "acceleration" and record.input_kind == "ground-acceleration":
        H = H - 1.0  # absolute → relative acceleration
    H_d = H / {"displacement": 1.0, "velocity": s, "acceleration": s * s}[record.output_kind]
    if record.input_kind == "ground-acceleration":
        H_d = -H_d  # −1/H_d = ω_n² − ω² + 2iζω_nω per unit mass
    # (k − m ω² + i c ω) H_d = 1: real and imaginary parts, linear in (k, m, c)
    columns = np.stack([H_d, -omega**2 * H_d, 1j * omega * H_d], axis=1)
    A = np.concatenate([columns.real, columns.imag])
    b = np.concatenate([np.ones_like(omega), np.zeros_like(omega)])
    (k, m, c), *_ = np.linalg.lstsq(A, b, rcond=None)
    if not (k > 0.0 and m > 0.0):
        raise ParameterError(f"{record.source}: the record's linear frequency response is not that of a "
                             f"single-degree-of-freedom oscillator (fitted k = {k:.3g}, m = {m:.3g}); check "
                             f"--input/--output and the columns")
    c = max(float(c), 0.0)
    band = (float(omega.min() / (2 * np.pi)), float(omega.max() / (2 * np.pi)))
    if record.input_kind == "ground-acceleration":
        scale = 1.0 if mass is None else float(mass) / float(m)
        return LinearOscillator(float(m) * scale, c * scale, float(k) * scale, band, int(omega.size),
                                per_unit_mass=mass is None)
    return LinearOscillator(float(m), c, float(k), band, int(omega.size))
