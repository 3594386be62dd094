"""What a model declares so that it can be fitted offline (the data; the fitting machinery
is :mod:`rths_ident.estimators.offline`).

A model's registry entry (:mod:`rths_ident.models.registry`) holds

* a :class:`ModelFit`: which parameter fields are estimated, on which coordinates
  (log or plain), with which bounds and starts, and which are held, for a given record
  (:class:`FitContext`). Everything is in the *normalised* units of
  :mod:`rths_ident.estimators.offline.fit_data` (x̃ = x/X_s, F̃ = F/F_s, t̃ = t/T_s), so
  the bounds fit any specimen; each field converts back to SI by the dimension of its
  unit (``field_range(unit=...)``);
* optionally a :class:`LinearInParameters` form: the force is linear in some parameters
  once the others are given, F̃ = Φ(s) θ (what ``rths-ident fit --method ls`` solves).

Free parameters are fitted in *log* coordinates when they are positive and span decades
(stiffnesses, forces, β) and in plain coordinates on a bounded interval otherwise
(ratios such as α, b, γ/β, the exponent n).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

__all__ = ["FreeParameter", "FitContext", "FitParameters", "ModelFit", "SeparableProblem",
           "LinearInParameters"]


@dataclasses.dataclass(frozen=True)
class FreeParameter:
    """One fitted coordinate: bounds and start in normalised units; ``log`` coordinates."""

    name: str
    low: float
    high: float
    start: float
    log: bool = True

    def to_coordinate(self, value):
        return np.log(value) if self.log else value

    def coordinate_bounds(self) -> tuple[float, float]:
        return (float(np.log(self.low)), float(np.log(self.high))) if self.log else (self.low, self.high)


class FitContext(NamedTuple):
    """What a model's fit specification may read from the record (normalised units).

    initial_stiffness : slope F̃/x̃ over the first samples (a start for stiffnesses).
    dissipated_energy : ∮F̃ dx̃ of the record (sets the scale of energy-driven rates).
    time_is_physical : False for a quasi-static record on a pseudo-time axis (then
        rate terms are held at 0).
    free_A : the user asked to estimate Bouc–Wen's A too (``--free-A``).
    """

    initial_stiffness: float
    dissipated_energy: float
    time_is_physical: bool
    free_A: bool = False


class FitParameters(NamedTuple):
    """The estimated coordinates and the held fields (normalised values)."""

    free: tuple[FreeParameter, ...]
    held: dict


@dataclasses.dataclass(frozen=True)
class ModelFit:
    """How a model is fitted: the parameters for a record and the coordinate rules.

    parameters : ``(FitContext) -> FitParameters``.
    fields_from_coordinates : coordinates that are not fields (e.g. γ/β) → fields
        (e.g. γ = (γ/β)·β); pure and traceable. None: every coordinate is a field.
    coordinates_from_fields : its inverse on concrete values (fields → every
        coordinate). None: the identity.
    forms : nested forms, smallest first: form name → the coordinates it frees; the
        coordinates a form leaves out are held at ``off`` (coordinate values that switch
        a mechanism off, e.g. ζ_s = 0). Empty: one form, every coordinate fitted.
    """

    parameters: Callable[[FitContext], FitParameters]
    fields_from_coordinates: Callable[[dict], dict] | None = None
    coordinates_from_fields: Callable[[dict], dict] | None = None
    forms: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    off: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def coordinates_of(self, fields: dict) -> dict:
        """Coordinate values (normalised) of concrete field values."""
        return dict(fields) if self.coordinates_from_fields is None else self.coordinates_from_fields(dict(fields))


@dataclasses.dataclass(frozen=True)
class SeparableProblem:
    """F̃ = Φ(s) θ, with s the searched coordinates and θ the coefficients solved by
    bounded linear least squares.

    outer : the searched coordinates s (bounds and starts, normalised).
    linear_names : names of the entries of θ.
    linear_lower, linear_upper : bounds of θ.
    regressors : ``(s: dict, record) -> Φ`` (N, len(θ)), traceable; ``record`` is
        (x̃, ṽ, ã, F̃, Δt̃) of :func:`rths_ident.estimators.offline.simulation.normalised_record`.
    to_fields : ``(s: dict, θ) -> model fields`` (normalised).
    """

    outer: tuple[FreeParameter, ...]
    linear_names: tuple[str, ...]
    linear_lower: np.ndarray
    linear_upper: np.ndarray
    regressors: Callable[[dict, Any], Any]
    to_fields: Callable[[dict, Any], dict]


@dataclasses.dataclass(frozen=True)
class LinearInParameters:
    """A model's linear-in-parameters form for batch least squares.

    build : ``(free: {name: FreeParameter}, held: dict, config: dict,
        time_is_physical: bool) -> SeparableProblem`` from the model's fit parameters
        for one record.
    linear : what enters linearly (for the docs and the error messages).
    searched : what is searched because it fixes the hysteretic variable ("" if none).
    holds_fixed : whether the form stays valid with user-fixed parameters (``--fix``).
    """

    build: Callable[[dict, dict, dict, bool], SeparableProblem]
    linear: str
    searched: str = ""
    holds_fixed: bool = False
