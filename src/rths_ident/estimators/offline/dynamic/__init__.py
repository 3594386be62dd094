"""Output-error identification of dynamic tests: a single-degree-of-freedom oscillator
m ÿ + c ẏ + F_model = u (or −m a_g) with a registered model as its restoring force,
identified from an input and a measured output by simulating the model's own ``step``
(``rths-ident fit FILE --dynamic``; docs/fitting.md, "Dynamic tests")."""

from __future__ import annotations

from rths_ident.estimators.offline.dynamic.fit import STEP_RATIO, default_substeps, fit_dynamic, scored_ranges
from rths_ident.estimators.offline.dynamic.input_interpolation import INTERPOLATIONS, interpolate_input
from rths_ident.estimators.offline.dynamic.linear_start import LinearOscillator, fit_linear_oscillator
from rths_ident.estimators.offline.dynamic.noise import between_period_noise, noise_corrected_error
from rths_ident.estimators.offline.dynamic.oscillator import simulate_substeps
from rths_ident.estimators.offline.dynamic.output_sampling import OUTPUT_SAMPLINGS, sample_output
from rths_ident.estimators.offline.dynamic.problem import OutputErrorProblem, SimulationSettings, Simulator
from rths_ident.estimators.offline.dynamic.record import INPUT_KINDS, OUTPUT_KINDS, DynamicRecord, detect_period
from rths_ident.estimators.offline.dynamic.result import DynamicFitResult, Prediction, output_metrics

__all__ = [
    "DynamicRecord", "INPUT_KINDS", "OUTPUT_KINDS", "detect_period",
    "INTERPOLATIONS", "interpolate_input", "OUTPUT_SAMPLINGS", "sample_output",
    "simulate_substeps", "SimulationSettings", "Simulator", "OutputErrorProblem",
    "LinearOscillator", "fit_linear_oscillator",
    "between_period_noise", "noise_corrected_error",
    "fit_dynamic", "default_substeps", "scored_ranges", "STEP_RATIO",
    "DynamicFitResult", "Prediction", "output_metrics",
]
