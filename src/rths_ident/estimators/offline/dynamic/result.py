"""The outcome of a dynamic (output-error) fit and its JSON form."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rths_ident.estimators.offline.dynamic.record import DynamicRecord
from rths_ident.estimators.offline.result import _jsonable

__all__ = ["DynamicFitResult", "Prediction", "output_metrics"]


def output_metrics(simulated: np.ndarray, measured: np.ndarray) -> dict:
    """rmse (the output's SI unit), NRMSE against rms and range of the measured output [%]."""
    error = np.asarray(simulated) - np.asarray(measured)
    rmse = float(np.sqrt(np.mean(error**2)))
    return {"rmse": rmse, "nrmse_rms_percent": 100.0 * rmse / float(np.sqrt(np.mean(np.square(measured)))),
            "nrmse_range_percent": 100.0 * rmse / float(np.ptp(measured)), "samples": int(error.size)}


@dataclasses.dataclass
class Prediction:
    """Measured and simulated output over samples ``start`` … ``stop − 1`` of ``record``
    (its role: ``fit``, ``held-out`` or ``validation``)."""

    role: str
    record: DynamicRecord
    start: int
    stop: int
    simulated: np.ndarray  # SI, the whole record
    metrics: dict

    @property
    def time(self) -> np.ndarray:
        return self.record.time[self.start:self.stop]

    @property
    def measured_part(self) -> np.ndarray:
        return self.record.output[self.start:self.stop]

    @property
    def simulated_part(self) -> np.ndarray:
        return self.simulated[self.start:self.stop]

    def to_json_dict(self) -> dict:
        return {"record": self.record.source, "range": [self.start, self.stop], **self.metrics}


@dataclasses.dataclass
class DynamicFitResult:
    """An identified single-degree-of-freedom oscillator with a registered model as its
    restoring force.

    params : every field in SI (m, c, then the model's; held ones included); ``fitted``
        the estimated ones; ``units`` their units.
    standard_errors : SI standard error per fitted field (delta method from the
        coordinates' covariance; None where not identifiable); ``correlation`` the
        fields' correlation matrix (``correlation_names`` its order).
    predictions : the fit part, held-out periods and validation records.
    details : linear start, stages, timing, settings.
    """

    model: str
    record: DynamicRecord
    params: dict[str, float]
    fitted: list[str]
    units: dict[str, str]
    standard_errors: dict[str, float | None]
    correlation_names: list[str]
    correlation: np.ndarray
    predictions: list[Prediction]
    identifiability: dict
    simulation: dict
    sign_region: str | None = None
    noise: dict | None = None
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    spec: Any = None  # the fit's DynamicSpec (not in the JSON)
    coordinates: np.ndarray | None = None  # its coordinates at the optimum (not in the JSON)

    def simulate(self, record: DynamicRecord, substeps: int | None = None, output_sampling: str | None = None):
        """The identified oscillator's output on ``record``'s input [the output's SI
        unit], simulated as in the fit (or with other ``substeps``/``output_sampling``)."""
        from rths_ident.estimators.offline.dynamic.problem import SimulationSettings, Simulator  # noqa: PLC0415

        settings = SimulationSettings(substeps or self.simulation["substeps"], self.simulation["interpolation"],
                                      output_sampling or self.simulation["output_sampling"])
        return Simulator(self.spec, record, settings).si_output(self.coordinates)

    def prediction(self, role: str) -> Prediction | None:
        return next((p for p in self.predictions if p.role == role), None)

    @property
    def fit_rmse(self) -> float:
        return self.prediction("fit").metrics["rmse"]

    @property
    def validation(self) -> Prediction | None:
        """The validation record's prediction, else the held-out periods'."""
        return self.prediction("validation") or self.prediction("held-out")

    def to_json_dict(self) -> dict:
        out = {
            "kind": "dynamic",
            "model": self.model,
            "method": "output-error",
            "input": self.record.input_kind,
            "output": self.record.output_kind,
            "output_unit": self.record.output_unit,
            "params": {k: float(v) for k, v in self.params.items()},
            "fitted": list(self.fitted),
            "units": dict(self.units),
            "standard_errors": self.standard_errors,
            "correlation": {"names": list(self.correlation_names), "matrix": self.correlation},
            "fit": self.prediction("fit").to_json_dict(),
        }
        if self.sign_region is not None:
            out["sign_region"] = self.sign_region
        validation = self.validation
        if validation is not None:
            out["validation"] = {"role": validation.role, **validation.to_json_dict()}
        held_out = self.prediction("held-out")
        if held_out is not None and validation is not held_out:
            out["held_out"] = held_out.to_json_dict()
        if self.noise is not None:
            out["noise"] = self.noise
        out.update({"simulation": self.simulation, "identifiability": self.identifiability,
                    "source": self.record.source, "n_samples": self.record.n_samples, "dt": self.record.dt,
                    "period": self.record.period, "details": self.details})
        return _jsonable(out)
