"""The loop's contracts: what the hybrid loop needs of each part a lab plugs in.

This module is the ground floor of the loop (it imports nothing of the package): the
numerical substructure, the site and the online identifier are protocols, so any object
that has these calls can take part (ARCHITECTURE.md, "Extension points").

**Numerical substructure** (the slow side), once per slow step Δt_n:

``initial_target() -> (n,)``
    the first interface target [m] (before any force has been measured);
``step(feedback (n,), ground_accel) -> (next target (n,), log)``
    consume the interface force(s) measured on the specimen for the target last sent
    (the zero-order hold at the end of the fast chunk), advance one slow step with the
    ground acceleration ẍ_g [m/s²] at the end of that step, and return the next
    interface target and a log of NumPy arrays (at least ``"displacement"``: the
    response DOFs the test compares with its reference, e.g. floor displacements);
``apply_parameters(estimate (p,))``
    push identified parameters θ̂ into the numerical elements that share the specimen's
    model (the model-updating hook calls it only when its guards pass);
``close()``
    release what the NS holds (an OpenSees domain, a socket).

**Site** (the physical side as the slow side sees it), once per slow step:

``step(target (n,)) -> SiteReading``
    drive the specimen towards ``target`` [m] at n ≥ 1 interface DOFs for one slow step
    and return the measured displacement(s) [m] and force(s) [N] at its end, a log
    (NumPy arrays; the virtual site logs every fast sample) and, when the site runs an
    online identifier, its current estimate;
``close()``
    stop safely and release what the site holds.

Sign convention: ``force``/``feedback`` is the specimen's restoring force at the
interface DOF(s) [N], with the sign of an internal force (it resists the interface
displacement); the NS subtracts it like one of its own elements' forces.

**Online identifier**, per sample of the specimen's measurements (pure, JAX-traceable;
it runs inside ``jax.lax.scan``, ``lax.cond`` and ``jax.vmap``)::

    state = ident.init(ident.params)
    state, outputs = ident.step(ident.params, state, IdentifierInputs(x, v, force), dt)
    estimate = ident.estimate(ident.params, state)    # Estimate(theta, relative_std, converged)

``estimate`` gives θ̂ (p,) in the physical units of the identified fields
(``param_names``, ``param_units``), its relative standard deviation √Var(θ̂_i)/|θ̂_i|
and ``converged`` (the identifier's own documented rule): what the model-updating hook
consumes.

Implementations: :mod:`rths_ident.structures.numerical_substructure` (native),
:mod:`rths_ident.structures.opensees_substructure`,
:mod:`rths_ident.transport.remote_substructure`; :mod:`rths_ident.hybrid.fast_side`
(virtual and direct sites), :mod:`rths_ident.transport.remote_site`,
:mod:`rths_ident.rigs`; :mod:`rths_ident.estimators` (identifiers).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["NumericalSubstructure", "Site", "SiteReading", "IdentifierInputs", "Estimate", "OnlineIdentifier"]


@runtime_checkable
class NumericalSubstructure(Protocol):
    """What the step-wise loop needs of a numerical substructure (module doc)."""

    #: slow step Δt_n [s]
    dt: float
    #: number of interface DOFs n ≥ 1
    n_interface: int

    def initial_target(self) -> np.ndarray: ...

    def step(self, feedback: np.ndarray, ground_accel: float) -> tuple[np.ndarray, dict]: ...

    def apply_parameters(self, estimate: np.ndarray) -> None: ...

    def close(self) -> None: ...


class SiteReading(NamedTuple):
    """What a site returns for one slow step."""

    displacement: np.ndarray  # (n,) measured interface displacement(s) at the end of the step [m]
    force: np.ndarray  # (n,) measured restoring force(s) at the end of the step [N]
    log: dict  # NumPy arrays (the virtual site: one entry per fast sample)
    estimate: Any = None  # the site's online identifier estimate (θ̂, relative std, converged), if it runs one


@runtime_checkable
class Site(Protocol):
    """What the step-wise loop needs of the physical side (module doc)."""

    #: number of interface DOFs n ≥ 1
    n_interface: int

    def step(self, target: np.ndarray) -> SiteReading: ...

    def close(self) -> None: ...


class IdentifierInputs(NamedTuple):
    """One sample of the specimen's measurements (SI)."""

    displacement: Any  # x [m]
    velocity: Any  # ẋ [m/s]
    force: Any  # R, restoring force [N] (inertia of the specimen removed)


class Estimate(NamedTuple):
    """What the model-updating hook consumes."""

    theta: Any  # (p,) θ̂ in the physical units of ``param_units``
    relative_std: Any  # (p,) √Var(θ̂_i)/|θ̂_i| [-]
    converged: Any  # bool (scalar array)
    # bool (scalar array): the estimator's covariance is symmetric positive definite (an
    # identifier-divergence interlock checks it; an estimator without one leaves True)
    covariance_ok: Any = True


class OnlineIdentifier(NamedTuple):
    """An online identifier: static pure functions + its numbers (module doc).

    ``init(params) -> state``; ``step(params, state, inputs: IdentifierInputs, dt) ->
    (state, outputs)``; ``estimate(params, state) -> Estimate``.
    """

    name: str
    params: Any
    init: Callable
    step: Callable
    estimate: Callable
    param_names: tuple  # names of the entries of θ̂, in order
    param_units: tuple  # SI unit of each entry of θ̂

    def initial_state(self):
        """``init(params)`` (convenience)."""
        return self.init(self.params)
