"""Hysteresis-loop figures of the models in ``rths_ident.models``.

Run from the repository root::

    python docs/scripts/plot_models.py

Writes ``docs/figures/models_<name>.png`` for lugre, bouc_wen, degrading_bouc_wen,
bilinear and linear. Where OpenSeesPy is installed, the Bouc–Wen and bilinear figures
overlay the OpenSees ``BoucWen`` / ``Steel01`` responses as markers.
"""

from __future__ import annotations

import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import rths_ident  # noqa: E402,F401  (enables float64)
from rths_ident.models import (  # noqa: E402
    BilinearKinematic,
    BoucWen,
    BoucWenParams,
    DegradingBoucWen,
    LinearElement,
    ModifiedLuGre,
)

FIGURES = pathlib.Path(__file__).resolve().parents[1] / "figures"


def growing_cycles(amplitude, cycles=4, points_per_cycle=400, frequency=0.8):
    """Sine of linearly growing amplitude; returns (t [s], x)."""
    n = cycles * points_per_cycle + 1
    t = np.linspace(0.0, cycles / frequency, n)
    return t, amplitude * (t / t[-1]) * np.sin(2 * np.pi * frequency * t)


def opensees_history(material, displacement):
    """Force of an OpenSees uniaxial material driven by setStrain (None if unavailable)."""
    try:
        import openseespy.opensees as ops
    except Exception:  # pragma: no cover - optional
        return None
    ops.wipe()
    ops.uniaxialMaterial(*material)
    ops.testUniaxialMaterial(material[1])
    out = []
    for x in displacement:
        ops.setStrain(float(x))
        out.append(ops.getStress())
    ops.wipe()
    return np.array(out)


def plot_lugre():
    t, x = growing_cycles(0.06)
    dt = t[1] - t[0]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for alpha in (0.0, 0.5, 0.96, 1.0):
        col = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4, alpha=alpha)
        ax.plot(100 * x, col.force_history(x, dt=dt) / 1e3, lw=1, label=f"α = {alpha}")
    ax.axhline(22.4, color="k", ls=":", lw=0.8)
    ax.axhline(-22.4, color="k", ls=":", lw=0.8)
    ax.set(
        xlabel="displacement x [cm]",
        ylabel="restoring force R [kN]",
        title="Modified LuGre (seed 001, k = 1.34e6 N/m, F_C = 22.4 kN, ζ=1 %, ξ=2 %)",
    )
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_bouc_wen():
    _, x = growing_cycles(0.04, points_per_cycle=1000)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for n in (1.0, 2.0, 10.0, 40.0):
        params = BoucWenParams.from_yield(k=1e6, alpha=0.05, yield_displacement=0.01, n=n)
        force = BoucWen(params).force_history(x)
        (line,) = ax.plot(100 * x, force / 1e3, lw=1, label=f"n = {n:g}")
        ref = opensees_history(
            ["BoucWen", 1, params.alpha, params.k, params.n, params.gamma, params.beta, params.A, 0.0, 0.0, 0.0],
            x,
        )
        if ref is not None:
            ax.plot(100 * x[::40], ref[::40] / 1e3, "o", ms=2.5, color=line.get_color(), mfc="none")
    ax.set(
        xlabel="displacement x [cm]",
        ylabel="force F [kN]",
        title="Bouc–Wen (k = 1e6 N/m, α = 0.05, z_u = 1 cm, β = γ); markers: OpenSees BoucWen",
    )
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_degrading_bouc_wen():
    t, x = growing_cycles(1.0, cycles=6, points_per_cycle=400, frequency=0.5)
    dt = t[1] - t[0]
    fig, axes = plt.subplots(2, 3, figsize=(11, 6.5))
    for ax, name in zip(axes.flat, DegradingBoucWen.PRESET_NAMES):
        spec = DegradingBoucWen.preset(name, substeps=4)
        force = spec.force_history(x, dt=dt)
        p = spec.params
        hysteretic = force - p.alpha_sv * p.k_e * x - p.k_h * x**3 - p.c_e * np.gradient(x, dt)
        ax.plot(x, force, lw=1, color="C0")
        ax.set_title(
            f"{name}: N={p.N:g}, η₁={p.eta1:g}, α={p.stiffness_degradation:g}, "
            f"β={p.strength_degradation:g}",
            fontsize=9,
        )
        ax.set_xlabel("x [in]")
        ax.set_ylabel("total restoring force F [kip]", color="C0")
        ax.grid(alpha=0.3)
        right = ax.twinx()
        right.plot(x, hysteretic, lw=1, color="C1")
        right.set_ylabel("hysteretic force r [kip]", color="C1")
    axes.flat[-1].axis("off")
    axes.flat[-1].text(
        -0.05, 0.5,
        "Seed 000 Case 4 specimens ([REPO] values, kip–in–s)\n"
        "k_e = 2.9 kip/in, x_y = 0.2 in, k_h = 5e-3 kip/in³\n"
        "blue (left axis): F = α_sv k_e x + r + k_h x³ + c_e ẋ\n"
        "orange (right axis): hysteretic force r\n"
        "input: 0.5 Hz sine growing to 1 in,\n"
        f"dt = {dt:.3g} s, 4 sub-steps per step",
        fontsize=8, va="center",
    )
    fig.suptitle("Degrading Bouc–Wen (Wang et al. 2001 / Mostaghel), seed 000 §4.7.2")
    fig.tight_layout()
    return fig


def plot_bilinear():
    rng = np.random.default_rng(3)
    _, base = growing_cycles(0.06, cycles=3, points_per_cycle=300)
    x = base + 0.003 * np.sin(np.linspace(0, 60, base.size)) * rng.uniform(0.5, 1.0)
    model = BilinearKinematic(k=1.34e6, fy=2.24e4, b=0.04)
    force = model.force_history(x)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(100 * x, force / 1e3, lw=1, label="BilinearKinematic")
    ref = opensees_history(["Steel01", 1, 2.24e4, 1.34e6, 0.04], x)
    if ref is not None:
        ax.plot(100 * x[::15], ref[::15] / 1e3, "o", ms=2.5, mfc="none", label="OpenSees Steel01")
    xs = np.array([x.min(), x.max()])
    for sign in (-1, 1):
        ax.plot(100 * xs, (0.04 * 1.34e6 * xs + sign * 0.96 * 2.24e4) / 1e3, "k:", lw=0.8)
    ax.set(
        xlabel="displacement x [cm]",
        ylabel="force F [kN]",
        title="Bilinear kinematic hardening (k = 1.34e6 N/m, f_y = 22.4 kN, b = 0.04)",
    )
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_linear():
    t = np.linspace(0.0, 2.0, 801)
    dt = t[1] - t[0]
    x = 0.01 * np.sin(2 * np.pi * 1.0 * t)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for c in (0.0, 2e4, 5e4):
        element = LinearElement(m=100.0, c=c, k=1e6)
        ax.plot(100 * x, element.force_history(x, dt=dt) / 1e3, lw=1, label=f"c = {c:g} N·s/m")
    ax.set(
        xlabel="displacement x [cm]",
        ylabel="restoring force c ẋ + k x [kN]",
        title="Linear element (k = 1e6 N/m, 1 Hz, 1 cm)",
    )
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def main():
    FIGURES.mkdir(parents=True, exist_ok=True)
    for name, make in (
        ("lugre", plot_lugre),
        ("bouc_wen", plot_bouc_wen),
        ("degrading_bouc_wen", plot_degrading_bouc_wen),
        ("bilinear", plot_bilinear),
        ("linear", plot_linear),
    ):
        fig = make()
        path = FIGURES / f"models_{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print("wrote", path)


if __name__ == "__main__":
    main()
