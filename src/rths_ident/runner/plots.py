"""Plots of a hybrid run (matplotlib, Agg canvas — no display needed).

:func:`plot_frame_test` writes the figures a testing engineer looks at after a
``lugre-frame`` or ``bw-frame`` run, :func:`plot_rc_frame` those of ``rc-frame``:

* ``tracking.png`` — the tracking error x_m − x_t as the main trace (the two
  displacements lie on top of each other at this scale), the zoom window marked, and
  the zoom with target, command and measured; what a negative τ means;
* ``reference_vs_hybrid.png`` — per floor, the hybrid response minus the reference for
  each variant, with J4 defined on the figure;
* ``specimen_hysteresis.png`` — the measured loop with the identified model's loop
  (the model simulated along the measured displacement) and the initial guess's;
* ``parameters.png`` — the identified parameters over the first seconds and the whole
  record;
* ``updating_vs_none.png`` — the roof response with and without updating on shared
  y-limits, and their errors.

:func:`plot_test_record` draws what a test record holds (``rths-ident show --plots``).

Units: displacements in mm, forces in kN, time in s (the results are SI).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rths_ident.figure_views import label_where_no_data, line_kwargs, overlay
from rths_ident.runner.report import mass_text

LUGRE_LABELS = {"sigma0": r"$\hat\sigma_0/\sigma_0$", "Fc": r"$\hat F_C/F_C$", "sigma3": r"$\hat\sigma_3/\sigma_3$"}
BOUC_WEN_LABELS = {"k_e": r"$\hat k_e/k_e$", "f_y0": r"$\hat f_{y0}/f_{y0}$",
                   "stiffness_degradation": r"$\hat a/a$ (stiffness degr.)",
                   "strength_degradation": r"$\hat b/b$ (strength degr.)",
                   "k": r"$\hat k/k$", "alpha": r"$\hat\alpha/\alpha$", "beta": r"$\hat\beta/\beta$",
                   "gamma": r"$\hat\gamma/\gamma$"}
VARIANT_STYLE = {"rls": ("tab:blue", "with updating (RLS)"), "ukf": ("tab:blue", "with updating (UKF)"),
                 "none": ("tab:red", "no updating"), "oracle": ("tab:green", "oracle (true model)")}
#: J4 as computed (rths_ident.metrics.j4_global_error, seed 000 Table 4.1), for the figures
J4_DEFINITION = r"J4 = $\sqrt{\Sigma(x_{hybrid} - x_{ref})^2 / \Sigma x_{ref}^2}$ × 100 %"
#: what τ's sign means (rths_ident.metrics.fei_delay): docs/hybrid/lugre_frame.md explains it
TAU_NOTE = ("τ: delay of the measured displacement behind the target, from the phase of their "
            "frequency response (FEI); τ < 0 means the measured displacement leads the target, "
            "i.e. the compensation over-predicts the actuator's lag.")
#: the numerical substructure, spelt out once per figure
NS_LONG = "numerical substructure (the simulated columns)"


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=110)
    return path


def _strong_window(t, x, width=4.0):
    """A ``width``-second window around the peak of |x| (for zoomed panels)."""
    i = int(np.argmax(np.abs(x)))
    start = max(t[0], t[i] - width / 2)
    return start, min(t[-1], start + width)


def _rms_percent(error, reference) -> float:
    return float(100 * np.sqrt(np.mean(np.square(error)) / np.mean(np.square(reference))))


def plot_lugre_frame(result: dict, out_dir) -> list[Path]:
    """The ``lugre-frame`` figures (the yield force ±F_C marked on the hysteresis)."""
    fc = result["params_true"]["Fc"]
    return plot_frame_test(result, out_dir, LUGRE_LABELS, force_lines={"$\\pm F_C$ (true)": fc},
                           specimen="first-storey column, modified LuGre")


def plot_bw_frame(result: dict, out_dir) -> list[Path]:
    """The ``bw-frame`` figures."""
    return plot_frame_test(result, out_dir, BOUC_WEN_LABELS, specimen="first-storey column, degrading Bouc–Wen")


def plot_tracking(result: dict, logs: dict, t_fast, path: Path) -> Path:
    """Tracking: the error x_m − x_t over the record (main trace, zoom window shaded),
    the zoom at the peak with target, command and measured, and the τ note."""
    target = logs["fast"]["target"].ravel() * 1e3
    measured = logs["fast"]["measured"].ravel() * 1e3
    command = logs["fast"]["command"].ravel() * 1e3
    fig = Figure(figsize=(11, 7), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=(1.1, 1))
    ax1 = fig.add_subplot(grid[0, :])
    ax2, ax3 = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
    t0, t1 = _strong_window(t_fast, target, 1.0)
    ax1.plot(t_fast, measured - target, lw=0.6, color="tab:purple", label="tracking error $x_m - x_t$")
    ax1.axvspan(t0, t1, color="tab:orange", alpha=0.25, label="zoom window (below)")
    ax1.set(xlabel="time [s]", ylabel="$x_m - x_t$ [mm]", xlim=(t_fast[0], t_fast[-1]),
            title=f"Actuator tracking error — J2 = {result['J2_percent']:.3f} %, τ = {result['tau_ms']:.3f} ms, "
                  f"peak |x_t| = {np.max(np.abs(target)):.1f} mm\n"
                  f"({result['compensation']} compensation, {result['transition']} transition)")
    ax1.legend(loc="upper right", fontsize=8)
    sel = (t_fast >= t0) & (t_fast <= t1)
    ax2.plot(t_fast[sel], target[sel], lw=1.4, label="target $x_t$")
    ax2.plot(t_fast[sel], command[sel], lw=0.8, label="command $x_c$ (compensated)")
    ax2.plot(t_fast[sel], measured[sel], lw=1.0, ls="--", label="measured $x_m$")
    ax2.set(xlabel="time [s]", ylabel="interface displacement [mm]", title="zoom at the peak")
    ax3.plot(t_fast[sel], (measured - target)[sel], lw=0.8, color="tab:purple", label="$x_m - x_t$")
    ax3.plot(t_fast[sel], (command - target)[sel], lw=0.8, color="tab:orange", label="$x_c - x_t$")
    ax3.axhline(0.0, color="k", lw=0.5)
    ax3.set(xlabel="time [s]", ylabel="difference from the target [mm]", title="zoom: errors")
    # a command far outside the target's range (e.g. spikes at slow-step boundaries) would
    # flatten the panels: scale them to the target and measured, and state the command's peak
    for ax, shown, command_part in ((ax2, (target[sel], measured[sel]), command[sel]),
                                    (ax3, ((measured - target)[sel],), (command - target)[sel])):
        typical = np.percentile(command_part, (5, 95))  # the command without its spikes
        low, high = min(min(map(np.min, shown)), typical[0]), max(max(map(np.max, shown)), typical[1])
        pad = 0.25 * max(high - low, 1e-6)
        if np.min(command_part) < low - 2 * pad or np.max(command_part) > high + 2 * pad:
            ax.set_ylim(low - 2 * pad, high + 2 * pad)
            ax.text(0.99, 0.02, f"command off scale: {np.min(command_part):.3g} … {np.max(command_part):.3g} mm",
                    transform=ax.transAxes, ha="right", va="bottom", fontsize=7.5, color="tab:orange",
                    bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none"})
    ax2.legend(fontsize=8, loc="upper left")
    ax3.legend(fontsize=8, loc="upper left")
    fig.text(0.01, 0.0, TAU_NOTE, fontsize=7.5, va="bottom", wrap=True)
    fig.get_layout_engine().set(rect=(0, 0.035, 1, 0.965))
    return _save(fig, path)


def plot_frame_test(result: dict, out_dir, param_labels: dict, force_lines: dict | None = None,
                    specimen: str = "first-storey column") -> list[Path]:
    """Write the figures of a frame run into ``out_dir`` (module doc); returns their
    paths. ``param_labels``: label per identified parameter; ``force_lines``:
    horizontal ±lines [N] on the hysteresis plot (label → value)."""
    out = Path(out_dir)
    out.mkdir(exist_ok=True)  # one level: the caller names an existing parent
    arrays = result["_arrays"]
    t_fast = arrays["time_fast"]
    logs = arrays["logs"]
    main = result["updating"]
    paths = [plot_tracking(result, logs[main], t_fast, out / "tracking.png"),
             _plot_floor_errors(result, out / "reference_vs_hybrid.png"),
             _plot_hysteresis(result, force_lines, specimen, out / "specimen_hysteresis.png"),
             _plot_parameters(result, param_labels, out / "parameters.png"),
             _plot_updating_vs_none(result, out / "updating_vs_none.png")]
    return paths


def plot_sdof_test(result: dict, out_dir) -> list[Path]:
    """The ``sdof`` test's figures: the actuator's tracking, and the prototype's
    displacement against the reference's (an ideal interface)."""
    out = Path(out_dir)
    out.mkdir(exist_ok=True)  # one level: the caller names an existing parent
    arrays = result["_arrays"]
    logs = arrays["logs"][result["updating"]]
    return [plot_tracking(result, logs, arrays["time_fast"], out / "tracking.png"),
            _plot_floor_errors(result, out / "reference_vs_hybrid.png")]


def _plot_floor_errors(result: dict, path: Path) -> Path:
    """Per floor (roof at the top): hybrid − reference of the run without updating
    (left, its own scale) and of the updated and oracle runs (right)."""
    arrays = result["_arrays"]
    t_slow, ref, logs = arrays["time_slow"], arrays["reference_floors"], arrays["logs"]
    n_floors = ref.shape[1]
    names = _response_names(result)
    left = [m for m in logs if m == "none"]
    right = [m for m in logs if m != "none"]
    columns = [c for c in (left, right) if c]
    fig = Figure(figsize=(12, 2.3 * n_floors + 1.2), layout="constrained")
    axes = fig.subplots(n_floors, len(columns), sharex=True, squeeze=False)
    handles = {}
    for i in range(n_floors):
        row = n_floors - 1 - i  # roof on top
        name = names[i]
        for c, modes in enumerate(columns):
            ax = axes[row, c]
            j4s = []
            for mode in modes:
                colour, label = VARIANT_STYLE[mode]
                error = (logs[mode]["ns"]["displacement"][:, i] - ref[:, i]) * 1e3
                (line,) = ax.plot(t_slow, error, color=colour, lw=0.8)
                handles[label] = line
                j4s.append(f"{label} {result['variants'][mode]['J4_percent'][name]:.2f} %")
            ax.set_title(f"{_response_label(name)} — J4: " + ", ".join(j4s), fontsize=9)
            ax.axhline(0.0, color="k", lw=0.5)
            ax.set_ylabel(f"{_response_label(name)}: hybrid − ref. [mm]")
            if row == n_floors - 1:
                ax.set_xlabel("time [s]")
    peak = float(np.max(np.abs(ref))) * 1e3
    fig.legend(list(handles.values()), list(handles.keys()), loc="outside lower center", ncol=len(handles),
               fontsize=9)
    mass = f", floor mass {mass_text(result['floor_mass_kg'])}" if "floor_mass_kg" in result else ""
    fig.suptitle(f"Hybrid response minus the reference (the true model; peak |x| = {peak:.0f} mm) — "
                 f"{result['scenario']}, {result['record']}{mass}\n"
                 f"{J4_DEFINITION} over the record, per floor"
                 + ("; left: no updating, right: the other runs on their own (smaller) scale" if len(columns) == 2
                    else ""), fontsize=10)
    return _save(fig, path)


def _plot_hysteresis(result: dict, force_lines: dict | None, specimen: str, path: Path) -> Path:
    """The measured loop (wide, light, underneath) with the loops of the identified
    (dashed, on top) and initial models simulated along the measured displacement (when
    the run has an identified column model), and the identified model's force error as its
    own trace below (:mod:`rths_ident.figure_views`)."""
    arrays = result["_arrays"]
    logs = arrays["logs"][result["updating"]]
    measured_x = logs["fast"]["measured"].ravel()
    measured_f = logs["fast"]["force"].ravel()
    scale, unit = (1e-3, "kN") if np.max(np.abs(measured_f), initial=0.0) >= 1e3 else (1.0, "N")
    column_force = arrays.get("column_force")
    identified_run = column_force is not None and bool(result["params_true"])
    fig = Figure(figsize=(7.5, 7.4 if identified_run else 5.8), layout="constrained")
    if identified_run:
        ax, ax_error = fig.subplots(2, 1, height_ratios=(2.6, 1))
    else:
        ax, ax_error = fig.add_subplot(1, 1, 1), None
    if identified_run:
        final = np.array([result["params_final"][n] for n in result["params_true"]])
        initial = np.array([result["params_initial"][n] for n in result["params_true"]])
        identified = column_force(final, measured_x)
        guess = column_force(initial, measured_x)
        error = _rms_percent(identified - measured_f, measured_f)
        who = "" if result["updating"] in ("rls", "ukf") else ", watching only (not pushed into the NS)"
        ax.plot(measured_x * 1e3, guess * scale, label=f"initial model of the {NS_LONG}", **line_kwargs("initial"))
        overlay(ax, None, measured_x * 1e3, measured_f * scale, identified * scale, under_label="measured",
                over_label=f"identified model at the end{who}")
        t_fast = arrays["time_fast"][:measured_f.size]
        ax_error.plot(t_fast, (measured_f - identified) * scale, **line_kwargs("error"))
        ax_error.axhline(0.0, color="k", lw=0.5)
        ax_error.set(xlabel="time [s]", ylabel=f"measured − identified [{unit}]", xlim=(t_fast[0], t_fast[-1]))
        label_where_no_data(ax_error, f"rms {error:.2f} % of rms measured force")
    else:
        ax.plot(measured_x * 1e3, measured_f * scale, label="measured", **line_kwargs("measured"))
    for label, value in (force_lines or {}).items():
        ax.axhline(value * scale, color="k", ls=":", lw=0.6)
        ax.axhline(-value * scale, color="k", ls=":", lw=0.6, label=label)
    ax.set(xlabel="measured displacement $x_m$ [mm]", ylabel=f"force [{unit}]",
           title=f"Physical specimen ({specimen})")
    ax.legend(fontsize=8, loc="best")
    fig.text(0.01, 0.0, "models simulated along the measured displacement (velocity by finite differences)",
             fontsize=7.5, va="bottom")
    fig.get_layout_engine().set(rect=(0, 0.03, 1, 0.97))
    return _save(fig, path)


def _plot_parameters(result: dict, param_labels: dict, path: Path) -> Path:
    """Estimate / true value over the first seconds (left) and the whole record (right)."""
    arrays = result["_arrays"]
    t_slow = arrays["time_slow"]
    logs = arrays["logs"][result["updating"]]
    estimates = np.asarray(logs["update"]["estimate"])
    names = list(result["params_true"])
    converged = [t for t in result["convergence_time_s"].values() if t is not None]
    early = min(float(t_slow[-1]), max(3.0, 1.5 * max(converged, default=2.0)))
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True, width_ratios=(1, 1.3))
    applied = np.asarray(logs["update"]["applied"], dtype=bool)
    for ax, end in zip(axes, (early, float(t_slow[-1]))):
        sel = t_slow <= end + 1e-9
        for i, name in enumerate(names):
            ax.plot(t_slow[sel], estimates[sel, i] / result["params_true"][name], lw=1.2,
                    label=param_labels.get(name, name))
        ax.axhspan(0.98, 1.02, color="grey", alpha=0.2, label="±2 % of the true value")
        if applied.any():
            ax.axvline(t_slow[np.argmax(applied)], color="k", ls=":", lw=0.8,
                       label=f"first update of the {NS_LONG}")
        ax.set(xlabel="time [s]", xlim=(t_slow[0], end))
    axes[0].set(ylabel="estimate / true value [–]", title=f"first {early:g} s")
    axes[1].set(title=f"whole record ({t_slow[-1]:.1f} s)")
    handles, labels = axes[1].get_legend_handles_labels()  # below the panels: never over a curve
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), fontsize=8)
    mode = result["updating"]
    pushed = (f"pushed into the {NS_LONG} every slow step once the guards pass" if mode in ("rls", "ukf")
              else f"watched only: the {NS_LONG} keeps its {'true' if mode == 'oracle' else 'initial'} values")
    fig.suptitle(f"Identified specimen parameters, {VARIANT_STYLE[mode][1]}: {pushed}", fontsize=10)
    return _save(fig, path)


def _response_names(result: dict) -> list:
    """The response DOFs' names, in the reference's column order (floor1, … or a
    structure file's dof1, …, node4-dof1, …)."""
    return list(next(iter(result["variants"].values()))["J4_percent"])


def _response_label(name: str) -> str:
    """``floor2`` → ``floor 2``; other names as they are."""
    return f"floor {name[5:]}" if name.startswith("floor") and name[5:].isdigit() else name


def _plot_updating_vs_none(result: dict, path: Path) -> Path:
    """Roof response of the run without updating and of the configured run, over the
    reference (shared y-limits), and their errors below (shared y-limits)."""
    arrays = result["_arrays"]
    t_slow, ref, logs = arrays["time_slow"], arrays["reference_floors"], arrays["logs"]
    main = result["updating"]
    shown = [m for m in ("none", main) if m in logs] if main != "none" else [main]
    roof = _response_names(result)[-1]
    fig = Figure(figsize=(12, 6.5), layout="constrained")
    axes = fig.subplots(2, len(shown), sharex=True, sharey="row", squeeze=False, height_ratios=(1.6, 1))
    for k, mode in enumerate(shown):
        colour, label = VARIANT_STYLE[mode]
        j4 = result["variants"][mode]["J4_percent"][roof]
        hybrid = logs[mode]["ns"]["displacement"][:, -1] * 1e3
        top, bottom = axes[0, k], axes[1, k]
        top.plot(t_slow, hybrid, color=colour, lw=2.4, alpha=0.55, label=f"hybrid, {label}")
        top.plot(t_slow, ref[:, -1] * 1e3, color="k", lw=0.8, label="reference (true model)")
        top.set(ylabel="roof displacement [mm]", title=f"{label}: roof J4 = {j4:.2f} %")
        top.legend(loc="upper right", fontsize=8)
        bottom.plot(t_slow, hybrid - ref[:, -1] * 1e3, color=colour, lw=0.8)
        bottom.axhline(0.0, color="k", lw=0.5)
        bottom.set(xlabel="time [s]", ylabel="hybrid − reference [mm]")
    what = ("the roof with and without model updating (same scales left and right; " if len(shown) == 2
            else f"the roof, {VARIANT_STYLE[main][1]} (")
    fig.suptitle(f"{result['scenario']}, {result['record']}: {what}{J4_DEFINITION})", fontsize=10)
    return _save(fig, path)


def plot_rc_frame(result: dict, out_dir) -> list[Path]:
    """The ``rc-frame`` figures: tracking (:func:`plot_tracking`), each floor's hybrid
    response against the ideal partitioned test with their difference, and the
    specimen's measured hysteresis."""
    out = Path(out_dir)
    out.mkdir(exist_ok=True)  # one level: the caller names an existing parent
    arrays = result["_arrays"]
    t_slow, t_fast = arrays["time_slow"], arrays["time_fast"]
    ref = arrays["reference_floors"]
    logs = arrays["logs"][result["updating"]]
    ns = f"{result['ns']} numerical substructure ({result['ns_model']}, {result['integrator']})"
    paths = [plot_tracking(result, logs, t_fast, out / "tracking.png")]

    fig = Figure(figsize=(11, 8), layout="constrained")
    axes = fig.subplots(3, 2, sharex=True)
    for i in range(3):
        name = f"floor{i + 1}"
        hybrid = logs["ns"]["displacement"][:, i] * 1e3
        left, right = axes[2 - i]
        overlay(left, right, t_slow, hybrid, ref[:, i] * 1e3, under_role="hybrid", over_role="reference",
                under_label="hybrid", over_label="ideal partitioned test (reference)")
        left.set(ylabel=f"floor {i + 1} [mm]")
        right.set(ylabel="hybrid − reference [mm]")
        label_where_no_data(right, f"J4 = {result['J4_percent'][name]:.3f} %")
    axes[2, 0].set_xlabel("time [s]")
    axes[2, 1].set_xlabel("time [s]")
    axes[0, 0].legend(fontsize=8, loc="best")
    fig.suptitle(f"rc-frame {result['case']} — {ns}, {result['record']} × {result['record_scale']:g}\n"
                 f"{J4_DEFINITION}", fontsize=10)
    paths.append(_save(fig, out / "reference_vs_hybrid.png"))

    fig = Figure(figsize=(6.5, 5), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(logs["fast"]["measured"].ravel() * 1e3, logs["fast"]["force"].ravel() / 1e3, **line_kwargs("measured"))
    ax.set(xlabel="measured displacement $x_m$ [mm]", ylabel="measured force [kN]",
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
