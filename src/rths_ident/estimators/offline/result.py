"""The outcome of an offline fit, and its JSON form."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rths_ident._params import units_of
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.goodness import goodness_of_fit

__all__ = ["FitResult", "make_result"]


@dataclasses.dataclass
class FitResult:
    """Identified parameters (SI), the fitted force history [N] and the fit quality.

    ``params``: every field of the model's Params in SI units (``units``), the held ones
    included; ``fitted``: the names that were estimated. ``nrmse_percent`` is
    rms(F_fit − F_meas)/(max F_meas − min F_meas)·100 (see
    :mod:`rths_ident.estimators.offline.goodness`); ``nrmse_rms_percent`` the rms form.
    ``posterior`` (Bayesian fits): per parameter ``mean, sd, hdi_3%, hdi_97%, r_hat,
    ess_bulk``. ``details``: method-specific information (starts, costs, iterations).
    """

    model: str
    method: str
    params: dict[str, float]
    fitted: list[str]
    units: dict[str, str]
    data: FitData
    fitted_force: np.ndarray
    goodness: dict[str, float]
    posterior: dict[str, dict[str, float]] | None = None
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    inference_data: Any = None  # ArviZ InferenceData of a Bayesian fit (not in JSON)
    #: results not to be trusted without a look, each ``{"code": ..., ...}`` (e.g.
    #: ``parameter_at_bound``: :mod:`rths_ident.estimators.offline.bound_check`)
    warnings: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def nrmse_percent(self) -> float:
        return self.goodness["nrmse_percent"]

    @property
    def nrmse_rms_percent(self) -> float:
        return self.goodness["nrmse_rms_percent"]

    @property
    def n_samples(self) -> int:
        return self.data.n_samples

    def to_json_dict(self) -> dict[str, Any]:
        out = {
            "model": self.model,
            "method": self.method,
            "params": {k: float(v) for k, v in self.params.items()},
            "fitted": list(self.fitted),
            "units": dict(self.units),
            "nrmse_percent": self.goodness["nrmse_percent"],
            "nrmse_rms_percent": self.goodness["nrmse_rms_percent"],
            "r_squared": self.goodness["r_squared"],
            "nrmse_definition": "rms(F_fit - F_meas) / (max F_meas - min F_meas) * 100",
            "n_samples": self.n_samples,
            "time_is_physical": self.data.time_is_physical,
            "source": self.data.source,
        }
        if self.posterior is not None:
            out["posterior"] = self.posterior
        out["warnings"] = _jsonable(self.warnings)
        details = dict(self.details)
        for key in ("form", "identifiability", "sign_region"):  # shown at the top level
            if key in details:
                out[key] = _jsonable(details.pop(key))
        if details:
            out["details"] = _jsonable(details)
        return out


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None  # JSON has no inf/NaN
    if isinstance(value, np.integer):
        return value.item()
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    return value


def make_result(model_name: str, method: str, model_class, params_si: dict, fitted: list[str],
                data: FitData, fitted_force, posterior=None, details=None, config=None) -> FitResult:
    """Assemble a :class:`FitResult`; validates ``params_si`` through the model's Params
    (``config``: static fields such as ``substeps``, not reported as parameters)."""
    validated = model_class.Params(**params_si, **(config or {}))  # ParameterError if out of range
    details = dict(details or {})
    region = getattr(validated, "sign_region", None)  # Bouc–Wen: softening / linear loading / hardening
    if region is not None:
        details["sign_region"] = region
    fitted_force = np.asarray(fitted_force, dtype=float)
    return FitResult(
        model=model_name,
        method=method,
        params={k: float(v) for k, v in params_si.items()},
        fitted=list(fitted),
        units={name: unit for name, unit in units_of(model_class.Params).items()
               if not isinstance(getattr(validated, name), str)},  # not the static choices (rule)
        data=data,
        fitted_force=fitted_force,
        goodness=goodness_of_fit(fitted_force, data.force),
        posterior=posterior,
        details=details,
    )
