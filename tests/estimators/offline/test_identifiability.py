"""Identifiability report from the Jacobian: the classical OLS standard errors on a
linear problem (closed form), the AR(1) effective sample size, and a structurally
unidentifiable parameter (Bouc–Wen A with z free to rescale) flagged on a real fit."""

import numpy as np
import pytest

from rths_ident.estimators.offline import FitData, fit_nls
from rths_ident.estimators.offline.identifiability import effective_sample_size, identifiability

from offline_synthetic import bouc_wen_rk4, growing_triangle_wave


def test_standard_errors_equal_the_ols_formula_for_white_residuals():
    # y = a + b t: J = [1, t]; residual alternating in sign (lag-one autocorrelation < 0,
    # so n_eff = n) → SE = sqrt(s² diag((JᵀJ)⁻¹)), s² = RSS/(n − 2), by the textbook formula
    n = 50
    t = np.linspace(0.0, 1.0, n)
    J = np.column_stack([np.ones(n), t])
    residual = 0.01 * (-1.0) ** np.arange(n) * (1.0 + 0.1 * t)
    q = np.array([2.0, 3.0])
    report = identifiability(J, residual, ["a", "b"], q, np.array([0.0, 0.0]), np.array([10.0, 10.0]), [False, False])
    s2 = residual @ residual / (n - 2)
    t_mean = t.mean()
    sxx = np.sum((t - t_mean) ** 2)
    se_b = np.sqrt(s2 / sxx)
    se_a = np.sqrt(s2 * (1.0 / n + t_mean**2 / sxx))
    assert report["n_effective"] == n
    assert report["parameters"]["a"]["relative_se"] == pytest.approx(se_a / 2.0, rel=1e-10)
    assert report["parameters"]["b"]["relative_se"] == pytest.approx(se_b / 3.0, rel=1e-10)
    assert report["parameters"]["b"]["se_over_range"] == pytest.approx(se_b / 10.0, rel=1e-10)
    assert report["not_identifiable"] == []
    # correlation of the intercept and slope estimates: −t̄ / sqrt(t̄² + sxx/n)
    expected = -t_mean / np.sqrt(t_mean**2 + sxx / n)
    assert abs(expected) < 0.95 and report["correlated_pairs"] == []
    # condition number of the column-scaled J, by numpy directly
    scaled = J / np.linalg.norm(J, axis=0)
    assert report["condition_number"] == pytest.approx(np.linalg.cond(scaled), rel=1e-10)


def test_effective_sample_size_of_an_ar1_series():
    rng = np.random.default_rng(3)
    rho, n = 0.8, 20000
    e = rng.normal(size=n)
    r = np.empty(n)
    r[0] = e[0]
    for i in range(1, n):
        r[i] = rho * r[i - 1] + e[i]
    assert effective_sample_size(r, 3) == pytest.approx(n * (1 - rho) / (1 + rho), rel=0.05)
    assert effective_sample_size(np.ones(10) * 0 + np.arange(10.0) ** 0 * (-1.0) ** np.arange(10), 2) == 10


def test_duplicated_column_is_flagged_structurally():
    # two parameters entering only as their sum: J has two equal columns → null direction
    n = 40
    t = np.linspace(0, 1, n)
    J = np.column_stack([t, t, np.ones(n)])
    report = identifiability(J, 0.01 * (-1.0) ** np.arange(n), ["p1", "p2", "c"], np.array([1.0, 1.0, 1.0]),
                             np.zeros(3), np.full(3, 10.0), [False] * 3)
    assert set(report["not_identifiable"]) == {"p1", "p2"}
    assert report["parameters"]["p1"]["relative_se"] == float("inf")
    assert report["parameters"]["c"]["identifiable"]


@pytest.mark.slow
def test_bouc_wen_free_A_is_flagged_not_identifiable(rng):
    # A, β, γ and k(1−α) trade off exactly (z can be rescaled): with --free-A the report
    # must flag A; with A held the same data identify every coordinate.
    x = growing_triangle_wave(240, 0.04, cycles=3)
    clean = bouc_wen_rk4(x, k=2.0e6, alpha=0.05, beta=60.0, gamma=40.0, n=1.0)
    data = FitData.from_arrays(x, clean + 0.01 * np.max(np.abs(clean)) * rng.normal(size=x.size))
    options = dict(n_starts=1, n_screen=4, global_generations=5, fixed={"n": 1.0})
    free = fit_nls(data, "boucwen", free_A=True, **options).details["identifiability"]
    assert "A" in free["not_identifiable"], free["parameters"]["A"]
    held = fit_nls(data, "boucwen", **options).details["identifiability"]
    assert held["not_identifiable"] == [], held["parameters"]
