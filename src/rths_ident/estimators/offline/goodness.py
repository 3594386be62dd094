"""Goodness of fit of a force history.

The package's headline figure is the **range-normalised RMSE** (the standard NRMSE of
system identification and of OpenSees/FEMA calibration studies):

    NRMSE_range = rms(F_fit − F_meas) / (max F_meas − min F_meas) × 100   [%]

Reports also give the **rms-normalised** form, which is about twice as large for a
symmetric cyclic test (the rms of a sine is 1/(2√2) of its range):

    NRMSE_rms = rms(F_fit − F_meas) / rms(F_meas) × 100                     [%]

and R² = 1 − Σ(F_fit − F_meas)² / Σ(F_meas − mean F_meas)².
"""

from __future__ import annotations

import numpy as np

__all__ = ["nrmse_range_percent", "nrmse_rms_percent", "coefficient_of_determination", "goodness_of_fit"]


def _residual(fitted, measured):
    fitted = np.asarray(fitted, dtype=float)
    measured = np.asarray(measured, dtype=float)
    if fitted.shape != measured.shape:
        raise ValueError(f"fitted and measured force must have the same shape; got {fitted.shape} and {measured.shape}")
    return fitted - measured, measured


def nrmse_range_percent(fitted, measured) -> float:
    """rms(F_fit − F_meas) / (max F_meas − min F_meas) × 100 [%]."""
    residual, measured = _residual(fitted, measured)
    return float(np.sqrt(np.mean(residual**2)) / np.ptp(measured) * 100.0)


def nrmse_rms_percent(fitted, measured) -> float:
    """rms(F_fit − F_meas) / rms(F_meas) × 100 [%]."""
    residual, measured = _residual(fitted, measured)
    return float(np.sqrt(np.mean(residual**2)) / np.sqrt(np.mean(measured**2)) * 100.0)


def coefficient_of_determination(fitted, measured) -> float:
    """R² = 1 − SS_res / SS_tot."""
    residual, measured = _residual(fitted, measured)
    return float(1.0 - np.sum(residual**2) / np.sum((measured - measured.mean()) ** 2))


def goodness_of_fit(fitted, measured) -> dict[str, float]:
    """``{"nrmse_percent": range form, "nrmse_rms_percent": rms form, "r_squared": R²}``."""
    return {
        "nrmse_percent": nrmse_range_percent(fitted, measured),
        "nrmse_rms_percent": nrmse_rms_percent(fitted, measured),
        "r_squared": coefficient_of_determination(fitted, measured),
    }
