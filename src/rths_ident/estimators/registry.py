"""The online identifiers by name: the one place a test file's ``identifier.kind``
becomes an :class:`~rths_ident.protocols.OnlineIdentifier`.

An entry builds the identifier of a specimen from its model class, the initial guess
(the model's Params), the identified fields and options; ``models`` lists the model
names it applies to (None: any registered model).

* ``ukf`` — the joint state–parameter UKF over any model
  (:mod:`rths_ident.estimators.joint_ukf_identifier`; its named presets are
  :data:`~rths_ident.estimators.joint_ukf_presets.PRESETS`);
* ``rls`` — seed 001's constrained RLS on the modified LuGre column's
  linear-in-parameters form (:mod:`rths_ident.estimators.lugre_identifier`; θ = σ0,
  F_C, σ3);
* ``none`` — nothing is identified (θ̂ empty, never converged).

Add an identifier: its module (pure ``init``/``step(params, state, IdentifierInputs,
dt)``/``estimate``) and one :data:`IDENTIFIERS` line.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import jax.numpy as jnp

from rths_ident.errors import ParameterError
from rths_ident.protocols import Estimate, OnlineIdentifier
from rths_ident.registry import Registry

__all__ = ["IdentifierEntry", "IDENTIFIERS", "no_identifier"]


class IdentifierEntry(NamedTuple):
    """One registered online identifier (module doc)."""

    description: str
    # (model class, guess Params, identified fields, **options) -> OnlineIdentifier
    build: Callable[..., OnlineIdentifier]
    models: tuple | None = None  # the model names it applies to (None: any)


def no_identifier() -> OnlineIdentifier:
    """No online identifier: θ̂ is empty and never converges."""
    empty = jnp.zeros(0)
    return OnlineIdentifier("none", (), lambda params: (), lambda params, state, inputs, dt: (state, ()),
                            lambda params, state: Estimate(empty, empty, jnp.asarray(False)), (), ())


def _ukf(model: type, guess, fields: Sequence[str], **options) -> OnlineIdentifier:
    from rths_ident.estimators.joint_ukf_identifier import joint_ukf_online_identifier  # noqa: PLC0415

    return joint_ukf_online_identifier(model, guess, tuple(fields), **options)


def _rls(model: type, guess, fields: Sequence[str], **options) -> OnlineIdentifier:
    from rths_ident.estimators.lugre_identifier import PARAM_NAMES, lugre_rls_online_identifier  # noqa: PLC0415

    if tuple(fields) != tuple(PARAM_NAMES):
        raise ParameterError(f"identifier rls identifies {', '.join(PARAM_NAMES)} of the modified LuGre column "
                             f"(its linear-in-parameters form); got fields {', '.join(fields)}")
    return lugre_rls_online_identifier(guess, **options)


def _none(model: type, guess, fields: Sequence[str], **options) -> OnlineIdentifier:
    return no_identifier()


#: identifier name -> :class:`IdentifierEntry`
IDENTIFIERS: Registry[IdentifierEntry] = Registry("identifier", {
    "ukf": IdentifierEntry("joint state–parameter unscented Kalman filter over the model's own step", _ukf),
    "rls": IdentifierEntry("constrained recursive least squares on the modified LuGre column's linear-in-parameters "
                           "form (seed 001)", _rls, ("lugre",)),
    "none": IdentifierEntry("nothing is identified", _none),
})
