"""The fit of one registered model to one record: free parameters, bounds, starts, units.

What a model fits (which fields, on which coordinates, bounds, starts, held values,
nested forms) is the model's own data, in its registry entry
(:attr:`ModelEntry.fit <rths_ident.models.entry.ModelEntry>`, declared at the end of
its module in :mod:`rths_ident.models`). This module turns it into a :class:`ModelSpec`
for one record and applies the user's options (fixed values, sub-steps, a form).

All values are in the *normalised* units of :mod:`rths_ident.estimators.offline.fit_data`
(x̃ = x/X_s, F̃ = F/F_s, t̃ = t/T_s), so the bounds fit any specimen. Each parameter
field has a physical dimension F^a·X^b·T^c, read from the unit of its Params field
(:func:`dimension_of_unit`: N, m, s, kg, J and their products and powers) and converts
back as ``value · F_s^a · X_s^b · T_s^c`` — except a unit ``1/m^n`` (Bouc–Wen β and γ,
which multiply |z|^n), whose power of X is −n.

The optimisers work on the coordinate vector ``q`` inside box bounds, and
:meth:`ModelSpec.fields` maps ``q`` to the model's parameter fields (pure,
JAX-traceable, used inside ``lax.scan``/``jacfwd``/NUTS).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

import jax.numpy as jnp
import numpy as np

from rths_ident._params import check_value, units_of
from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.fit_data import FitData, Scales
from rths_ident.models.fit_specification import FitContext, FreeParameter
from rths_ident.models.registry import MODELS

__all__ = ["FreeParameter", "ModelSpec", "fittable_models", "substep_models", "model_spec", "model_class",
           "dimension_of_unit", "fit_context", "initial_stiffness", "hysteretic_energy", "spec_for_context"]


def fittable_models() -> tuple[str, ...]:
    """Names of the registered models that the fitters accept (``rths-ident fit --model``)."""
    return MODELS.names()


def substep_models() -> tuple[str, ...]:
    """Registered models whose Params have a static ``substeps`` field (sub-increments of
    the hysteretic update)."""
    return tuple(name for name, entry in MODELS.items()
                 if "substeps" in {f.name for f in dataclasses.fields(entry.model.Params)})


def model_class(name: str):
    """The :mod:`rths_ident.models` class registered under ``name``."""
    return MODELS[name].model


# unit symbol -> (force power, displacement power, time power)
_BASE_DIMENSIONS = {"N": (1, 0, 0), "m": (0, 1, 0), "s": (0, 0, 1), "kg": (1, -1, 2), "J": (1, 1, 0)}
_UNIT_FACTOR = re.compile(r"^([A-Za-z]+)(?:\^(-?\d+|n))?$")


def dimension_of_unit(unit: str) -> tuple:
    """(a, b, c) with unit = N^a·m^b·s^c: ``"N/m"`` → (1, −1, 0), ``"kg"`` → (1, −1, 2),
    ``"1/J"`` → (−1, −1, 0), ``"-"`` → (0, 0, 0); a power ``^n`` of m (``"1/m^n"``) gives
    b = ``"-n"`` (its value depends on the exponent n)."""
    text = unit.replace(" ", "")
    if text in ("-", "", "1"):
        return (0, 0, 0)
    numerator, _, denominator = text.partition("/")
    total = [0, 0, 0]
    symbolic = False
    for part, sign in ((numerator, 1), (denominator, -1)):
        for factor in filter(None, part.split("*")):
            if factor == "1":
                continue
            match = _UNIT_FACTOR.match(factor)
            if match is None or match.group(1) not in _BASE_DIMENSIONS:
                raise ParameterError(f"unit {unit!r}: cannot read {factor!r} (known: {', '.join(_BASE_DIMENSIONS)}, "
                                     f"products with *, one /, powers ^k)")
            symbol, power = match.group(1), match.group(2)
            if power == "n":
                if symbol != "m" or sign != -1:
                    raise ParameterError(f"unit {unit!r}: only 1/m^n may carry the exponent n")
                symbolic = True
                continue
            exponent = sign * (int(power) if power else 1)
            for i, value in enumerate(_BASE_DIMENSIONS[symbol]):
                total[i] += exponent * value
    if symbolic:
        if total != [0, 0, 0]:
            raise ParameterError(f"unit {unit!r}: 1/m^n may not be combined with other units")
        return (0, "-n", 0)
    return tuple(total)


def _dimensions(model) -> dict:
    return {name: dimension_of_unit(unit) for name, unit in units_of(model.Params).items()}


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """The fit of one model to one data set (normalised units)."""

    name: str
    free: tuple[FreeParameter, ...]
    held: dict  # field -> normalised value
    dimensions: dict  # field -> (a, b, c)
    derived: Callable[[dict], dict] | None = None  # extra field rules, e.g. γ = (γ/β)·β
    includes_inertia: bool = False  # linear element: add m·a to the restoring force
    config: dict = dataclasses.field(default_factory=dict)  # static Params fields, e.g. substeps
    # nested forms (pinching model): form name -> free coordinate names, smallest first; the
    # coordinates a form leaves out are held at ``off`` (coordinate values that switch the
    # mechanism off, e.g. ζ_s = 0). Empty: one form, every coordinate of ``free`` fitted.
    forms: dict = dataclasses.field(default_factory=dict)
    off: dict = dataclasses.field(default_factory=dict)

    @property
    def model(self):
        return MODELS[self.name].model

    def coordinates_of(self, fields: dict) -> dict:
        """Normalised values of the free coordinates for concrete normalised ``fields``
        (e.g. γ/β from γ and β)."""
        coordinates = MODELS[self.name].fit.coordinates_of(fields)
        return {p.name: coordinates[p.name] for p in self.free}

    @property
    def free_names(self) -> list[str]:
        return [p.name for p in self.free]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [p.coordinate_bounds() for p in self.free]
        return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])

    def start(self) -> np.ndarray:
        return np.array([p.to_coordinate(p.start) for p in self.free], dtype=float)

    def form_indices(self, form: str) -> np.ndarray:
        """Indices into ``free`` of the coordinates that ``form`` fits."""
        if form not in self.forms:
            raise ParameterError(f"model {self.name!r} has no form {form!r}; forms: {', '.join(self.forms) or 'none'}")
        active = set(self.forms[form])
        return np.array([i for i, p in enumerate(self.free) if p.name in active], dtype=int)

    def off_coordinates(self) -> np.ndarray:
        """Full coordinate vector with every form-optional coordinate at its ``off`` value
        and the others at their start."""
        q = self.start()
        for i, p in enumerate(self.free):
            if p.name in self.off:
                q[i] = self.off[p.name]
        return q

    def restricted(self, form: str) -> "ModelSpec":
        """The spec of one form alone: its coordinates free, the others held at ``off``."""
        indices = set(self.form_indices(form).tolist())
        held = dict(self.held)
        q_off = self.off_coordinates()
        for i, p in enumerate(self.free):
            if i not in indices:
                held[p.name] = float(np.exp(q_off[i]) if p.log else q_off[i])
        free = tuple(p for i, p in enumerate(self.free) if i in indices)
        return dataclasses.replace(self, free=free, held=held, forms={}, off={})

    def coordinate_values(self, q) -> dict:
        """Normalised values of the free coordinates (traceable)."""
        return {p.name: (jnp.exp(q[i]) if p.log else q[i]) for i, p in enumerate(self.free)}

    def fields(self, q) -> dict:
        """All parameter fields of the model, normalised (traceable)."""
        values = dict(self.held)
        values.update(self.coordinate_values(q))
        if self.derived is not None:
            values = self.derived(values)
        return values

    def params(self, q):
        """The model's Params container for coordinate vector ``q`` (normalised units)."""
        return self.model.Params(**self.fields(q), **self.config)

    def to_physical(self, normalised_fields: dict, scales: Scales) -> dict[str, float]:
        """Physical (SI) values of normalised fields."""
        out = {}
        for name, value in normalised_fields.items():
            a, b, c = self.dimensions[name]
            if b == "-n":
                b = -float(normalised_fields["n"])
            out[name] = float(value) * scales.force**a * scales.displacement**b * scales.time**c
        return out

    def to_normalised(self, physical_fields: dict, scales: Scales) -> dict[str, float]:
        """Inverse of :meth:`to_physical`."""
        out = {}
        for name, value in physical_fields.items():
            a, b, c = self.dimensions[name]
            if b == "-n":
                b = -float(physical_fields["n"])
            out[name] = float(value) / (scales.force**a * scales.displacement**b * scales.time**c)
        return out


def initial_stiffness(x_normalised: np.ndarray, f_normalised: np.ndarray, fraction: float = 0.15) -> float:
    """Slope of F̃ against x̃ over the first samples, until |x̃| first exceeds ``fraction``.

    A starting value for elastic stiffnesses (normalised units); at least 5 samples.
    """
    beyond = np.flatnonzero(np.abs(x_normalised) > fraction)
    end = max(5, int(beyond[0]) if beyond.size else x_normalised.size)
    x = x_normalised[:end] - x_normalised[0]
    f = f_normalised[:end] - f_normalised[0]
    denominator = float(x @ x)
    slope = float(x @ f) / denominator if denominator > 0 else 1.0
    secant = 1.0  # max|F̃| / max|x̃|
    return float(np.clip(slope if slope > 0 else secant, 0.2, 500.0))


def hysteretic_energy(x_normalised: np.ndarray, f_normalised: np.ndarray) -> float:
    """Net work ∮F̃ dx̃ of the record (trapezoidal), in normalised units: the energy the
    specimen dissipated, which sets the scale of the energy-driven degradation rates
    (rate × energy is dimensionless). Floored at 0.05 (an almost elastic record)."""
    work = float(np.sum(0.5 * (f_normalised[1:] + f_normalised[:-1]) * np.diff(x_normalised)))
    return max(work, 0.05)


def model_spec(name: str, data: FitData, *, free_A: bool = False, substeps: int | None = None,
               fixed: dict[str, float] | None = None, form: str | None = None) -> ModelSpec:
    """Free/held parameters, bounds and starts of the registered model ``name`` for ``data``.

    ``fixed``: parameters to hold at known values, in SI (e.g. ``{"n": 1.0}`` for
    Bouc–Wen, as seed 001 does "to avoid numerical problems"; ``{"k_h": 0.0}``). Only
    model fields that are estimated by default and whose unit does not depend on another
    parameter can be fixed.

    ``substeps`` (models with a ``substeps`` field, :func:`substep_models`):
    backward-Euler sub-increments per sample of the hysteretic variable (None: the
    model's default). The update's O(Δx) error biases β, γ when samples are coarse; more
    sub-steps reduce it proportionally at a proportional cost.

    ``form`` (models with nested forms, e.g. pinching-boucwen): the spec of that form
    alone; None keeps every coordinate with the nested ``forms`` for the form selection.
    """
    return spec_for_context(name, fit_context(data, free_A), data.scales(), substeps=substeps, fixed=fixed,
                            form=form)


def spec_for_context(name: str, context: FitContext, scales: Scales, *, substeps: int | None = None,
                     fixed: dict[str, float] | None = None, form: str | None = None,
                     config: dict | None = None) -> ModelSpec:
    """:func:`model_spec` for a record described by its :class:`FitContext` and unit
    ``scales`` alone (the dynamic fits, whose record has no measured force);
    ``config``: further static Params fields (e.g. Bouc–Wen ``rule``)."""
    spec = _model_spec(name, context)
    if fixed:
        spec = _hold(spec, dict(fixed), scales)
    if form is not None:
        if not spec.forms:
            with_forms = [n for n, entry in MODELS.items() if entry.fit.forms]
            raise ParameterError(f"form applies to {', '.join(with_forms)}, not to {name!r}")
        spec = spec.restricted(form)
    if substeps is not None:
        if name not in substep_models():
            raise ParameterError(f"substeps applies to {', '.join(substep_models())}, not to {name!r}")
        if int(substeps) != substeps or substeps < 1:
            raise ParameterError(f"substeps must be a positive integer; got {substeps!r}")
        spec = dataclasses.replace(spec, config={"substeps": int(substeps)})
    if config:
        spec = dataclasses.replace(spec, config={**spec.config, **config})
    return spec


def _hold(spec: ModelSpec, fixed: dict, scales: Scales) -> ModelSpec:
    """Move ``fixed`` (SI values) from the free coordinates to the held fields."""
    fixable = [p.name for p in spec.free if p.name in spec.dimensions and spec.dimensions[p.name][1] != "-n"]
    unknown = [n for n in fixed if n not in fixable]
    if unknown:
        raise ParameterError(
            f"cannot fix {', '.join(map(repr, unknown))} of model {spec.name!r}; fixable parameters: {', '.join(fixable)}"
        )
    normalised = spec.to_normalised({k: float(v) for k, v in fixed.items()}, scales)
    held = dict(spec.held)
    held.update(normalised)
    free = tuple(p for p in spec.free if p.name not in fixed)
    if not free:
        raise ParameterError(f"every parameter of {spec.name!r} is fixed: nothing to estimate")
    forms = {form: tuple(n for n in names if n not in fixed) for form, names in spec.forms.items()}
    off = {n: v for n, v in spec.off.items() if n not in fixed}
    # validate the fixed values against the model's own ranges (SI)
    for name, value in fixed.items():
        meta = next(f.metadata for f in dataclasses.fields(spec.model.Params) if f.name == name)
        check_value(spec.model.Params.__name__, name, float(value), meta)
    return dataclasses.replace(spec, free=free, held=held, forms=forms, off=off)


def fit_context(data: FitData, free_A: bool = False) -> FitContext:
    """What a model's fit specification reads from ``data`` (normalised units)."""
    x, f, _ = data.normalised()
    return FitContext(initial_stiffness(x, f), hysteretic_energy(x, f), data.time_is_physical, free_A)


def _model_spec(name: str, context: FitContext) -> ModelSpec:
    entry = MODELS[name]
    free, held = entry.fit.parameters(context)
    return ModelSpec(name, tuple(free), dict(held), _dimensions(entry.model), entry.fit.fields_from_coordinates,
                     includes_inertia=hasattr(entry.model, "inertia_force"), forms=dict(entry.fit.forms),
                     off=dict(entry.fit.off))
