"""Offline identification of logged tests: batch constrained least squares in the
linear-in-parameters form, nonlinear least squares through the simulated force, a
Bayesian posterior (NumPyro NUTS + ArviZ), and the linear-specimen procedures of seed 002
(static stiffness, logarithmic decrement). See ``docs/fitting.md``.

>>> from rths_ident.estimators.offline import FitData, fit
>>> from rths_ident.datasets import load_hysteresis_test
>>> x, f = load_hysteresis_test("daniel", units="SI")
>>> result = fit(FitData.from_arrays(x, f, source="daniel"), "bilinear", "nls")
>>> round(result.nrmse_percent, 1) < 6
True
"""

from __future__ import annotations

from typing import Callable

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.bound_check import parameters_at_bounds
from rths_ident.estimators.offline.fit_data import PSEUDO_TIME_STEP_S, FitData, Scales
from rths_ident.estimators.offline.goodness import (
    coefficient_of_determination,
    goodness_of_fit,
    nrmse_range_percent,
    nrmse_rms_percent,
)
from rths_ident.estimators.offline.least_squares import bounded_linear_least_squares, fit_ls, ls_models
from rths_ident.estimators.offline.linear_specimen import (
    FreeVibrationIdentification,
    StaticStiffness,
    fit_free_vibration,
    fit_static_stiffness,
    free_vibration_peaks,
    identify_free_vibration,
    log_decrement,
    static_stiffness,
)
from rths_ident.estimators.offline.model_specs import fittable_models, model_class, model_spec, substep_models
from rths_ident.estimators.offline.nonlinear_least_squares import fit_nls
from rths_ident.estimators.offline.result import FitResult

__all__ = [
    "FitData",
    "Scales",
    "PSEUDO_TIME_STEP_S",
    "FitResult",
    "fittable_models",
    "METHODS",
    "ls_models",
    "fit",
    "fit_all",
    "fit_ls",
    "fit_nls",
    "fit_bayes",
    "bounded_linear_least_squares",
    "model_class",
    "model_spec",
    "nrmse_range_percent",
    "nrmse_rms_percent",
    "coefficient_of_determination",
    "goodness_of_fit",
    "static_stiffness",
    "StaticStiffness",
    "fit_static_stiffness",
    "fit_free_vibration",
    "log_decrement",
    "free_vibration_peaks",
    "identify_free_vibration",
    "FreeVibrationIdentification",
]

#: fitting methods of :func:`fit`
METHODS = ("ls", "nls", "bayes")

#: the fewest samples :func:`fit` accepts: fewer cannot show a loop, and a model with as
#: many parameters as samples fits them exactly whatever it is
MIN_FIT_SAMPLES = 32


def fit_bayes(*args, **kwargs):
    """:func:`rths_ident.estimators.offline.bayesian.fit_bayes` (imports NumPyro lazily)."""
    from rths_ident.estimators.offline.bayesian import fit_bayes as _fit_bayes

    return _fit_bayes(*args, **kwargs)


def fit(data: FitData, model: str, method: str = "nls", **options) -> FitResult:
    """Fit ``model`` (a name of :data:`rths_ident.models.MODELS`, :func:`fittable_models`)
    to ``data`` by ``method`` (``ls``, ``nls`` or ``bayes``); ``options`` go to
    :func:`fit_ls`/:func:`fit_nls`/:func:`fit_bayes`."""
    if model not in fittable_models():
        raise ParameterError(f"unknown model {model!r}: expected one of {' | '.join(fittable_models())}")
    functions = {"ls": fit_ls, "nls": fit_nls, "bayes": fit_bayes}
    if method not in functions:
        raise ParameterError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    if data.n_samples < MIN_FIT_SAMPLES:
        raise ParameterError(f"{data.source}: a fit needs at least {MIN_FIT_SAMPLES} samples; got {data.n_samples}")
    result = functions[method](data, model, **options)
    # every method, every model: a parameter on a bound of its search box is said
    if method == "ls":  # its own box: the searched coordinates and the coefficients' signs
        flags = result.details.pop("at_bound")
    else:
        same_box = dict(free_A=options.get("free_A", False), substeps=options.get("substeps"),
                        fixed=options.get("fixed"), form=result.details.get("form"))
        flags = parameters_at_bounds(data, model, result.params, posterior=result.posterior, **same_box)
        if method == "bayes":  # the NLS point its chains started from
            flagged = {flag["parameter"] for flag in flags}
            flags += [{**flag, "where": "the NLS start of the chains"}
                      for flag in parameters_at_bounds(data, model, result.details["nls_start_params"], **same_box)
                      if flag["parameter"] not in flagged]
    result.warnings.extend({"code": "parameter_at_bound", **flag} for flag in flags)
    return result


def fit_all(data: FitData, method: str = "nls", models=None,
            progress: Callable[[str], None] | None = None, **options) -> list[FitResult]:
    """Fit every model in ``models`` (default: all that ``method`` supports) and return
    the results ranked by force NRMSE, best first."""
    if models is None:
        models = ls_models() if method == "ls" else fittable_models()
    results = []
    for model in models:
        if progress is not None:
            progress(f"fitting {model} ({method}) ...")
        model_options = dict(options)
        if model not in substep_models():
            model_options.pop("substeps", None)  # only the Bouc–Wen models have sub-steps
        results.append(fit(data, model, method, progress=progress, **model_options))
    return sorted(results, key=lambda r: r.nrmse_percent)
