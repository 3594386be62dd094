"""Which fitted parameters ended on (or near) a bound of their search box — for every
method (``ls``, ``nls``, ``bayes``) and every model alike, from the result alone.

A parameter on a bound is a result not to be trusted without a look: either the bound is
only the search box's (the optimum may lie outside it: widen it, fix the parameter, or
look at the data), or it is a limit of the model itself (LuGre σ2 = 0, α = 0, n = 1),
where the record may simply not determine the parameter (a LuGre fit of a hybrid test's
record returns σ2 = 0 where the truth is 101.7 N·s/m).

The check works on the fit's own coordinates (:mod:`.model_specs`: the log of scale
parameters, plain ratios) of the spec the fit used (same fixed values, sub-steps and
nested form). A point estimate (``ls``, ``nls``) is on a bound when its coordinate q lies
within ``AT_BOUND_FRACTION`` (10⁻⁴) of the box's width (high − low) from it: where a
bounded optimiser stops when the bound is active (the trust-region reflective steps of
``nls`` stop a few 10⁻⁶ of the width inside it; the identifiability report's stricter
``at_bound``, 10⁻⁶, misses those). A posterior (``bayes``) is on a bound when its mean lies within
``POSTERIOR_SDS`` posterior standard deviations of it (the data do not keep the
parameter off the bound); the NLS point its chains start from is checked as a point
estimate too (a short chain started 10⁻³ of the box inside a bound may not get back to it). ``physical`` says whether that bound is also a limit of the
model's own Params range (its ``field_range``), read from the model's metadata.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.model_specs import model_spec

__all__ = ["AT_BOUND_FRACTION", "POSTERIOR_SDS", "parameters_at_bounds", "linear_form_at_bounds",
           "bound_warning"]

#: a point estimate's coordinate within this fraction of its box's width from a bound is on it
AT_BOUND_FRACTION = 1e-4
#: a posterior mean within this many posterior standard deviations of a bound is on it
POSTERIOR_SDS = 2.0


def _model_limits(model_class) -> dict[str, tuple[float | None, float | None]]:
    """(low, high) of each Params field's own range (None: unbounded), SI."""
    limits = {}
    for field in dataclasses.fields(model_class.Params):
        meta = field.metadata or {}
        limits[field.name] = (meta.get("low"), meta.get("high"))
    return limits


def parameters_at_bounds(data: FitData, model: str, params_si: dict, *, free_A: bool = False,
                         substeps: int | None = None, fixed: dict | None = None,
                         form: str | None = None, posterior: dict | None = None) -> list[dict]:
    """The fitted coordinates of ``model`` at ``params_si`` (SI, as a FitResult holds
    them) that lie on a bound (module docstring) of the search box the fit on
    ``data`` used (``free_A``, ``substeps``, ``fixed``, ``form`` as given to the fit).
    ``posterior`` (a Bayesian fit's summary, SI: ``{field: {"sd": ...}}``): a field is on
    a bound when ``params_si`` lies within :data:`POSTERIOR_SDS` sd of it.

    Returns one dict per flagged coordinate: ``parameter``, ``side`` (lower/upper),
    ``value`` and ``bound`` (SI for a parameter field; the coordinate's own value for a
    ratio such as γ/β), ``distance`` (fraction of the box's width), ``physical`` (the bound
    is also a limit of the model's own range)."""
    spec = model_spec(model, data, free_A=free_A, substeps=substeps, fixed=fixed, form=form)
    scales = data.scales()
    fields = {name: float(value) for name, value in params_si.items() if name in spec.dimensions}
    normalised = spec.to_normalised(fields, scales)
    coordinates = spec.coordinates_of(normalised)
    limits = _model_limits(spec.model)
    flags = []
    for p in spec.free:
        value = float(coordinates[p.name])
        low, high = p.coordinate_bounds()
        width = high - low
        if not np.isfinite(value) or width <= 0:
            continue
        if p.log and value <= 0:
            continue
        q = p.to_coordinate(value)
        is_field = p.name in spec.dimensions
        for side, bound in (("lower", low), ("upper", high)):
            distance = abs(q - bound) / width
            bound_value = float(np.exp(bound) if p.log else bound)
            if is_field:  # back to SI
                physical_bound = spec.to_physical({**normalised, p.name: bound_value}, scales)[p.name]
                shown_value = float(params_si[p.name])
            else:
                physical_bound, shown_value = bound_value, value
            sd = (posterior or {}).get(p.name, {}).get("sd") if is_field else None
            if sd is not None and np.isfinite(sd):
                on_bound = abs(shown_value - physical_bound) <= POSTERIOR_SDS * sd
            else:
                on_bound = distance <= AT_BOUND_FRACTION
            if not on_bound:
                continue
            model_limit = limits.get(p.name, (None, None))[0 if side == "lower" else 1]
            physical = bool(is_field and model_limit is not None
                            and np.isclose(physical_bound, model_limit, rtol=1e-9, atol=1e-12))
            flags.append({"parameter": p.name, "side": side, "value": shown_value, "bound": float(physical_bound),
                          "distance": float(distance), "physical": physical})
    return flags


def linear_form_at_bounds(outer, outer_coordinates, linear_names, theta, linear_lower, linear_upper) -> list[dict]:
    """The ``ls`` method's own bounds (its box differs from the other methods'): the
    searched coordinates ``outer`` (:class:`FreeParameter`, at ``outer_coordinates``) within
    :data:`AT_BOUND_FRACTION` of their box, and the linear coefficients θ (normalised) exactly
    on a finite bound of the bounded least squares (the projection puts them there to
    1e-9 of the largest |θ|). Values are normalised (coordinates and coefficients as the
    ``ls`` form names them); a coefficient's bound is a sign constraint of the model
    (``physical``), an outer coordinate's is the search box's."""
    flags = []
    for p, q in zip(outer, outer_coordinates):
        low, high = p.coordinate_bounds()
        for side, bound in (("lower", low), ("upper", high)):
            distance = abs(float(q) - bound) / (high - low)
            if distance <= AT_BOUND_FRACTION:
                value = float(np.exp(q) if p.log else q)
                flags.append({"parameter": p.name, "side": side, "value": value,
                              "bound": float(np.exp(bound) if p.log else bound), "distance": float(distance),
                              "physical": False})
    theta = np.asarray(theta, dtype=float)
    tolerance = 1e-9 * max(float(np.max(np.abs(theta))) if theta.size else 0.0, 1e-300)
    for name, value, low, high in zip(linear_names, theta, linear_lower, linear_upper):
        for side, bound in (("lower", low), ("upper", high)):
            if np.isfinite(bound) and abs(value - bound) <= tolerance:
                flags.append({"parameter": name, "side": side, "value": float(value), "bound": float(bound),
                              "distance": 0.0, "physical": True})
    return flags


def bound_warning(flags: list[dict]) -> str | None:
    """One warning line for the terminal, or None when nothing is on a bound."""
    if not flags:
        return None
    parts = []
    for flag in flags:
        kind = "the model's own limit" if flag["physical"] else "the search box's"
        where = f", at {flag['where']}" if "where" in flag else ""
        parts.append(f"{flag['parameter']} = {flag['value']:.4g} on its {flag['side']} bound "
                     f"{flag['bound']:.4g} ({kind}{where})")
    return ("warning: parameter on a bound, not determined by this record alone: " + "; ".join(parts)
            + " — fix it from another test (--fix), or look at the loops (JSON: warnings, code parameter_at_bound)")
