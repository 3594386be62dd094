"""Figures of a maRTHS study (matplotlib, Agg canvas), after the paper's Figs. 23–25.

* ``marths_tracking.png`` — η_ns vs η_m (and η̂_m) per actuator, nominal plant (Fig. 23);
* ``marths_interface.png`` — ψ̂_m vs ψ_ns and the reference ψ at node 4, x and θ (Figs. 24–25);
* ``marths_indices.png`` — J2, J5, J7 per component over the plants (nominal first);
* ``marths_records.png`` — a study over several records: J2, J5, J7 per record (the
  others then carry the record in their names, ``marths_tracking-kobe.png``).

:func:`plot_marths` draws them from a study's result, :func:`plot_study_record` from its
test record (``rths-ident show RECORD --plots DIR``): the runs it holds, finished or not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rths_ident.figure_views import line_kwargs, overlay

__all__ = ["plot_marths", "plot_records", "plot_study_record", "tracking_figure", "interface_figure",
           "indices_figure", "records_figure"]


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def _window(t, x, width=6.0):
    i = int(np.argmax(np.abs(x)))
    start = max(t[0], t[i] - width / 2)
    return (t >= start) & (t <= start + width)


def plot_marths(result: dict, out_dir, suffix: str = "") -> list[Path]:
    """The three figures of a study's result (:func:`~.study.run_study`'s);
    ``suffix`` ends their names (``"-kobe"``: ``marths_tracking-kobe.png``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = result["_arrays"]
    title = f"{result['record']} ×{result['scale']:g}, {result['controller']}, nominal plant"
    nominal = arrays["histories"][0]
    return [
        _save(tracking_figure(arrays["time"], nominal, result["J_nominal"], title),
              out / f"marths_tracking{suffix}.png"),
        _save(interface_figure(arrays["time"], arrays["reference_interface"], nominal, result["J_nominal"], title),
              out / f"marths_interface{suffix}.png"),
        _save(indices_figure(result["J_runs"], list(range(len(result["J_runs"]))),
                             f"{result['record']} ×{result['scale']:g}, {result['controller']}"),
              out / f"marths_indices{suffix}.png"),
    ]


def plot_records(result: dict, out_dir) -> list[Path]:
    """A study over several records (:func:`~.record_studies.run_record_studies`): each
    record's three figures (``marths_tracking-kobe.png`` …) and ``marths_records.png``."""
    out = Path(out_dir)
    paths = []
    for record, study in result["by_record"].items():
        paths += plot_marths(study, out, suffix=f"-{record}")
    title = f"×{result['scale']:g}, {result['controller']}, {result['uncertain']} uncertain plants each"
    paths.append(_save(records_figure(result["by_record"], title), out / "marths_records.png"))
    return paths


def plot_study_record(record, out_dir) -> list[Path]:
    """The figures of a study's test record (:mod:`.study_record`), finished or not:
    the J bars over the runs it holds, and, when the nominal run finished, its tracking
    and interface figures from the attached history. Returns the paths written."""
    from rths_ident.benchmarks.marths.study import RECORDS  # noqa: PLC0415
    from rths_ident.benchmarks.marths.study_record import study_rows  # noqa: PLC0415

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    study = record.config["study"]
    name = f"{RECORDS.get(study['record'], study['record'])} ×{study['scale']:g}, {study['controller']}"
    rows = study_rows(record)
    planned = int(record.config["runs_planned"])
    paths = []
    by_run = {row["run"]: row for row in rows}
    attached = record.attached
    if 0 in by_run and "histories/run_0/eta_target" in attached and "reference/time" in attached:
        prefix = "histories/run_0/"
        nominal = {path[len(prefix):]: a for path, a in attached.items() if path.startswith(prefix)}
        t = attached["reference/time"]
        title = f"{name}, nominal plant"
        paths.append(_save(tracking_figure(t, nominal, by_run[0]["J"], title), out / "marths_tracking.png"))
        paths.append(_save(interface_figure(t, attached["reference/interface"], nominal, by_run[0]["J"], title),
                           out / "marths_interface.png"))
    if rows:
        status = "" if record.complete else f"; not complete: {len(rows)} of {planned} runs finished"
        paths.append(_save(indices_figure([row["J"] for row in rows], [row["run"] for row in rows], name + status),
                           out / "marths_indices.png"))
    return paths


def tracking_figure(t, nominal: dict, j_nominal: dict, title: str) -> Figure:
    """η_ns vs η_m and η̂_m per actuator over 2 s around the peak (the paper's Fig. 23):
    the measured stroke wide and light underneath, the target and the estimate thin on top,
    and the tracking error η_m − η_ns as its own trace below each
    (:mod:`rths_ident.figure_views`)."""
    fig = Figure(figsize=(10, 8))
    axes = fig.subplots(4, 1, sharex=True, height_ratios=(1.6, 1, 1.6, 1))
    for i, name in enumerate(("actuator 1 (bottom)", "actuator 2 (top)")):
        target = nominal["eta_target"][:, i] * 1e3
        measured = nominal["eta_measured"][:, i] * 1e3
        w = _window(t, target, width=2.0)  # short: the lag (J1) is visible
        ax, ax_error = axes[2 * i], axes[2 * i + 1]
        overlay(ax, ax_error, t[w], measured[w], target[w], under_role="measured", over_role="target",
                under_label=r"measured $\eta_m$", over_label=r"target $\eta_{ns}$")
        ax.plot(t[w], nominal["eta_estimated"][w, i] * 1e3, label=r"estimated $\hat\eta_m$", **line_kwargs("model"))
        ax.set_title(f"{name}: J2 = {j_nominal['J2'][i]:.1f} %, J1 = {j_nominal['J1'][i]:.1f} ms")
        ax.set_ylabel("stroke [mm]")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        ax_error.set_ylabel(r"$\eta_m - \eta_{ns}$ [mm]")
        ax_error.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle("tracking — " + title)
    return fig


def interface_figure(t, reference_interface, nominal: dict, j_nominal: dict, title: str) -> Figure:
    """ψ̂_m vs ψ_ns and the reference ψ at node 4, x and θ (the paper's Figs. 24–25)."""
    fig = Figure(figsize=(10, 6))
    scale = (1e3, 1e3)
    labels = ("x4 [mm]", "θ4 [mrad]")
    for i in range(2):
        ref = reference_interface[:, i] * scale[i]
        w = _window(t, ref)
        ax = fig.add_subplot(2, 1, i + 1)
        ax.plot(t[w], ref[w], "k", lw=1.4, label=r"reference $\psi$")
        ax.plot(t[w], nominal["psi_target"][w, i] * scale[i], "tab:green", lw=0.9, label=r"target $\psi_{ns}$")
        ax.plot(t[w], nominal["psi_estimated"][w, i] * scale[i], "tab:red", lw=0.8, ls="--",
                label=r"estimated $\hat\psi_m$")
        ax.set_title(f"{labels[i].split()[0]}: J5 = {j_nominal['J5'][i]:.1f} %, J7 = {j_nominal['J7'][i]:.1f} %")
        ax.set_ylabel(labels[i])
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("time [s]")
    fig.suptitle("interface node 4 — " + title)
    return fig


def indices_figure(runs: list[dict], run_numbers: list[int], title: str) -> Figure:
    """J2, J5, J7 per component over the runs (``run_numbers``: 0 the nominal plant),
    the mean over the uncertain runs dashed."""
    fig = Figure(figsize=(11, 4.5))
    components = (("J2", ("act. 1", "act. 2")), ("J5", ("x4", "θ4")), ("J7", ("x4", "θ4")))
    uncertain = [k for k, run in enumerate(run_numbers) if run != 0]
    idx = np.arange(len(runs))
    shown = idx[:: max(1, len(runs) // 7)]
    for k, (name, comp) in enumerate(components):
        ax = fig.add_subplot(1, 3, k + 1)
        values = np.array([r[name] for r in runs])
        for c in range(2):
            ax.bar(idx + (c - 0.5) * 0.4, values[:, c], width=0.4, label=comp[c],
                   color=("tab:blue", "tab:orange")[c])
        if uncertain:
            for c in range(2):
                ax.axhline(values[uncertain, c].mean(), color=("tab:blue", "tab:orange")[c], ls="--", lw=0.8)
        top = np.nanmax(values) if np.isfinite(values).any() else 0.0
        if top > 0:
            ax.set_ylim(0.0, 1.3 * top)  # headroom: the legend above the bars
        ax.set_xticks(shown)
        ax.set_xticklabels(["nom." if run_numbers[i] == 0 else str(run_numbers[i]) for i in shown])
        ax.set_xlabel("plant")
        ax.set_ylabel(f"{name} [%]")
        ax.set_title(name)
        ax.legend(fontsize=8, ncol=2, loc="upper center")
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"indices over the plants — {title}\n(nom. = nominal plant; dashed: mean over the uncertain plants)")
    return fig


def records_figure(by_record: dict, title: str) -> Figure:
    """J2, J5, J7 per record and component: bar = mean over the uncertain plants (the
    nominal plant's alone without them), whiskers = lowest and highest over all plants,
    dot = the nominal plant."""
    fig = Figure(figsize=(11, 4.5))
    components = (("J2", ("act. 1", "act. 2")), ("J5", ("x4", "θ4")), ("J7", ("x4", "θ4")))
    records = list(by_record)
    idx = np.arange(len(records))
    for k, (name, comp) in enumerate(components):
        ax = fig.add_subplot(1, 3, k + 1)
        top = 0.0
        for c in range(2):
            color = ("tab:blue", "tab:orange")[c]
            x = idx + (c - 0.5) * 0.36
            runs = [np.array([run[name][c] for run in by_record[r]["J_runs"]]) for r in records]
            mean = [np.mean(v[1:]) if v.size > 1 else v[0] for v in runs]
            low = [m - np.min(v) for m, v in zip(mean, runs)]
            high = [np.max(v) - m for m, v in zip(mean, runs)]
            ax.bar(x, mean, width=0.36, color=color, label=comp[c], yerr=[low, high], capsize=3,
                   error_kw={"lw": 0.8})
            ax.plot(x, [v[0] for v in runs], "o", ms=4, color="black", label="nominal plant" if c else None)
            top = max(top, max(np.max(v) for v in runs))
        if np.isfinite(top) and top > 0:
            ax.set_ylim(0.0, 1.3 * top)  # headroom: the legend above the bars
        ax.set_xticks(idx)
        ax.set_xticklabels(records)
        ax.set_ylabel(f"{name} [%]")
        ax.set_title(name)
        ax.legend(fontsize=7, ncol=3, loc="upper center", columnspacing=0.8, handlelength=1.2)
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(f"indices per record — {title}\n(bar: mean over the uncertain plants; whiskers: lowest to "
                 "highest plant; dot: nominal plant)")
    return fig
