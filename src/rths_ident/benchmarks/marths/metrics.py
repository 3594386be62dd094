"""J1–J10 of a maRTHS run, in the paper's or the official scorer's conventions (seed 004
§3.7, Eqs. 9–18; the package's ``S5_Evaluation``; digest 004 §6).

=================  ===================================  =====================================
                   ``"paper"`` (default)                ``"official"``
=================  ===================================  =====================================
J2, J5, J7, J8     RMS: √(Σe²/Σr²)·100 (Eqs. 10–16)      std(e)/std(r)·100 (mean removed)
J4                 delay of η̂_m (Eq. 12)                 delay of η_m (``finddelay`` on η_m,
                                                         i.e. the same expression as J1)
averages           nominal and uncertain runs apart;    the mean over the uncertain runs only
                   ``reported`` = mean of ALL runs      (rows 2:end), rounded to 0.1 (the
                                                         nominal run alone if there are none)
=================  ===================================  =====================================

**Which J4 we follow by default, and why:** the paper's Eq. 12 (η̂_m, the estimated
strokes). The paper defines J4 as the delay of the *estimated* response, next to J1 on
the measured one; computing both from η_m (as the public scorer does) makes J4 a copy of
J1 and loses what J4 is for — the delay the estimator adds or removes. ``"official"``
reproduces the scorer for comparisons with its numbers.

Time alignment (our loop, :mod:`.site`): the chunk at step k acts at t_k on the target
the NS computed for t_k; its η and ψ̂ are compared with that target and with the
reference at t_k. The NS's upper storeys at step k are at t_{k+1}, like the reference's
step k.
"""

from __future__ import annotations

import numpy as np

from rths_ident import metrics
from rths_ident.errors import ParameterError

__all__ = ["CONVENTIONS", "run_indices", "average_indices", "reported_indices", "INDEX_NAMES"]

CONVENTIONS = ("paper", "official")
INDEX_NAMES = tuple(f"J{i}" for i in range(1, 11))


def run_indices(fs: float, logs: dict, reference_interface, reference_upper, convention: str = "paper") -> dict:
    """J1…J10 (lists per component) of one run.

    logs: ``eta_target``, ``eta_measured``, ``eta_estimated``, ``psi_target``,
    ``psi_estimated`` (N, 2) of the chunks and ``psi_upper`` (N, 4) of the NS;
    reference_interface (N, 2) at t_k, reference_upper (N, 4) at t_{k+1}.
    """
    if convention not in CONVENTIONS:
        raise ParameterError(f"convention must be one of {CONVENTIONS}; got {convention!r}")
    official = convention == "official"
    out = metrics.marths_indices(
        fs, logs["eta_target"], logs["eta_measured"], logs["psi_target"], logs["psi_estimated"],
        reference_interface, logs["psi_upper"], reference_upper, actuator_estimated=logs["eta_estimated"],
        nrms="std" if official else "rms", j4_source="measured" if official else "estimated")
    return {name: [float(v) for v in np.atleast_1d(out[name])] for name in INDEX_NAMES}


def average_indices(runs: list[dict], convention: str = "paper") -> dict:
    """The mean of J over ``runs`` per component (official: rounded to 0.1)."""
    if not runs:
        raise ParameterError("average_indices needs at least one run")
    mean = {name: np.mean([r[name] for r in runs], axis=0) for name in INDEX_NAMES}
    if convention == "official":
        mean = {name: np.round(v, 1) for name, v in mean.items()}
    return {name: [float(x) for x in v] for name, v in mean.items()}


def reported_indices(nominal: dict, uncertain: list[dict], convention: str = "paper") -> dict:
    """What a study reports: ``official`` the uncertain-run mean (nominal if none),
    ``paper`` the mean of all runs."""
    if convention == "official":
        return average_indices(uncertain if uncertain else [nominal], "official")
    return average_indices([nominal] + list(uncertain), "paper")
