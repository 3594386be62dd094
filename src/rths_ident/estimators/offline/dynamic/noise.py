"""Output noise of a periodic record, measured without a model, and what it means for
an RMSE against measured samples.

In periodic steady state the noise-free output repeats from period to period, so the
differences between periods are noise alone: with P periods y_p (after the run-in), the
sample variance across periods at each instant, averaged over the period,

    σ̂² = (1/N_p) Σ_k Σ_p (y_p,k − ȳ_k)² / (P − 1)

estimates the noise variance with (P − 1)·N_p degrees of freedom, less the correlation
of neighbouring noise samples (the inflation 1 + 2 Σ_j ρ_j² over the first lags of the
differences' autocorrelation).

A model simulated on the same input leaves, on a scored part of n samples,
rmse² = e² + σ² (model error e, independent noise), so e is estimated as
√max(rmse² − σ̂², 0), with a one-sided 95 % upper bound from the sampling variances of
rmse² (≈ 2σ⁴·inflation/n) and of σ̂². When the noise is large against the model error,
an RMSE against measured samples cannot show e at all; this says how far it can.
"""

from __future__ import annotations

import numpy as np

__all__ = ["between_period_noise", "noise_corrected_error"]


def _inflation(series: np.ndarray, lags: int = 10) -> float:
    x = series - series.mean()
    denominator = float(x @ x)
    if denominator <= 0.0:
        return 1.0
    rho = [float(x[:-j] @ x[j:]) / denominator for j in range(1, min(lags, x.size - 1) + 1)]
    return 1.0 + 2.0 * float(np.sum(np.square(rho)))


def between_period_noise(output: np.ndarray, period: int, first: int, last: int) -> dict:
    """σ̂ of the output noise from periods ``first`` … ``last − 1`` (0-based, at least 2)."""
    periods = np.asarray(output, dtype=float)[first * period:last * period].reshape(last - first, period)
    count = periods.shape[0]
    deviations = periods - periods.mean(axis=0)
    variance = float(np.sum(deviations**2) / (period * (count - 1)))
    inflation = _inflation(periods[1] - periods[0])
    return {"std": float(np.sqrt(variance)), "periods": [first + 1, last], "degrees_of_freedom": (count - 1) * period,
            "correlation_inflation": inflation}


def noise_corrected_error(rmse: float, n_samples: int, noise: dict) -> dict:
    """The model error e behind an RMSE over ``n_samples`` noisy samples (module
    docstring): its estimate and one-sided 95 % upper bound [the output's unit]."""
    sigma2 = noise["std"] ** 2
    excess = rmse**2 - sigma2
    spread = np.sqrt(2.0 * sigma2**2 * noise["correlation_inflation"]
                     * (1.0 / n_samples + 1.0 / noise["degrees_of_freedom"]))
    return {"estimate": float(np.sqrt(max(excess, 0.0))),
            "upper_95": float(np.sqrt(max(excess + 1.645 * spread, 0.0))),
            "rmse_squared_minus_noise_variance": float(excess)}
