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
* :func:`rths_ident.estimators.lugre_ukf_identifier.lugre_ukf_online_identifier` — joint
  UKF on the same column;
* :func:`rths_ident.estimators.joint_ukf_identifier.joint_ukf_online_identifier` — joint
  state–parameter UKF over any hysteretic model class of :mod:`rths_ident.models`.

See docs/estimators/online_identifier.md (how to write your own).
"""

from __future__ import annotations


import jax
import jax.numpy as jnp

from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier

__all__ = ["IdentifierInputs", "Estimate", "OnlineIdentifier", "run_identifier"]


def run_identifier(identifier: OnlineIdentifier, state, displacement, velocity, force, dt):
    """Scan ``identifier.step`` over a record of N samples; returns ``(state, (outputs,
    estimates))`` with every leaf stacked along a leading axis N. Pure (jit/vmap it)."""

    def body(state, sample):
        state, outputs = identifier.step(identifier.params, state, IdentifierInputs(*sample), dt)
        return state, (outputs, identifier.estimate(identifier.params, state))

    samples = tuple(jnp.asarray(a, jnp.float64) for a in (displacement, velocity, force))
    return jax.lax.scan(body, state, samples)
