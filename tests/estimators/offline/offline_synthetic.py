"""Independent generators of synthetic test data (plain numpy, not the models' code)."""

import numpy as np


def growing_triangle_wave(n_samples: int, amplitude: float, cycles: int = 4) -> np.ndarray:
    """Piecewise-linear displacement: triangle cycles with amplitude growing linearly from
    amplitude/cycles to amplitude, starting at 0 and heading up first."""
    peaks = [0.0]
    for i in range(cycles):
        a = amplitude * (i + 1) / cycles
        peaks += [a, -a]
    peaks.append(0.0)
    knots = np.linspace(0.0, 1.0, len(peaks))
    return np.interp(np.linspace(0.0, 1.0, n_samples), knots, peaks)


def bouc_wen_rk4(x, k, alpha, beta, gamma, n, A=1.0, substeps=40):
    """Bouc–Wen force by classical RK4 of dz/dx = A − |z|^n (γ + β sgn(ẋ z)) in x.

    Within one sample the direction is sgn(Δx); RK4 with ``substeps`` sub-steps.
    """
    z = 0.0
    force = np.empty_like(x)
    previous = 0.0
    for i, xi in enumerate(x):
        h = (xi - previous) / substeps
        s = np.sign(xi - previous)

        def rate(z_value):
            return A - abs(z_value) ** n * (gamma + beta * np.sign(s * z_value))

        for _ in range(substeps):
            k1 = rate(z)
            k2 = rate(z + 0.5 * h * k1)
            k3 = rate(z + 0.5 * h * k2)
            k4 = rate(z + h * k3)
            z += h * (k1 + 2 * k2 + 2 * k3 + k4) / 6.0
        force[i] = alpha * k * xi + (1 - alpha) * k * z
        previous = xi
    return force


def lugre_closed_form(x, sigma0, Fc, sigma3):
    """Rate-independent modified LuGre (σ1 = σ2 = 0) on a piecewise-linear path:
    on a monotonic segment dz/dx = 1 − (σ0/F_C) s z has the exact solution
    z = s z* + (z0 − s z*) exp(−(σ0/F_C)|x − x0|), z* = F_C/σ0 (seed 001 Eq. 2.10)."""
    rate = sigma0 / Fc
    z, previous = 0.0, 0.0
    force = np.empty_like(x)
    for i, xi in enumerate(x):
        dx = xi - previous
        s = 1.0 if dx >= 0 else -1.0
        z = s / rate + (z - s / rate) * np.exp(-rate * abs(dx))
        force[i] = sigma0 * z + sigma3 * xi
        previous = xi
    return force


def bilinear_return_map(x, k, fy, b):
    """Kinematic-hardening bilinear force by the classical return map (plain numpy)."""
    force = np.empty_like(x)
    f, previous = 0.0, 0.0
    for i, xi in enumerate(x):
        trial = f + k * (xi - previous)
        upper = b * k * xi + (1 - b) * fy
        lower = b * k * xi - (1 - b) * fy
        f = min(max(trial, lower), upper)
        force[i] = f
        previous = xi
    return force


def degrading_bouc_wen_rk4(x, k, alpha, beta, gamma, n, delta_nu, delta_eta, substeps=40):
    """Baber–Noori degrading Bouc–Wen (no pinching, A = 1) by RK4 in x of the system
    dz/dx = (1 − ν(ε)|z|^n (γ + β sgn(ẋ z))) / η(ε),  dε/dx = (1 − α) k z,
    ν = 1 + δ_ν ε, η = 1 + δ_η ε; F = α k x + (1 − α) k z (plain numpy)."""
    z, energy, previous = 0.0, 0.0, 0.0
    force = np.empty_like(x)
    for i, xi in enumerate(x):
        h = (xi - previous) / substeps
        s = np.sign(xi - previous)

        def rate(state):
            zz, ee = state
            e = max(ee, 0.0)
            dz = (1.0 - (1 + delta_nu * e) * abs(zz) ** n * (gamma + beta * np.sign(s * zz))) / (1 + delta_eta * e)
            return np.array([dz, (1 - alpha) * k * zz])

        y = np.array([z, energy])
        for _ in range(substeps):
            k1 = rate(y)
            k2 = rate(y + 0.5 * h * k1)
            k3 = rate(y + 0.5 * h * k2)
            k4 = rate(y + h * k3)
            y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6.0
        z, energy = y
        force[i] = alpha * k * xi + (1 - alpha) * k * z
        previous = xi
    return force
