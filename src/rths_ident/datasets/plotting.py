"""Quick-look plot of a shipped dataset (``rths-ident datasets show NAME --plot``).

Draws with matplotlib's Agg canvas directly (no pyplot, no global backend change).
"""

from __future__ import annotations

import os
from importlib.resources.abc import Traversable

import numpy as np

from rths_ident.datasets.ground_motions import STANDARD_GRAVITY, read_ground_motion_record
from rths_ident.datasets.hysteresis import read_hysteresis_record
from rths_ident.datasets.marths import read_marths_record
from rths_ident.datasets.registry import get_dataset


def plot_dataset(
    name: str, output: str | os.PathLike, *, root: str | os.PathLike | Traversable | None = None
) -> None:
    """Draw a shipped dataset to an image file (format from the suffix, e.g. ``.png``):
    a ground motion as a_g(t) in m/s² (the unit :func:`load_ground_motion` returns; the
    title gives the PGA in g too), a hysteresis test as force vs displacement, FE
    matrices as the sparsity pattern of K with the diagonal of M."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    record = get_dataset(name, root=root)
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    if record.kind == "ground_motion":
        t, ag = read_ground_motion_record(record)
        axes = figure.add_subplot()
        axes.plot(t, ag, linewidth=0.7)
        axes.set_xlabel("time [s]")
        axes.set_ylabel("ground acceleration [m/s²]")
        pga = float(abs(ag).max())
        axes.set_title(f"PGA {pga:.3g} m/s² ({pga / STANDARD_GRAVITY:.3g} g)")
    elif record.kind == "hysteresis_test":
        displacement, force = read_hysteresis_record(record)
        axes = figure.add_subplot()
        axes.plot(displacement, force, linewidth=0.7)
        axes.set_xlabel("displacement [mm]")
        axes.set_ylabel("force [kN]")
    else:
        model = read_marths_record(record)
        left, right = figure.subplots(1, 2)
        left.spy(model.K, markersize=3)
        left.set_title("K: non-zero entries")
        right.bar(np.arange(1, model.n_equations + 1), np.diag(model.M))
        right.set_xlabel("equation")
        right.set_ylabel("lumped mass [kg]")
    figure.suptitle(f"{record.name}: {record.title}", fontsize=9)
    figure.savefig(output, dpi=100)
