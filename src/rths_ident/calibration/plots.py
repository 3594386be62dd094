"""Figures of a calibration study: held-out J2 before/after (distribution and against the
natural period) and the optimiser's convergence."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: how the figures name the compensators and the search methods (the sources' spelling)
COMPENSATOR_NAMES = {"amb": "AMB", "damb": "dAMB", "polynomial": "polynomial"}
METHOD_NAMES = {"pso": "PSO", "de": "DE", "gradient": "L-BFGS-B"}


def title(result: dict) -> str:
    """What the figure says it shows, e.g. 'AMB calibrated by PSO'."""
    compensator, method = result["compensator"], result["method"]
    return f"{COMPENSATOR_NAMES.get(compensator, compensator)} calibrated by {METHOD_NAMES.get(method, method)}"


def start_label(result: dict) -> str:
    """The legend's name for the gains the search started from."""
    same = result.get("start_gains") is not None and result.get("start_gains") == result.get("source_gains")
    return "start (sources' gains)" if same else "start"


def plot_study(result: dict, out_dir) -> list[Path]:
    """One PNG (three panels) in ``out_dir`` (created if missing; its parent must exist);
    returns its path in a list."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    out_dir = Path(out_dir)
    out_dir.mkdir(exist_ok=True)
    per = result["_per_specimen"]
    before, after = per["holdout"][0], per["holdout"][1]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    finite = np.concatenate([before[np.isfinite(before)], after[np.isfinite(after)]])
    edges = np.linspace(0.0, float(np.max(finite)) * 1.05 if finite.size else 1.0, 25)
    ax = axes[0]
    ax.hist(np.where(np.isfinite(before), before, edges[-1]), bins=edges, alpha=0.6, label=start_label(result))
    ax.hist(np.where(np.isfinite(after), after, edges[-1]), bins=edges, alpha=0.6, label="calibrated")
    ax.set_xlabel("J2 [%] (held-out specimens; failed runs in the last bin)")
    ax.set_ylabel("specimens")
    ax.legend()
    ax = axes[1]
    ax.plot(per["holdout_period"], before, "o", mfc="none", label="start")
    ax.plot(per["holdout_period"], after, "x", label="calibrated")
    ax.set_xlabel("natural period T [s]")
    ax.set_ylabel("J2 [%]")
    ax.legend()
    ax = axes[2]
    history = np.asarray(result["history"], dtype=float)
    ax.plot(np.arange(history.size), np.where(np.isfinite(history), history, np.nan), "o-")
    ax.set_xlabel("iteration" + (" (population)" if result["method"] != "gradient" else " (L-BFGS-B)"))
    ax.set_ylabel("best mean J2 on the calibration sample [%]")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(f"{title(result)}: held-out mean J2 "
                 f"{result['J2_before']['mean']:.4g} → {result['J2_after']['mean']:.4g} %, "
                 f"max {result['J2_before']['max']:.4g} → {result['J2_after']['max']:.4g} %")
    fig.tight_layout()
    path = out_dir / f"calibration_{result['compensator']}_{result['method']}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]
