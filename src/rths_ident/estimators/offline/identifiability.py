"""Local identifiability of a least-squares optimum, from the Jacobian of the residual.

At the optimum q* of min ½‖r(q)‖² the linearised model r(q) ≈ r(q*) + J (q − q*) gives

    Cov(q*) ≈ s² (JᵀJ)⁻¹,   s² = ‖r‖² / (n − p) · n / n_eff

where n_eff corrects for serially correlated residuals (a fitted hysteresis loop leaves
slowly varying residuals, which makes the white-noise formula far too optimistic):
n_eff = n (1 − ρ₁)/(1 + ρ₁) with ρ₁ the lag-one autocorrelation of r (the variance
inflation of the mean of an AR(1) series), limited to [p + 1, n].

Reported per fitted coordinate (the optimiser's coordinates: log of scale parameters,
plain values of ratios):

* ``relative_se``: standard error relative to the value. For a log coordinate it is the
  standard error of log(value) itself (δθ/θ); for a plain one SE/|value| (inf at or
  within 1e-9 of the bound interval's width from 0).
* ``se_over_range``: SE as a fraction of the bound interval (meaningful at 0 too).
* ``identifiable``: False when relative_se > 0.5 and se_over_range > 0.1 (a value known
  neither to within 50 % nor to within a tenth of its physical range), or when the
  parameter takes part (|v| > 0.1) in a direction of the column-scaled Jacobian whose
  singular value is below 1e-8 of the largest (structurally unidentifiable: there the
  covariance is infinite, not the pseudo-inverse's zero).

and for the whole fit the singular values and condition number of the column-scaled
Jacobian J·diag(1/‖J_j‖) (scale-free: a condition number of 1 means orthogonal
sensitivities) and the pairs of parameters with |correlation| > 0.95.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["identifiability", "covariance", "Covariance", "effective_sample_size", "RELATIVE_SE_LIMIT",
           "RANGE_SE_LIMIT", "SINGULAR_RATIO"]

RELATIVE_SE_LIMIT = 0.5
RANGE_SE_LIMIT = 0.1
SINGULAR_RATIO = 1e-8
CORRELATION_LIMIT = 0.95


def effective_sample_size(residual: np.ndarray, n_parameters: int) -> float:
    """n (1 − ρ₁)/(1 + ρ₁), ρ₁ = lag-one autocorrelation of ``residual``, in [p + 1, n]."""
    r = np.asarray(residual, dtype=float)
    n = r.size
    centred = r - r.mean()
    denominator = float(centred @ centred)
    rho = float(centred[:-1] @ centred[1:]) / denominator if denominator > 0 and n > 2 else 0.0
    rho = min(max(rho, 0.0), 0.999)
    return float(min(max(n * (1.0 - rho) / (1.0 + rho), n_parameters + 1.0), n))


class Covariance(NamedTuple):
    """The linearised covariance of a least-squares optimum (module docstring).

    matrix : Cov(q*) (p × p), in the coordinates of the Jacobian's columns; rows and
        columns of structurally unidentifiable coordinates are those of the
        pseudo-inverse (their standard error is reported as inf).
    standard_errors : √diag (inf where structurally unidentifiable).
    correlation : matrix / (SE SEᵀ) (NaN where a standard error is 0 or inf).
    structurally : bool per coordinate: part of a null direction of J.
    singular_values : of the column-scaled Jacobian, largest first.
    n_effective : the effective sample size of the residual.
    """

    matrix: np.ndarray
    standard_errors: np.ndarray
    correlation: np.ndarray
    structurally: np.ndarray
    singular_values: np.ndarray
    n_effective: float


def covariance(jacobian, residual) -> Covariance:
    """Cov(q*) ≈ s² (JᵀJ)⁻¹ with s² = ‖r‖²/(n − p)·n/n_eff, from the column-scaled
    Jacobian's SVD (module docstring)."""
    J = np.asarray(jacobian, dtype=float)
    r = np.asarray(residual, dtype=float)
    n, p = J.shape
    norms = np.linalg.norm(J, axis=0)
    safe = np.where(norms > 0.0, norms, 1.0)
    scaled = J / safe
    _, singular, vt = np.linalg.svd(scaled, full_matrices=False)
    smax = float(singular[0]) if singular.size else 0.0
    null = singular <= SINGULAR_RATIO * smax if smax > 0 else np.ones_like(singular, dtype=bool)
    structurally = np.zeros(p, dtype=bool)
    for i in np.flatnonzero(null):
        structurally |= np.abs(vt[i]) > 0.1
    structurally |= norms == 0.0  # the residual does not depend on it at all

    n_eff = effective_sample_size(r, p)
    s2 = float(r @ r) / max(n - p, 1) * n / n_eff
    # covariance of the scaled coordinates from the non-null directions; back to q
    inverse = np.zeros_like(singular)
    inverse[~null] = 1.0 / singular[~null] ** 2
    cov_scaled = (vt.T * inverse) @ vt
    cov = s2 * cov_scaled / np.outer(safe, safe)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se[structurally] = np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = cov / np.outer(se, se)
    correlation[~np.isfinite(correlation)] = np.nan
    return Covariance(cov, se, correlation, structurally, singular, n_eff)


def identifiability(jacobian, residual, names, coordinates, lower, upper, log_flags) -> dict:
    """Identifiability report of a fit (module docstring). ``jacobian`` (n × p) and
    ``residual`` (n) at the optimum ``coordinates``; ``lower``/``upper`` the coordinate
    bounds; ``log_flags[j]`` True for log coordinates. Returns a JSON-ready dict."""
    J = np.asarray(jacobian, dtype=float)
    q = np.asarray(coordinates, dtype=float)
    n, p = J.shape
    if p != len(names):
        raise ValueError(f"jacobian has {p} columns but {len(names)} names were given")
    result = covariance(J, residual)
    se, correlation, structurally = result.standard_errors, result.correlation, result.structurally
    singular, n_eff = result.singular_values, result.n_effective
    smax = float(singular[0]) if singular.size else 0.0

    parameters = {}
    for j, name in enumerate(names):
        if log_flags[j]:
            relative = float(se[j])
        else:
            tiny = abs(q[j]) <= 1e-9 * (upper[j] - lower[j])  # at 0: a relative error is meaningless
            relative = float("inf") if tiny else float(se[j] / abs(q[j]))
        over_range = float(se[j] / (upper[j] - lower[j]))
        at_bound = bool(np.isclose(q[j], lower[j], rtol=0, atol=1e-6 * (upper[j] - lower[j]))
                        or np.isclose(q[j], upper[j], rtol=0, atol=1e-6 * (upper[j] - lower[j])))
        identifiable = not structurally[j] and not (relative > RELATIVE_SE_LIMIT and over_range > RANGE_SE_LIMIT)
        parameters[name] = {"relative_se": relative, "se_over_range": over_range, "at_bound": at_bound,
                            "identifiable": bool(identifiable)}
    pairs = []
    for a in range(p):
        for b in range(a + 1, p):
            c = correlation[a, b]
            if np.isfinite(c) and abs(c) > CORRELATION_LIMIT:
                pairs.append({"a": names[a], "b": names[b], "correlation": float(c)})
    pairs.sort(key=lambda item: -abs(item["correlation"]))
    condition = float(smax / singular[-1]) if singular.size and singular[-1] > 0 else float("inf")
    return {
        "singular_values": [float(s) for s in singular],
        "condition_number": condition,
        "n_effective": n_eff,
        "parameters": parameters,
        "correlated_pairs": pairs,
        "not_identifiable": [name for name, item in parameters.items() if not item["identifiable"]],
    }
