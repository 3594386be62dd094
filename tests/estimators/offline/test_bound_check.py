"""A fitted parameter on a bound is flagged, for every method: records whose truth lies on
a bound by construction (an elastic–perfectly-plastic specimen: b = 0, the model's own
limit; a post-yield stiffness ratio b = 0.98, beyond the bilinear fit's box [0, 0.95])."""

import numpy as np
import pytest

from rths_ident.estimators.offline import FitData, fit
from rths_ident.estimators.offline.bound_check import bound_warning, parameters_at_bounds
from rths_ident.estimators.offline.report import format_report


def _bilinear_force(x, k, fy, b):
    """Bilinear kinematic-hardening return map, plain NumPy."""
    force, previous, out = 0.0, 0.0, np.empty_like(x)
    for i, xi in enumerate(x):
        force = float(np.clip(force + k * (xi - previous), b * k * xi - (1 - b) * fy, b * k * xi + (1 - b) * fy))
        out[i], previous = force, xi
    return out


def _epp_force(x, k, fy):
    """Elastic–perfectly-plastic (b = 0)."""
    return _bilinear_force(x, k, fy, 0.0)


def _cycles(n=400, peak=0.02):
    s = np.linspace(0.0, 1.0, n)
    return peak * s * np.sin(2 * np.pi * 4 * s)


@pytest.mark.parametrize("method", ["ls", "nls"])
def test_perfectly_plastic_record_flags_b_on_the_models_own_limit(method):
    x = _cycles()
    f = _epp_force(x, k=1.0e6, fy=8.0e3)
    result = fit(FitData.from_arrays(x, f, None, source="epp"), "bilinear", method, seed=0, n_starts=1)
    flags = [w for w in result.warnings if w["code"] == "parameter_at_bound"]
    # ls flags its own coefficient b·k (θ ≥ 0), nls and bayes the field b
    b = next(w for w in flags if w["parameter"] == {"ls": "b_k"}.get(method, "b"))
    assert b["side"] == "lower" and b["bound"] == 0.0 and b["physical"] is True
    assert result.params["b"] == pytest.approx(0.0, abs=1e-4 * 0.95)  # within 1e-4 of the box [0, 0.95]
    text = format_report(result)
    assert "warning: parameter on a bound" in text and "the model's own limit" in text
    assert result.to_json_dict()["warnings"][0]["code"] == "parameter_at_bound"


def test_a_stiff_post_yield_branch_runs_b_to_its_search_box():
    # truth b = 0.98, outside the box [0, 0.95] of the bilinear nls fit (models/bilinear.py),
    # inside the model's own range [0, 1): the search box's bound, not a model limit
    x = _cycles()
    f = _bilinear_force(x, k=1.0e6, fy=8.0e3, b=0.98)
    data = FitData.from_arrays(x, f, None, source="stiff")
    result = fit(data, "bilinear", "nls", seed=0, n_starts=1)
    b = next(w for w in result.warnings if w["parameter"] == "b")
    assert b["side"] == "upper" and b["physical"] is False and b["bound"] == pytest.approx(0.95, rel=1e-12)
    assert "the search box's" in bound_warning([b])
    # ls bounds only the coefficients' signs (b·k, (1 − b)·k ≥ 0): it reaches 0.98, no flag
    by_ls = fit(data, "bilinear", "ls", seed=0)
    assert by_ls.params["b"] == pytest.approx(0.98, rel=1e-6) and by_ls.warnings == []


def test_bayes_reports_its_bounds_too():
    # a short chain starts 1e-3 of the box inside the bound and stays near it: the NLS
    # point it starts from (on the bound) is flagged
    x = _cycles(n=200)
    f = _epp_force(x, k=1.0e6, fy=8.0e3)
    result = fit(FitData.from_arrays(x, f, None, source="epp"), "bilinear", "bayes", seed=0, n_starts=1,
                 draws=30, warmup=30, chains=1)
    b = next(w for w in result.warnings if w["code"] == "parameter_at_bound" and w["parameter"] == "b")
    assert b["side"] == "lower" and b["physical"] is True
    assert "at the NLS start of the chains" in bound_warning([b])


def test_a_fit_inside_its_box_has_no_flag():
    x = _cycles()
    f = _epp_force(x, k=1.0e6, fy=8.0e3) + 0.05 * 1.0e6 * x  # b = 0.05 / 1.05 inside (0, 0.95)
    data = FitData.from_arrays(x, f, None, source="inside")
    params = {"k": 1.05e6, "fy": 8.4e3, "b": 0.05 / 1.05}
    assert parameters_at_bounds(data, "bilinear", params) == []
    assert bound_warning([]) is None


def test_lugre_sigma2_at_zero_is_flagged_and_an_interior_sigma3_is_not():
    # a record with a physical time axis (σ2 fitted); boxes of models/lugre.py in units of
    # max|x|, max|F|: σ3 ∈ [0, 50]·F_s/X_s, σ2 ∈ [0, 5]·F_s·T_s/X_s
    t = np.linspace(0.0, 4.0, 801)
    x = 0.05 * np.sin(2 * np.pi * 0.5 * t)
    f = 2.0e4 * np.tanh(x / 0.005) + 5.0e4 * x
    data = FitData.from_arrays(x, f, t, source="lugre-like")
    scales = data.scales()
    sigma3 = 0.003 * 50.0 * scales.force / scales.displacement  # 0.3 % of its box: inside, not on it
    params = {"sigma0": 4.0e6, "sigma1": 0.0, "sigma2": 0.0, "sigma3": sigma3, "Fc": 2.0e4}
    flags = parameters_at_bounds(data, "lugre", params)
    assert [(w["parameter"], w["side"], w["physical"]) for w in flags] == [("sigma2", "lower", True)]
    # with a posterior sd, a mean within 2 sd of the bound is on it, one farther is not
    near = {**params, "sigma2": 150.0}
    assert parameters_at_bounds(data, "lugre", near, posterior={"sigma2": {"sd": 100.0}})[0]["parameter"] == "sigma2"
    assert parameters_at_bounds(data, "lugre", near, posterior={"sigma2": {"sd": 50.0}}) == []
