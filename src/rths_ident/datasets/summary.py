"""Summary statistics of a shipped dataset (what ``rths-ident datasets show`` prints)."""

from __future__ import annotations

import os
from importlib.resources.abc import Traversable

import numpy as np

from rths_ident.datasets.ground_motions import STANDARD_GRAVITY, read_ground_motion_record
from rths_ident.datasets.hysteresis import read_hysteresis_record
from rths_ident.datasets.marths import read_marths_record
from rths_ident.datasets.registry import DatasetRecord, get_dataset


def _ground_motion_stats(record: DatasetRecord) -> dict[str, float | int]:
    t, ag = read_ground_motion_record(record)
    peak_index = int(np.argmax(np.abs(ag)))
    nonzero = np.flatnonzero(ag != 0.0)
    return {
        "samples": int(t.size),
        "dt [s]": float(np.mean(np.diff(t))),
        "duration [s]": float(t[-1] - t[0]),
        "PGA [m/s²]": float(abs(ag[peak_index])),
        "PGA [g]": float(abs(ag[peak_index]) / STANDARD_GRAVITY),
        "time of PGA [s]": float(t[peak_index]),
        "first non-zero sample [s]": float(t[nonzero[0]]) if nonzero.size else float("nan"),
        "last non-zero sample [s]": float(t[nonzero[-1]]) if nonzero.size else float("nan"),
    }


def _hysteresis_stats(record: DatasetRecord) -> dict[str, float | int]:
    displacement, force = read_hysteresis_record(record)
    return {
        "samples": int(displacement.size),
        "min displacement [mm]": float(displacement.min()),
        "max displacement [mm]": float(displacement.max()),
        "peak |displacement| [mm]": float(np.max(np.abs(displacement))),
        "min force [kN]": float(force.min()),
        "max force [kN]": float(force.max()),
        "peak |force| [kN]": float(np.max(np.abs(force))),
    }


def _matrices_stats(record: DatasetRecord) -> dict[str, float | int]:
    model = read_marths_record(record)
    diagonal_k = np.diag(model.K)
    return {
        "equations": model.n_equations,
        "equations with mass": int(model.mass_equations.size),
        "total of diagonal masses [kg]": float(np.trace(model.M)),
        "largest mass [kg]": float(np.max(np.diag(model.M))),
        "smallest diagonal K": float(diagonal_k.min()),
        "largest diagonal K": float(diagonal_k.max()),
        "non-zero K entries": int(np.count_nonzero(model.K)),
        "joints": int(model.joint_dof.joints.size),
    }


_STATS = {
    "ground_motion": _ground_motion_stats,
    "hysteresis_test": _hysteresis_stats,
    "fe_matrices": _matrices_stats,
}


def summarize_dataset(
    name: str, *, root: str | os.PathLike | Traversable | None = None
) -> tuple[DatasetRecord, dict[str, float | int]]:
    """The record of a shipped dataset and summary statistics computed from its data:
    ground motions — samples, dt, duration, PGA [m/s²] and [g], time of PGA, first and
    last non-zero sample; hysteresis tests — samples, extreme displacements [mm] and
    forces [kN]; matrices — equations, equations with mass, masses, K diagonal range.
    """
    record = get_dataset(name, root=root)
    return record, _STATS[record.kind](record)
