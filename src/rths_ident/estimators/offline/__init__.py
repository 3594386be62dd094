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
from rths_ident.estimators.offline.fit_data import PSEUDO_TIME_STEP_S, FitData, Scales
from rths_ident.estimators.offline.goodness import (
    coefficient_of_determination,
    goodness_of_fit,
    nrmse_range_percent,
    nrmse_rms_percent,
)
from rths_ident.estimators.offline.least_squares import LS_MODELS, bounded_linear_least_squares, fit_ls
from rths_ident.estimators.offline.linear_specimen import (
    FreeVibrationIdentification,
    StaticStiffness,
    free_vibration_peaks,
    identify_free_vibration,
    log_decrement,
    static_stiffness,
)
from rths_ident.estimators.offline.model_specs import MODEL_NAMES, SUBSTEP_MODELS, model_class, model_spec
from rths_ident.estimators.offline.nonlinear_least_squares import fit_nls
from rths_ident.estimators.offline.result import FitResult

__all__ = [
    "FitData",
    "Scales",
    "PSEUDO_TIME_STEP_S",
    "FitResult",
    "MODEL_NAMES",
    "METHODS",
    "LS_MODELS",
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
    "log_decrement",
    "free_vibration_peaks",
    "identify_free_vibration",
    "FreeVibrationIdentification",
]

#: fitting methods of :func:`fit`
METHODS = ("ls", "nls", "bayes")


def fit_bayes(*args, **kwargs):
    """:func:`rths_ident.estimators.offline.bayesian.fit_bayes` (imports NumPyro lazily)."""
    from rths_ident.estimators.offline.bayesian import fit_bayes as _fit_bayes

    return _fit_bayes(*args, **kwargs)


def fit(data: FitData, model: str, method: str = "nls", **options) -> FitResult:
    """Fit ``model`` (one of :data:`MODEL_NAMES`) to ``data`` by ``method`` (``ls``,
    ``nls`` or ``bayes``); ``options`` go to :func:`fit_ls`/:func:`fit_nls`/:func:`fit_bayes`."""
    if model not in MODEL_NAMES:
        raise ParameterError(f"unknown model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
    functions = {"ls": fit_ls, "nls": fit_nls, "bayes": fit_bayes}
    if method not in functions:
        raise ParameterError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    return functions[method](data, model, **options)


def fit_all(data: FitData, method: str = "nls", models=None,
            progress: Callable[[str], None] | None = None, **options) -> list[FitResult]:
    """Fit every model in ``models`` (default: all that ``method`` supports) and return
    the results ranked by force NRMSE, best first."""
    if models is None:
        models = LS_MODELS if method == "ls" else MODEL_NAMES
    results = []
    for model in models:
        if progress is not None:
            progress(f"fitting {model} ({method}) ...")
        model_options = dict(options)
        if model not in SUBSTEP_MODELS:
            model_options.pop("substeps", None)  # only the Bouc–Wen models have sub-steps
        results.append(fit(data, model, method, progress=progress, **model_options))
    return sorted(results, key=lambda r: r.nrmse_percent)
