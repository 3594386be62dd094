"""Element groups: columns of a shear building evaluated together with ``jax.vmap``.

A *group* is ``count`` columns that share one model class (``rths_ident.models``
interface: static ``init(params)``, ``step(params, state, ElementInputs(x, v), dt)``,
``tangent(params, state, ElementInputs(x, v), dt)``) and connect the same two degrees of
freedom: the floor at ``top_dof`` and the floor (or the ground, ``bottom_dof=None``)
below it. Their parameters are ONE batched Params pytree whose leaves have a leading
axis of length ``count``; their states are likewise one batched state. The group's force
on the structure is the sum of the column forces, acting on ``top_dof`` (+) and
``bottom_dof`` (−); the storey drift ``x = u[top] − u[bottom]`` and drift velocity ``v``
are the same for every column of the group (shear-building assumption, seed 001 §3.2),
so the columns' ``step`` is vmapped over params and state with one ``ElementInputs``.

Keeping a storey's columns as one batched pytree is what lets the model-updating hook
replace the parameters of all numerical columns at once as pytree leaves.

All functions here are pure and JAX-traceable.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.models import ElementInputs

__all__ = [
    "ElementGroup",
    "InterfaceElement",
    "batch_params",
    "unbatch_params",
    "drift",
]


def batch_params(params_list) -> Any:
    """Stack a list of (unbatched) Params containers into one batched container whose
    leaves have a leading axis ``len(params_list)`` (for an :class:`ElementGroup`)."""
    params_list = list(params_list)
    if not params_list:
        raise ValueError("batch_params needs at least one Params container")
    return jax.tree_util.tree_map(lambda *leaves: jnp.stack([jnp.asarray(x) for x in leaves]), *params_list)


def unbatch_params(batched, index: int) -> Any:
    """The Params of one column ``index`` of a batched container."""
    return jax.tree_util.tree_map(lambda leaf: leaf[index], batched)


def batch_size(batched) -> int:
    """Length of the leading axis of every leaf of a batched Params container.

    Raises ``ValueError`` if the leaves disagree or are scalars.
    """
    leaves = jax.tree_util.tree_leaves(batched)
    if not leaves:
        raise ValueError("batched params have no leaves")
    sizes = {jnp.shape(leaf)[0] if jnp.ndim(leaf) >= 1 else None for leaf in leaves}
    if None in sizes or len(sizes) != 1:
        raise ValueError(
            "batched column params must have one leading axis of equal length on every "
            f"field (one entry per column); got leading sizes {sorted(map(str, sizes))}"
        )
    return int(sizes.pop())


def drift(u, top_dof: int, bottom_dof: int | None):
    """Storey drift ``u[top] − u[bottom]`` (``u[top]`` when the bottom is the ground)."""
    if bottom_dof is None:
        return u[top_dof]
    return u[top_dof] - u[bottom_dof]


def _scatter_force(n_dof: int, top_dof: int, bottom_dof: int | None, force):
    vec = jnp.zeros(n_dof, dtype=jnp.result_type(force, jnp.float64))
    vec = vec.at[top_dof].add(force)
    if bottom_dof is not None:
        vec = vec.at[bottom_dof].add(-force)
    return vec


def _scatter_stiffness(n_dof: int, top_dof: int, bottom_dof: int | None, stiffness):
    if not isinstance(stiffness, jax.core.Tracer):  # set-up: NumPy, the same sums (no small programs)
        mat = np.zeros((n_dof, n_dof), dtype=np.result_type(np.asarray(stiffness).dtype, np.float64))
        k = np.asarray(stiffness, dtype=mat.dtype)
        mat[top_dof, top_dof] += k
        if bottom_dof is not None:
            mat[bottom_dof, bottom_dof] += k
            mat[top_dof, bottom_dof] += -k
            mat[bottom_dof, top_dof] += -k
        return jax.device_put(mat)
    mat = jnp.zeros((n_dof, n_dof), dtype=jnp.result_type(stiffness, jnp.float64))
    mat = mat.at[top_dof, top_dof].add(stiffness)
    if bottom_dof is not None:
        mat = mat.at[bottom_dof, bottom_dof].add(stiffness)
        mat = mat.at[top_dof, bottom_dof].add(-stiffness)
        mat = mat.at[bottom_dof, top_dof].add(-stiffness)
    return mat


class ElementGroup(NamedTuple):
    """``count`` columns of one model class between ``bottom_dof`` and ``top_dof``.

    Static description (hashable); the numbers live in the batched Params pytree that
    is passed to every method.

    Fields: ``model`` (class with static init/step/tangent), ``top_dof`` (index of the
    floor the columns carry), ``bottom_dof`` (index of the floor below, ``None`` for the
    ground), ``count`` (number of columns), ``name`` (label for outputs and errors).
    """

    model: type
    top_dof: int
    bottom_dof: int | None
    count: int
    name: str = ""

    def init(self, batched_params):
        """Batched initial state of the columns (``model.init`` vmapped)."""
        return jax.vmap(self.model.init)(batched_params)

    def column_forces(self, batched_params, batched_state, x, v, dt):
        """``(new_batched_state, forces[count])``: each column stepped to drift ``x`` [m]
        and drift velocity ``v`` [m/s] at the end of the step from its committed state."""
        stepper = jax.vmap(self.model.step, in_axes=(0, 0, None, None))
        return stepper(batched_params, batched_state, ElementInputs(x, v), dt)

    def column_tangents(self, batched_params, batched_state, x, v, dt):
        """∂F/∂x of each column [N/m] (``model.tangent`` vmapped)."""
        tangent = jax.vmap(self.model.tangent, in_axes=(0, 0, None, None))
        return tangent(batched_params, batched_state, ElementInputs(x, v), dt)

    def nodal_force(self, n_dof, batched_params, batched_state, u, v, dt):
        """``(new_batched_state, nodal force vector [n_dof] N, column forces [count] N)``."""
        x = drift(u, self.top_dof, self.bottom_dof)
        xdot = drift(v, self.top_dof, self.bottom_dof)
        new_state, forces = self.column_forces(batched_params, batched_state, x, xdot, dt)
        return new_state, _scatter_force(n_dof, self.top_dof, self.bottom_dof, jnp.sum(forces)), forces

    def nodal_tangent(self, n_dof, batched_params, batched_state, u, v, dt):
        """Assembled tangent stiffness [n_dof × n_dof] N/m from the columns' ``tangent``."""
        x = drift(u, self.top_dof, self.bottom_dof)
        xdot = drift(v, self.top_dof, self.bottom_dof)
        k = jnp.sum(self.column_tangents(batched_params, batched_state, x, xdot, dt))
        return _scatter_stiffness(n_dof, self.top_dof, self.bottom_dof, k)

    def initial_nodal_stiffness(self, n_dof, batched_params, dt):
        """Assembled tangent at the virgin state, zero drift and zero drift velocity."""
        state0 = self.init(batched_params)
        zero = jnp.zeros(n_dof)
        return self.nodal_tangent(n_dof, batched_params, state0, zero, zero, dt)


class InterfaceElement(NamedTuple):
    """One element (e.g. the removed column = the physical specimen, or its virtual
    stand-in) whose force is fed back into a numerical substructure at its interface.

    Callable as an *interface function*
    ``interface(params, state, u, v, dt) -> (new_state, nodal_force_vector[n_dof])``,
    the form :meth:`step_coupled` of every integrator accepts: the integrators evaluate
    it at the trial displacement/velocity of the numerical DOFs (every Newton iteration
    for the implicit scheme, once at the predictor for the explicit ones) and subtract
    the returned vector like an internal force (seed 001 Eq. 3.5, seed 000 Eq. 2.9).

    ``params``/``state`` are the model's own, unbatched, containers.
    """

    model: type
    top_dof: int
    bottom_dof: int | None
    n_dof: int

    def init(self, params):
        """The model's initial (virgin) state."""
        return self.model.init(params)

    def __call__(self, params, state, u, v, dt):
        x = drift(u, self.top_dof, self.bottom_dof)
        xdot = drift(v, self.top_dof, self.bottom_dof)
        new_state, force = self.model.step(params, state, ElementInputs(x, xdot), dt)
        return new_state, _scatter_force(self.n_dof, self.top_dof, self.bottom_dof, force)

    def initial_nodal_stiffness(self, params, dt):
        """The element's tangent at its virgin state, assembled [n_dof × n_dof] N/m."""
        k = self.model.tangent(params, self.model.init(params), ElementInputs(0.0, 0.0), dt)
        return _scatter_stiffness(self.n_dof, self.top_dof, self.bottom_dof, k)
