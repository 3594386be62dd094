"""Figures of a maRTHS study (matplotlib, Agg canvas), after the paper's Figs. 23–25.

* ``marths_tracking.png`` — η_ns vs η_m (and η̂_m) per actuator, nominal plant (Fig. 23);
* ``marths_interface.png`` — ψ̂_m vs ψ_ns and the reference ψ at node 4, x and θ (Figs. 24–25);
* ``marths_indices.png`` — J2, J5, J7 per component over the plants (nominal first).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["plot_marths"]


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def _window(t, x, width=6.0):
    i = int(np.argmax(np.abs(x)))
    start = max(t[0], t[i] - width / 2)
    return (t >= start) & (t <= start + width)


def plot_marths(result: dict, out_dir) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = result["_arrays"]
    t = arrays["time"]
    nominal = arrays["histories"][0]
    title = f"{result['record']} ×{result['scale']:g}, {result['controller']}, nominal plant"
    paths = []

    fig = Figure(figsize=(10, 6))
    for i, name in enumerate(("actuator 1 (bottom)", "actuator 2 (top)")):
        target = nominal["eta_target"][:, i] * 1e3
        w = _window(t, target, width=2.0)  # short: the lag (J1) is visible
        ax = fig.add_subplot(2, 1, i + 1)
        ax.plot(t[w], target[w], "k", lw=1.2, label=r"target $\eta_{ns}$")
        ax.plot(t[w], nominal["eta_measured"][w, i] * 1e3, "tab:red", lw=0.8, label=r"measured $\eta_m$")
        ax.plot(t[w], nominal["eta_estimated"][w, i] * 1e3, "tab:blue", lw=0.8, ls="--", label=r"estimated $\hat\eta_m$")
        j2 = result["J_nominal"]["J2"][i]
        ax.set_title(f"{name}: J2 = {j2:.1f} %, J1 = {result['J_nominal']['J1'][i]:.1f} ms")
        ax.set_ylabel("stroke [mm]")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("time [s]")
    fig.suptitle("tracking — " + title)
    paths.append(_save(fig, out / "marths_tracking.png"))

    fig = Figure(figsize=(10, 6))
    scale = (1e3, 1e3)
    labels = ("x4 [mm]", "θ4 [mrad]")
    for i in range(2):
        ref = arrays["reference_interface"][:, i] * scale[i]
        w = _window(t, ref)
        ax = fig.add_subplot(2, 1, i + 1)
        ax.plot(t[w], ref[w], "k", lw=1.4, label=r"reference $\psi$")
        ax.plot(t[w], nominal["psi_target"][w, i] * scale[i], "tab:green", lw=0.9, label=r"target $\psi_{ns}$")
        ax.plot(t[w], nominal["psi_estimated"][w, i] * scale[i], "tab:red", lw=0.8, ls="--",
                label=r"estimated $\hat\psi_m$")
        ax.set_title(f"{labels[i].split()[0]}: J5 = {result['J_nominal']['J5'][i]:.1f} %, "
                     f"J7 = {result['J_nominal']['J7'][i]:.1f} %")
        ax.set_ylabel(labels[i])
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("time [s]")
    fig.suptitle("interface node 4 — " + title)
    paths.append(_save(fig, out / "marths_interface.png"))

    runs = result["J_runs"]
    fig = Figure(figsize=(11, 4.5))
    components = (("J2", ("act. 1", "act. 2")), ("J5", ("x4", "θ4")), ("J7", ("x4", "θ4")))
    for k, (name, comp) in enumerate(components):
        ax = fig.add_subplot(1, 3, k + 1)
        values = np.array([r[name] for r in runs])
        idx = np.arange(len(runs))
        for c in range(2):
            ax.bar(idx + (c - 0.5) * 0.4, values[:, c], width=0.4, label=comp[c],
                   color=("tab:blue", "tab:orange")[c])
        if len(runs) > 1:
            for c in range(2):
                ax.axhline(values[1:, c].mean(), color=("tab:blue", "tab:orange")[c], ls="--", lw=0.8)
        ax.set_xticks([0] + list(range(1, len(runs), max(1, len(runs) // 6))))
        ax.set_xticklabels(["nom."] + [str(i) for i in range(1, len(runs), max(1, len(runs) // 6))])
        ax.set_xlabel("plant")
        ax.set_ylabel(f"{name} [%]")
        ax.set_title(name)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"indices over the plants — {result['record']} ×{result['scale']:g}, {result['controller']} "
                 "(nom. = nominal plant; dashed: mean over the uncertain plants)")
    paths.append(_save(fig, out / "marths_indices.png"))
    return paths
