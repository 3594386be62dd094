"""The protocol every online identifier implements (what the RTHS loop and the
model-updating hook see), in the project's one component shape.

An identifier is an :class:`OnlineIdentifier`: a NamedTuple of *static* pure functions
and its numbers (``params``)::

    state = ident.init(ident.params)
    state, outputs = ident.step(ident.params, state, IdentifierInputs(x, v, force), dt)
    estimate = ident.estimate(ident.params, state)    # Estimate(theta, relative_std, converged)

* ``inputs`` is :class:`IdentifierInputs` — measured displacement x [m], velocity ẋ
  [m/s] and restoring force R [N] of the specimen at the end of the sample interval
  ``dt`` [s] (the state remembers the previous sample);
* ``outputs`` is the identifier's own per-sample record (a NamedTuple; may be logged);
* ``estimate`` returns :class:`Estimate`: θ̂ (p,) in the *physical* units of the
  identified fields (``param_names``, ``param_units``), its relative standard deviation
  √Var(θ̂_i)/|θ̂_i| (p,), and ``converged`` (bool, the identifier's own documented rule).

All three functions are pure and JAX-traceable: they run inside ``jax.lax.scan``,
``lax.cond`` (e.g. an identifier sampling every n-th fast step) and ``jax.vmap``.
Everything the functions need is in ``params`` (a pytree), so a batch of identifiers is
one ``vmap`` over ``params`` and ``state``.

Implementations (constructors return an :class:`OnlineIdentifier`):

* :func:`rths_ident.estimators.lugre_identifier.lugre_rls_online_identifier` — constrained
  RLS on the LIP form of the modified LuGre column;
* :func:`rths_ident.estimators.joint_ukf_identifier.joint_ukf_online_identifier` — joint
  state–parameter UKF over any hysteretic model class of :mod:`rths_ident.models`, and
  its named presets (:mod:`rths_ident.estimators.joint_ukf_presets`: ``lugre-column``,
  ``degrading-bouc-wen``).

A record is one scan of ``step`` (:func:`run_identifier`; :func:`scan_steps` for any
step function and inputs, e.g. under ``jax.vmap`` over a batch of ``params``). Research
scripts hold an identifier in :class:`rths_ident.estimators.identifier_wrapper.IdentifierWrapper`.

See docs/estimators/online_identifier.md (how to write your own).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier

__all__ = ["IdentifierInputs", "Estimate", "OnlineIdentifier", "run_identifier", "scan_steps"]


def scan_steps(step: Callable, estimate: Callable, params, state, inputs, dt):
    """Scan ``step(params, state, inputs_k, dt)`` over ``inputs`` (a NamedTuple whose
    leaves have a leading axis N, one entry per sample); returns ``(state, (outputs,
    estimates))`` with ``estimates`` = ``estimate(params, state)`` after each sample,
    every leaf stacked along N. Pure (jit/vmap it; ``params`` is an argument, so a
    batch of configurations is one ``jax.vmap``)."""

    def body(state, sample):
        state, outputs = step(params, state, sample, dt)
        return state, (outputs, estimate(params, state))

    return jax.lax.scan(body, state, inputs)


def run_identifier(identifier: OnlineIdentifier, state, displacement, velocity, force, dt):
    """Scan ``identifier.step`` over a record of N samples (x [m], ẋ [m/s], R [N] at
    t_1 … t_N; ``state`` holds t_0); returns ``(state, (outputs, estimates))`` with every
    leaf stacked along a leading axis N (:func:`scan_steps`). Pure (jit/vmap it)."""
    samples = IdentifierInputs(*(jnp.asarray(a, jnp.float64) for a in (displacement, velocity, force)))
    return scan_steps(identifier.step, identifier.estimate, identifier.params, state, samples, dt)
