"""Force history of a model through its functional core (``lax.scan`` over ``step``).

One implementation of each model: the fitters never re-code a model's equations, they
scan the model's own ``Model.step`` over the measured displacement/velocity record
(displacement-driven, from the virgin state, like ``force_history``), and add the
inertia force ``Model.inertia_force(params, a)`` for elements that carry a mass.
Everything is pure and traceable (``jit``, ``jacfwd``, ``vmap``, NUTS gradients).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.model_specs import ModelSpec
from rths_ident.models.base import scan_force

__all__ = ["NormalisedRecord", "normalised_record", "simulate_force", "simulate_fields", "simulate_normalised"]


class NormalisedRecord(tuple):
    """(x̃, ṽ, ã, F̃, Δt̃) as float64 arrays; a tuple so it passes through ``jit``."""

    __slots__ = ()

    def __new__(cls, x, v, a, f, dt):
        return super().__new__(cls, (x, v, a, f, dt))


def normalised_record(data: FitData) -> NormalisedRecord:
    """Normalised displacement, velocity, acceleration, force and mean time step.

    Velocity and acceleration are second-order finite differences on the (pseudo-)time
    axis (``numpy.gradient``, edge order 2), as :func:`rths_ident.models.base.velocity_from_displacement`.
    """
    s = data.scales()
    t = data.time / s.time
    x = data.displacement / s.displacement
    edge = 2 if x.size > 2 else 1
    v = np.gradient(x, t, edge_order=edge)
    a = np.gradient(v, t, edge_order=edge)
    return NormalisedRecord(
        jnp.asarray(x), jnp.asarray(v), jnp.asarray(a), jnp.asarray(data.force / s.force), jnp.float64(data.dt / s.time)
    )


def simulate_force(model_class, params, displacement, velocity, dt, acceleration=None):
    """Restoring force history of ``model_class`` with ``params`` (pure, traceable).

    ``Model.step`` is scanned over ``(displacement, velocity)`` from ``Model.init``;
    when ``acceleration`` is given and the model has ``inertia_force``, ``m·a`` is added.
    """
    force = scan_force(model_class, params, displacement, velocity, dt)
    if acceleration is not None and hasattr(model_class, "inertia_force"):
        force = force + model_class.inertia_force(params, acceleration)
    return force


def simulate_fields(spec: ModelSpec, fields: dict, record: NormalisedRecord):
    """F̃ for normalised parameter ``fields`` of ``spec``'s model (traceable)."""
    x, v, a, _, dt = record
    return simulate_force(spec.model, spec.model.Params(**fields, **spec.config), x, v, dt,
                          a if spec.includes_inertia else None)


def simulate_normalised(spec: ModelSpec, q, record: NormalisedRecord):
    """F̃ for coordinate vector ``q`` of ``spec`` on a normalised record (traceable)."""
    return simulate_fields(spec, spec.fields(q), record)
