"""What a dynamic fit estimates: the oscillator's mass m and damping c, and the
registered model's own fit coordinates (its registry entry's ``ModelFit``), in the
normalised units of the record.

Units (:class:`~rths_ident.estimators.offline.fit_data.Scales`), from the linear
oscillator fitted to the record's frequency response (k_lin, m_lin,
:mod:`.linear_start`): time T_s = 1/ω_n = √(m_lin/k_lin), displacement X_s = the peak
displacement of the response, force F_s = k_lin X_s. In them the linear oscillator has
m̃ = k̃ = 1 and c̃ = 2ζ, so one set of bounds and starts serves any specimen:

* m̃ in [0.2, 5] (log), c̃ in [0, max(2, 4 c̃_lin)];
* the model's coordinates with the bounds of its quasi-static fit, its stiffness-like
  coordinates (unit N/m) narrowed to [0.05, 20] k_lin: the linear fit pins the
  stiffness the response sees;
* fields of the model with the unit of a mass (kg) or of a viscous damping (N·s/m) are
  held at 0: the oscillator's m and c carry them (both would not be identifiable).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.fit_data import Scales
from rths_ident.estimators.offline.model_specs import FreeParameter, ModelSpec, spec_for_context
from rths_ident.models.fit_specification import FitContext
from rths_ident.models.registry import MODELS

__all__ = ["DynamicSpec", "dynamic_spec", "OSCILLATOR_UNITS", "element_config"]

#: the oscillator's own parameters and their SI units
OSCILLATOR_UNITS = {"m": "kg", "c": "N*s/m"}
_MASS, _VISCOUS, _STIFFNESS = (1, -1, 2), (1, -1, 1), (1, -1, 0)


def element_config(model: str) -> dict:
    """Static Params fields a dynamic fit sets: the second-order (trapezoidal) update of
    the hysteretic variable with one sub-increment per time sub-step, for models that
    offer it (Bouc–Wen's ``rule``); nothing for the others (their own default
    sub-increments)."""
    names = {f.name for f in dataclasses.fields(MODELS[model].model.Params)}
    return {"rule": "trapezoidal", "substeps": 1} if "rule" in names else {}


@dataclasses.dataclass(frozen=True)
class DynamicSpec:
    """The coordinates of a dynamic fit: the oscillator's (``oscillator``: free m, c)
    then the model's (``element.free``), normalised by ``scales``."""

    element: ModelSpec
    oscillator: tuple[FreeParameter, ...]
    oscillator_held: dict  # normalised m and/or c held by the user
    scales: Scales

    @property
    def model(self) -> str:
        return self.element.name

    @property
    def free(self) -> tuple[FreeParameter, ...]:
        return self.oscillator + self.element.free

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.free]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [p.coordinate_bounds() for p in self.free]
        return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])

    def start(self) -> np.ndarray:
        return np.array([p.to_coordinate(p.start) for p in self.free], dtype=float)

    def log_flags(self) -> list[bool]:
        return [p.log for p in self.free]

    def oscillator_values(self, q):
        """(m̃, c̃), traceable."""
        values = dict(self.oscillator_held)
        for i, p in enumerate(self.oscillator):
            values[p.name] = jnp.exp(q[i]) if p.log else q[i]
        return values["m"], values["c"]

    def element_fields(self, q) -> dict:
        return self.element.fields(q[len(self.oscillator):])

    def element_params(self, q):
        return self.element.params(q[len(self.oscillator):])

    def physical_fields(self, q) -> dict:
        """Every field in SI (m, c, then the model's), traceable (for the standard errors
        of derived fields by the delta method)."""
        s = self.scales
        m, c = self.oscillator_values(q)
        out = {"m": m * s.force * s.time**2 / s.displacement, "c": c * s.force * s.time / s.displacement}
        fields = self.element_fields(q)
        for name, value in fields.items():
            a, b, t = self.element.dimensions[name]
            if b == "-n":
                b = -fields["n"]
            out[name] = value * s.force**a * s.displacement**b * s.time**t
        return out

    def units(self) -> dict[str, str]:
        from rths_ident._params import units_of  # noqa: PLC0415

        return {**OSCILLATOR_UNITS, **{k: v for k, v in units_of(self.element.model.Params).items()
                                       if k in self.element.dimensions and k not in self.element.config}}

    def fitted_names(self) -> list[str]:
        """The SI fields that are estimated (the free coordinates and what they derive)."""
        held = set(self.oscillator_held) | set(self.element.held)
        return [name for name in self.physical_fields(jnp.asarray(self.start())) if name not in held]


def dynamic_spec(model: str, context: FitContext, scales: Scales, linear_damping: float, *,
                 fixed: dict[str, float] | None = None, form: str | None = None) -> DynamicSpec:
    """The :class:`DynamicSpec` of ``model`` (module docstring). ``linear_damping``: c̃ of
    the linear fit; ``fixed``: SI values of m, c or the model's fields to hold."""
    fixed = dict(fixed or {})
    oscillator_fixed = {name: fixed.pop(name) for name in list(fixed) if name in OSCILLATOR_UNITS}
    # m and c name the oscillator's; a model's own mass/damping fields are held at 0
    element = spec_for_context(model, context, scales, fixed=fixed or None, form=form, config=element_config(model))
    element = _hold_rate_fields(element)
    element = _narrow_stiffness(element)
    held = {}
    for name, value in oscillator_fixed.items():
        if not (np.isfinite(value) and value > 0.0 if name == "m" else np.isfinite(value) and value >= 0.0):
            raise ParameterError(f"--fix {name}={value}: {'the mass must be > 0' if name == 'm' else 'the damping must be ≥ 0'} "
                                 f"[{OSCILLATOR_UNITS[name]}]")
        dims = _MASS if name == "m" else _VISCOUS
        held[name] = float(value) / (scales.force**dims[0] * scales.displacement**dims[1] * scales.time**dims[2])
    oscillator = []
    if "m" not in held:
        oscillator.append(FreeParameter("m", 0.2, 5.0, 1.0))
    if "c" not in held:
        oscillator.append(FreeParameter("c", 0.0, max(2.0, 4.0 * linear_damping), max(linear_damping, 1e-3), log=False))
    return DynamicSpec(element, tuple(oscillator), held, scales)


def _hold_rate_fields(spec: ModelSpec) -> ModelSpec:
    """Free fields with the unit of a mass or of a viscous damping → held at 0."""
    rate = [p.name for p in spec.free if spec.dimensions.get(p.name) in (_MASS, _VISCOUS)]
    held = dict(spec.held)
    held.update({name: 0.0 for name in rate})
    held.update({name: 0.0 for name, dims in spec.dimensions.items() if dims in (_MASS, _VISCOUS) and name in held})
    free = tuple(p for p in spec.free if p.name not in rate)
    forms = {form: tuple(n for n in names if n not in rate) for form, names in spec.forms.items()}
    return dataclasses.replace(spec, free=free, held=held, forms=forms)


def _narrow_stiffness(spec: ModelSpec) -> ModelSpec:
    free = []
    for p in spec.free:
        if spec.dimensions.get(p.name) == _STIFFNESS and p.log:
            low, high = max(p.low, 0.05), min(p.high, 20.0)
            p = dataclasses.replace(p, low=low, high=high, start=float(np.clip(p.start, low, high)))
        free.append(p)
    return dataclasses.replace(spec, free=tuple(free))
