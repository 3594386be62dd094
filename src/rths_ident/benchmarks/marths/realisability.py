"""Constraint monitor of a maRTHS run (seed 004 §3.6.3 items 5–6; digest §13 C.2).

Per actuator: the command voltage within the saturation (the package's ``S5`` calls a
controller *realisable* when both commands stay below ``sat_limit`` = 3.8 V), the force
within the 9340 N capacity, the stroke velocity within 25 mm/s, the stroke within ±4 mm.
``limits_respected`` asks all four; ``commands_within_saturation`` is the package's test
(the study's ``realisable``).
"""

from __future__ import annotations

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["LIMITS", "realisability_report"]

#: (limit, unit) per monitored quantity, SI
LIMITS = {"command_v": (3.8, "V"), "force_n": (9340.0, "N"), "velocity_m_s": (0.025, "m/s"),
          "stroke_m": (0.004, "m")}


def realisability_report(command_v, force_n, stroke_m, dt: float, saturation_v: float = 3.8) -> dict:
    """Peaks per actuator against :data:`LIMITS` for (N, 2) histories of the controller's
    command voltage (before saturation), the actuator force and the true stroke."""
    arrays = {}
    for name, value in (("command_v", command_v), ("force_n", force_n), ("stroke_m", stroke_m)):
        a = np.asarray(value, dtype=float)
        if a.ndim != 2 or a.shape[1] != 2 or a.shape[0] < 2:
            raise ParameterError(f"{name} must be an (N ≥ 2, 2) history; got shape {a.shape}")
        arrays[name] = a
    if not (np.isfinite(dt) and dt > 0):
        raise ParameterError(f"dt must be > 0 [s]; got {dt!r}")
    arrays["velocity_m_s"] = np.gradient(arrays["stroke_m"], dt, axis=0)
    limits = dict(LIMITS, command_v=(float(saturation_v), "V"))
    report = {}
    for name, (limit, unit) in limits.items():
        peak = np.max(np.abs(arrays[name]), axis=0)
        finite = bool(np.all(np.isfinite(peak)))
        report[name] = {"peak": [float(p) for p in peak], "limit": limit, "unit": unit,
                        "within": bool(finite and np.all(peak <= limit))}
    report["commands_within_saturation"] = report["command_v"]["within"]
    report["limits_respected"] = all(report[name]["within"] for name in limits)
    return report
