"""Synthetic dynamic tests made independently of the package's simulator: a random-phase
multisine as a closed-form function of time, and the Bouc–Wen oscillator

    m ÿ + c ẏ + α k y + (1 − α) k z = u(t),   ż = ẏ (A − |z|^n (γ + β sgn(ẏ z)))

integrated by ``scipy.integrate.solve_ivp`` (DOP853, tight tolerances) on the continuous
input, then sampled. None of the package's integration code is used."""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp


class Multisine:
    """Σ_j a cos(2π f_j t + φ_j) over the lines f_j = j/T in [f_min, f_max], random φ_j,
    scaled to ``rms``; period T = ``period_samples``·dt."""

    def __init__(self, period_samples: int, dt: float, f_min: float, f_max: float, rms: float, seed: int):
        rng = np.random.default_rng(seed)
        resolution = 1.0 / (period_samples * dt)
        lines = np.arange(max(1, int(np.ceil(f_min / resolution))), int(np.floor(f_max / resolution)) + 1)
        self.frequencies = lines * resolution
        self.phases = rng.uniform(0.0, 2.0 * np.pi, lines.size)
        self.amplitude = rms * np.sqrt(2.0 / lines.size)

    def __call__(self, t):
        t = np.asarray(t, dtype=float)
        if t.ndim == 0:
            return float(self.amplitude * np.cos(2.0 * np.pi * self.frequencies * t + self.phases).sum())
        flat = t.ravel()
        out = np.empty_like(flat)
        chunk = max(1, 2**22 // self.frequencies.size)
        for i in range(0, flat.size, chunk):
            part = flat[i:i + chunk, None]
            out[i:i + chunk] = np.cos(2.0 * np.pi * self.frequencies * part + self.phases).sum(axis=-1)
        return self.amplitude * out.reshape(t.shape)


def bouc_wen_oscillator(u, n_samples: int, dt: float, *, m, c, k, alpha, beta, gamma, n, A=1.0,
                        ground: bool = False):
    """y, ẏ, ÿ (ÿ relative) at t = 0, dt, … of the oscillator driven by u(t) (a force
    [N], or with ``ground`` a ground acceleration [m/s²]: p = −m u), from rest."""

    def rate(t, state):
        y, v, z = state
        p = -m * u(t) if ground else u(t)
        a = (p - c * v - alpha * k * y - (1.0 - alpha) * k * z) / m
        zdot = v * (A - abs(z) ** n * (gamma + beta * np.sign(v * z)))
        return [v, a, zdot]

    t = np.arange(n_samples) * dt
    solution = solve_ivp(rate, (0.0, t[-1]), [0.0, 0.0, 0.0], method="DOP853", t_eval=t, rtol=1e-10,
                         atol=1e-14, max_step=dt / 4)
    y, v, z = solution.y
    p = -m * u(t) if ground else u(t)
    a = (p - c * v - alpha * k * y - (1.0 - alpha) * k * z) / m
    return y, v, a


def linear_oscillator(u, n_samples: int, dt: float, *, m, c, k, oversample: int = 16):
    """y, ẏ, ÿ of m ÿ + c ẏ + k y = u(t) from rest by ``scipy.signal.lsim`` on a grid
    ``oversample`` times finer than the samples (linear interpolation of u there)."""
    import scipy.signal

    system = scipy.signal.StateSpace([[0.0, 1.0], [-k / m, -c / m]], [[0.0], [1.0 / m]], [[1.0, 0.0], [0.0, 1.0]],
                                     [[0.0], [0.0]])
    fine = np.arange((n_samples - 1) * oversample + 1) * dt / oversample
    p = u(fine)
    _, out, _ = scipy.signal.lsim(system, p, fine)
    y, v = out[::oversample, 0], out[::oversample, 1]
    return y, v, (p[::oversample] - c * v - k * y) / m
