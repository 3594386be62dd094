"""Plots of a hybrid run (matplotlib, Agg canvas — no display needed).

:func:`plot_lugre_frame` writes the figures a testing engineer looks at after a
``lugre-frame`` run: tracking, reference vs hybrid response, the specimen's hysteresis,
the identified parameters, and the run with updating next to the one without.
:func:`plot_test_record` draws what a test record holds (``rths-ident show --plots``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

LUGRE_LABELS = {"sigma0": r"$\hat\sigma_0/\sigma_0$", "Fc": r"$\hat F_C/F_C$", "sigma3": r"$\hat\sigma_3/\sigma_3$"}
BOUC_WEN_LABELS = {"k_e": r"$\hat k_e/k_e$", "f_y0": r"$\hat f_{y0}/f_{y0}$",
                   "stiffness_degradation": r"$\hat a/a$ (stiffness degr.)",
                   "strength_degradation": r"$\hat b/b$ (strength degr.)"}
VARIANT_STYLE = {"rls": ("tab:blue", "with updating (RLS)"), "ukf": ("tab:blue", "with updating (UKF)"), "none": ("tab:red", "no updating"),
                 "oracle": ("tab:green", "oracle (true model)")}


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def _strong_window(t, x, width=4.0):
    """A ``width``-second window around the peak of |x| (for zoomed panels)."""
    i = int(np.argmax(np.abs(x)))
    start = max(t[0], t[i] - width / 2)
    return start, min(t[-1], start + width)


def plot_lugre_frame(result: dict, out_dir) -> list[Path]:
    """The ``lugre-frame`` figures (the yield force ±F_C marked on the hysteresis)."""
    fc = result["params_true"]["Fc"]
    return plot_frame_test(result, out_dir, LUGRE_LABELS, force_lines={"$\\pm F_C$": fc},
                           specimen="first-storey column, modified LuGre")


def plot_bw_frame(result: dict, out_dir) -> list[Path]:
    """The ``bw-frame`` figures."""
    return plot_frame_test(result, out_dir, BOUC_WEN_LABELS, specimen="first-storey column, degrading Bouc–Wen")


def plot_frame_test(result: dict, out_dir, param_labels: dict, force_lines: dict | None = None,
                    specimen: str = "first-storey column") -> list[Path]:
    """Write the figures of a frame run into ``out_dir``; returns their paths.
    ``param_labels``: label per identified parameter; ``force_lines``: horizontal
    ±lines [N] on the hysteresis plot (label → value)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = result["_arrays"]
    t_slow, t_fast = arrays["time_slow"], arrays["time_fast"]
    ref = arrays["reference_floors"]
    logs = arrays["logs"]
    main = result["updating"]
    main_logs = logs[main]
    paths = []

    # 1. target vs measured interface displacement (fast rate), full record and zoom
    target = main_logs["fast"]["target"].ravel() * 1e3
    measured = main_logs["fast"]["measured"].ravel() * 1e3
    command = main_logs["fast"]["command"].ravel() * 1e3
    fig = Figure(figsize=(11, 6.5))
    ax1, ax2 = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 2, 3)
    ax3 = fig.add_subplot(2, 2, 4)
    ax1.plot(t_fast, target, lw=0.8, label="target $x_t$")
    ax1.plot(t_fast, measured, lw=0.8, ls="--", label="measured $x_m$")
    ax1.set(xlabel="time [s]", ylabel="floor-1 displacement [mm]",
            title=f"Actuator tracking — J2 = {result['J2_percent']:.3f} %, τ = {result['tau_ms']:.3f} ms "
                  f"({result['compensation']} compensation, {result['transition']} transition)")
    ax1.legend(loc="upper right")
    t0, t1 = _strong_window(t_fast, target, 1.0)
    sel = (t_fast >= t0) & (t_fast <= t1)
    ax2.plot(t_fast[sel], target[sel], label="target")
    ax2.plot(t_fast[sel], command[sel], lw=0.8, label="command $x_c$")
    ax2.plot(t_fast[sel], measured[sel], ls="--", label="measured")
    ax2.set(xlabel="time [s]", ylabel="[mm]", title="zoom at the peak")
    ax2.legend(fontsize=8)
    ax3.plot(t_fast, measured - target, lw=0.6, color="tab:purple")
    ax3.set(xlabel="time [s]", ylabel="$x_m - x_t$ [mm]", title="tracking error")
    paths.append(_save(fig, out / "tracking.png"))

    # 2. reference vs hybrid, all floors
    fig = Figure(figsize=(11, 7))
    n_floors = ref.shape[1]
    for i in range(n_floors):
        ax = fig.add_subplot(n_floors, 1, n_floors - i)
        ax.plot(t_slow, ref[:, i] * 1e3, color="k", lw=1.2, label="reference (monolithic, true model)")
        for mode, lg in logs.items():
            colour, label = VARIANT_STYLE[mode]
            j4 = result["variants"][mode]["J4_percent"][f"floor{i + 1}"]
            ax.plot(t_slow, lg["ns"]["displacement"][:, i] * 1e3, color=colour, lw=0.8, ls="--",
                    label=f"{label}: J4 = {j4:.2f} %")
        ax.set(ylabel=f"floor {i + 1} [mm]")
        ax.legend(fontsize=7, loc="upper right")
        if i == 0:
            ax.set_xlabel("time [s]")
    fig.suptitle(f"Reference vs hybrid response — {result['scenario']}, {result['record']}, "
                 f"floor mass {result['floor_mass_kg'] / 1e3:g} t")
    paths.append(_save(fig, out / "reference_vs_hybrid.png"))

    # 3. specimen hysteresis (measured)
    fig = Figure(figsize=(6.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(measured, main_logs["fast"]["force"].ravel() / 1e3, lw=0.6)
    for label, value in (force_lines or {}).items():
        ax.axhline(value / 1e3, color="grey", ls=":", lw=0.8)
        ax.axhline(-value / 1e3, color="grey", ls=":", lw=0.8, label=label)
    ax.set(xlabel="measured displacement [mm]", ylabel="measured force [kN]",
           title=f"Physical specimen ({specimen})")
    if force_lines:
        ax.legend()
    paths.append(_save(fig, out / "specimen_hysteresis.png"))

    # 4. parameter trajectories (normalised by the true values)
    fig = Figure(figsize=(10, 4.5))
    ax = fig.add_subplot(1, 1, 1)
    estimates = main_logs["update"]["estimate"]
    for i, name in enumerate(result["params_true"]):
        ax.plot(t_slow, estimates[:, i] / result["params_true"][name], label=param_labels.get(name, name))
    ax.axhspan(0.98, 1.02, color="grey", alpha=0.2, label="±2 %")
    applied = np.asarray(main_logs["update"]["applied"], dtype=bool)
    if applied.any():
        ax.axvline(t_slow[np.argmax(applied)], color="k", ls=":", lw=0.8, label="first update of the NS")
    ax.set(xlabel="time [s]", ylabel="estimate / true", title="Identified specimen parameters")
    ax.legend(loc="lower right")
    paths.append(_save(fig, out / "parameters.png"))

    # 5. updating vs no updating, side by side (roof)
    shown = [m for m in ("none", main) if m in logs] if main != "none" else [main]
    fig = Figure(figsize=(12, 4.5))
    for k, mode in enumerate(shown):
        ax = fig.add_subplot(1, len(shown), k + 1)
        colour, label = VARIANT_STYLE[mode]
        j4 = result["variants"][mode]["J4_percent"][f"floor{ref.shape[1]}"]
        ax.plot(t_slow, ref[:, -1] * 1e3, color="k", lw=1.2, label="reference")
        ax.plot(t_slow, logs[mode]["ns"]["displacement"][:, -1] * 1e3, color=colour, lw=0.9, ls="--",
                label="hybrid")
        ax.set(xlabel="time [s]", ylabel="roof displacement [mm]", title=f"{label}: roof J4 = {j4:.2f} %")
        ax.legend(loc="upper right")
    paths.append(_save(fig, out / "updating_vs_none.png"))
    return paths


def plot_rc_frame(result: dict, out_dir) -> list[Path]:
    """The ``rc-frame`` figures: tracking (the error as the main trace), each floor's
    hybrid response against the ideal partitioned test with their difference, and the
    specimen's measured hysteresis."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = result["_arrays"]
    t_slow, t_fast = arrays["time_slow"], arrays["time_fast"]
    ref = arrays["reference_floors"]
    logs = arrays["logs"][result["updating"]]
    ns = f"{result['ns']} NS ({result['ns_model']}, {result['integrator']})"
    paths = []

    target = logs["fast"]["target"].ravel() * 1e3
    measured = logs["fast"]["measured"].ravel() * 1e3
    fig = Figure(figsize=(11, 6.5))
    ax1, ax2 = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    ax1.plot(t_fast, measured - target, lw=0.6, color="tab:purple")
    ax1.set(xlabel="time [s]", ylabel="tracking error $x_m - x_t$ [mm]",
            title=f"Actuator tracking — J2 = {result['J2_percent']:.3f} %, τ = {result['tau_ms']:.3f} ms "
                  f"({result['compensation']}, {result['transition']}); τ < 0: measured leads target")
    t0, t1 = _strong_window(t_fast, target, 1.0)
    ax1.axvspan(t0, t1, color="grey", alpha=0.2, label="zoom below")
    ax1.legend(loc="upper right")
    sel = (t_fast >= t0) & (t_fast <= t1)
    ax2.plot(t_fast[sel], target[sel], label="target $x_t$")
    ax2.plot(t_fast[sel], measured[sel], ls="--", label="measured $x_m$")
    ax2.set(xlabel="time [s]", ylabel="interface displacement [mm]", title="zoom at the peak")
    ax2.legend(fontsize=8)
    paths.append(_save(fig, out / "tracking.png"))

    fig = Figure(figsize=(11, 8))
    for i in range(3):
        name = f"floor{i + 1}"
        hybrid = logs["ns"]["displacement"][:, i] * 1e3
        ax = fig.add_subplot(3, 2, 2 * (2 - i) + 1)
        ax.plot(t_slow, ref[:, i] * 1e3, color="k", lw=1.2, label="ideal partitioned test")
        ax.plot(t_slow, hybrid, color="tab:blue", lw=0.8, ls="--", label="hybrid")
        ax.set(ylabel=f"floor {i + 1} [mm]")
        ax = fig.add_subplot(3, 2, 2 * (2 - i) + 2)
        ax.plot(t_slow, hybrid - ref[:, i] * 1e3, color="tab:red", lw=0.7)
        ax.set(ylabel="hybrid − reference [mm]", title=f"J4 = {result['J4_percent'][name]:.3f} %")
        if i == 0:
            ax.set_xlabel("time [s]")
            fig.axes[-2].set_xlabel("time [s]")
    fig.axes[0].legend(fontsize=8, loc="upper right")
    fig.suptitle(f"rc-frame {result['case']} — {ns}, {result['record']} × {result['record_scale']:g}; "
                 "J4 = rms(hybrid − reference)/rms(reference)")
    paths.append(_save(fig, out / "reference_vs_hybrid.png"))

    fig = Figure(figsize=(6.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(measured, logs["fast"]["force"].ravel() / 1e3, lw=0.6)
    ax.set(xlabel="measured displacement [mm]", ylabel="measured force [kN]",
           title=f"Tested first-storey column (degrading Bouc–Wen {result['case']})")
    paths.append(_save(fig, out / "specimen_hysteresis.png"))
    return paths


def _mark_errors(ax, record) -> None:
    """A red line at every error event with a test time."""
    for i, event in enumerate(e for e in record.errors() if e.time is not None):
        ax.axvline(event.time, color="tab:red", lw=1.0, ls="-.", label="error" if i == 0 else None)


def _record_title(record) -> str:
    scenario = record.config.get("scenario", record.kind)
    state = "complete" if record.complete else "NOT COMPLETE"
    return f"{scenario} test record, {record.n_steps} slow steps ({state})"


def plot_test_record(record, out_dir) -> list[Path]:
    """The figures of a test record (:class:`rths_ident.records.TestRecord`), drawn from
    what it holds, whether or not the test ran to its end: tracking (fast rate), the
    numerical substructure's response, the specimen's measured hysteresis and the
    identified parameters (over their true values when the record's configuration
    has them). Error events are marked. Returns the paths written."""
    from rths_ident.metrics import j2_tracking_error  # noqa: PLC0415

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    t_slow = record.time
    fast = record.n_steps >= 1 and all(record.has(p) for p in ("fast/target", "fast/measured"))
    if fast:
        t_fast = record.fast_time()
        target = record.fast_series("fast/target") * 1e3
        measured = record.fast_series("fast/measured") * 1e3
        j2 = j2_tracking_error(target, measured) if target.size > 1 and np.ptp(target) > 0 else float("nan")
        fig = Figure(figsize=(11, 6.5))
        ax1, ax2 = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
        ax1.plot(t_fast, target, lw=0.8, label="target $x_t$")
        ax1.plot(t_fast, measured, lw=0.8, ls="--", label="measured $x_m$")
        _mark_errors(ax1, record)
        ax1.set(xlabel="time [s]", ylabel="interface displacement [mm]",
                title=f"{_record_title(record)} — tracking, J2 = {j2:.3f} %")
        ax1.legend(loc="upper right")
        ax2.plot(t_fast, measured - target, lw=0.6, color="tab:purple")
        _mark_errors(ax2, record)
        ax2.set(xlabel="time [s]", ylabel="$x_m - x_t$ [mm]", title="tracking error")
        paths.append(_save(fig, out / "tracking.png"))

    if record.n_steps >= 1 and record.has("ns/displacement"):
        response = np.atleast_2d(record.steps["ns/displacement"].T).T
        columns = record.units.get("ns/displacement")
        names = list(columns) if isinstance(columns, dict) else [f"DOF {i + 1}" for i in range(response.shape[1])]
        fig = Figure(figsize=(11, 2.2 + 1.6 * response.shape[1]))
        for i in range(response.shape[1]):
            ax = fig.add_subplot(response.shape[1], 1, response.shape[1] - i)
            ax.plot(t_slow, response[:, i] * 1e3, lw=0.8)
            _mark_errors(ax, record)
            ax.set(ylabel=f"{names[i]} [mm]")
            if i == 0:
                ax.set_xlabel("time [s]")
        fig.suptitle(f"{_record_title(record)} — numerical substructure response")
        paths.append(_save(fig, out / "response.png"))

    if fast and record.has("fast/force"):
        fig = Figure(figsize=(6.5, 5))
        ax = fig.add_subplot(1, 1, 1)
        ax.plot(measured, record.fast_series("fast/force") / 1e3, lw=0.6)
        ax.set(xlabel="measured displacement [mm]", ylabel="measured force [kN]",
               title=f"{record.config.get('scenario', record.kind)}: specimen as measured")
        paths.append(_save(fig, out / "specimen_hysteresis.png"))

    estimate_units = record.units.get("update/estimate")
    if record.n_steps >= 1 and record.has("update/estimate") and isinstance(estimate_units, dict):
        estimates = record.steps["update/estimate"]
        true = record.config.get("params_true") or {}
        labels = {**LUGRE_LABELS, **BOUC_WEN_LABELS}
        fig = Figure(figsize=(10, 4.5))
        ax = fig.add_subplot(1, 1, 1)
        normalised = all(true.get(name) for name in estimate_units)
        for i, (name, unit) in enumerate(estimate_units.items()):
            if normalised:
                ax.plot(t_slow, estimates[:, i] / true[name], label=labels.get(name, name))
            else:
                ax.plot(t_slow, estimates[:, i], label=f"{name} [{unit}]")
        if normalised:
            ax.axhspan(0.98, 1.02, color="grey", alpha=0.2, label="±2 %")
        applied = np.asarray(record.steps.get("update/applied", np.zeros(0)), dtype=bool)
        if applied.any():
            ax.axvline(t_slow[np.argmax(applied)], color="k", ls=":", lw=0.8, label="first update of the NS")
        _mark_errors(ax, record)
        ax.set(xlabel="time [s]", ylabel="estimate / true" if normalised else "estimate [SI]",
               title=f"{_record_title(record)} — identified parameters")
        ax.legend(loc="lower right")
        paths.append(_save(fig, out / "parameters.png"))
    return paths
