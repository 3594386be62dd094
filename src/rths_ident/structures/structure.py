"""An MDOF structure (or numerical substructure): matrices plus nonlinear element groups.

Equation of motion in displacements relative to the ground (seed 001 Eq. 3.1/3.5,
seed 000 Eq. 2.9)::

    M ü + C u̇ + K_lin u + Σ_groups r_g(u, u̇) = − m_g ẍ_g − f_interface        [N]

* ``M`` mass [kg], ``C`` viscous damping [N·s/m], ``K_lin`` the linear stiffness given
  as a matrix [N/m] (all ``n × n``);
* ``r_g`` the restoring force of an :class:`~rths_ident.structures.elements.ElementGroup`
  (columns with their own models; may be nonlinear and rate dependent);
* ``m_g = M_full ι`` [kg], the ground-motion mass vector. For a numerical substructure
  it keeps the mass of the FULL structure (seed 001 Eq. 3.3; seed 004 Eq. 6), because
  the physical specimen in the lab is not base-excited; ``ẍ_g`` in m/s²;
* ``f_interface`` the force of the physical substructure on the numerical DOFs. It acts
  like an internal force: it is SUBTRACTED on the right-hand side (seed 001 Eq. 3.5).

:class:`Structure` is the static description (number of DOFs, element groups) and holds
the pure functions; :class:`StructureParams` is the pytree of numbers.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg
from rths_ident.errors import ParameterError
from rths_ident._params import params_dataclass
from rths_ident.structures.elements import ElementGroup, batch_size

__all__ = [
    "Structure",
    "StructureParams",
    "structure_from_matrices",
    "with_changes",
    "set_column_params",
]


def _is_concrete(value) -> bool:
    return not isinstance(value, jax.core.Tracer)


@params_dataclass
class StructureParams:
    """Numbers of an MDOF structure (a JAX pytree; all SI).

    Fields
    ------
    mass : (n, n) kg — M (of the numerical part, M_n, when partitioned).
    damping : (n, n) N·s/m — C (viscous matrix damping, e.g. Rayleigh).
    linear_stiffness : (n, n) N/m — K_lin, the part of K given as a matrix (zero for a
        shear building whose columns are all elements).
    ground_mass : (n,) kg — m_g = M_full ι: the ground load is −m_g ẍ_g.
    element_params : tuple — one batched Params container per element group.
    interface_stiffness : (n, n) N/m — estimate of the physical substructure's initial
        stiffness at the numerical DOFs (zero when not partitioned). It never enters
        the equation of motion; it is used for the operator-splitting stiffness K^l of
        α-OS and for the stability limits (the coupled system is what must be stable).
    """

    mass: jax.Array
    damping: jax.Array
    linear_stiffness: jax.Array
    ground_mass: jax.Array
    element_params: tuple = ()
    interface_stiffness: jax.Array | None = None

    def __post_init__(self):
        mass = self.mass
        if not _is_concrete(mass):
            return
        m = np.asarray(mass, dtype=float)
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
            raise ParameterError(f"StructureParams.mass must be a square (n, n) matrix [kg]; got shape {m.shape}")
        n = m.shape[0]
        for name in ("damping", "linear_stiffness", "interface_stiffness"):
            value = getattr(self, name)
            if value is None or not _is_concrete(value):
                continue
            arr = np.asarray(value, dtype=float)
            if arr.shape != (n, n):
                raise ParameterError(
                    f"StructureParams.{name} must have the shape of mass ({n}, {n}); got {arr.shape}"
                )
            if not np.all(np.isfinite(arr)):
                raise ParameterError(f"StructureParams.{name} must be finite")
        if not np.all(np.isfinite(m)):
            raise ParameterError("StructureParams.mass must be finite")
        if not np.allclose(m, m.T, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(m).max())):
            raise ParameterError("StructureParams.mass must be symmetric")
        eig = np.linalg.eigvalsh(m)
        if eig.min() < -1e-12 * max(1.0, eig.max()):
            raise ParameterError(
                f"StructureParams.mass must be positive semi-definite; smallest eigenvalue {eig.min():.3g} kg"
            )
        if _is_concrete(self.ground_mass):
            g = np.asarray(self.ground_mass, dtype=float)
            if g.shape != (n,):
                raise ParameterError(f"StructureParams.ground_mass must have shape ({n},) [kg]; got {g.shape}")
            if not np.all(np.isfinite(g)):
                raise ParameterError("StructureParams.ground_mass must be finite")
        if self.interface_stiffness is None:  # (jax.device_put: jnp.zeros compiles a small program)
            object.__setattr__(self, "interface_stiffness", jax.device_put(np.zeros((n, n))))
        if not isinstance(self.element_params, tuple):
            raise ParameterError(
                "StructureParams.element_params must be a tuple (one batched Params per element group)"
            )

    @property
    def n_dof(self) -> int:
        return int(jnp.shape(self.mass)[0])


class Structure(NamedTuple):
    """Static description of an MDOF structure: ``n_dof`` and the element groups.

    Hashable; all numbers are in a :class:`StructureParams` passed to each method.
    """

    n_dof: int
    groups: tuple = ()

    # -- checks (Python side, concrete params only) ---------------------------------
    def check_params(self, params: StructureParams) -> None:
        """Raise ``ValueError`` if ``params`` does not fit this structure."""
        if params.n_dof != self.n_dof:
            raise ParameterError(
                f"StructureParams has {params.n_dof} DOFs but the structure has {self.n_dof}"
            )
        if len(params.element_params) != len(self.groups):
            raise ParameterError(
                f"StructureParams.element_params has {len(params.element_params)} entries; "
                f"the structure has {len(self.groups)} element groups "
                f"({[g.name for g in self.groups]})"
            )
        for group, p in zip(self.groups, params.element_params):
            if not all(_is_concrete(leaf) for leaf in jax.tree_util.tree_leaves(p)):
                continue
            size = batch_size(p)
            if size != group.count:
                raise ParameterError(
                    f"element group {group.name!r}: batched params hold {size} columns, "
                    f"expected count = {group.count}"
                )

    # -- pure functions -------------------------------------------------------------
    def init_element_states(self, params: StructureParams) -> tuple:
        """Initial (virgin) batched states, one per element group."""
        return tuple(g.init(p) for g, p in zip(self.groups, params.element_params))

    def ground_load(self, params: StructureParams, ground_accel):
        """−m_g ẍ_g [N] for a ground acceleration ẍ_g [m/s²]."""
        return -params.ground_mass * ground_accel

    def restoring_force(self, params: StructureParams, element_states, u, v, dt):
        """``(new_element_states, r [n] N, column_forces)``: r = K_lin u + Σ r_g(u, v).

        Elements are stepped from their committed ``element_states`` to ``(u, v)`` at
        the end of the step; ``column_forces`` is a tuple of ``[count]`` arrays [N].
        """
        r = small_linalg.matvec(params.linear_stiffness, u)  # no dot: the loop around it can be one kernel
        new_states = []
        column_forces = []
        for group, p, s in zip(self.groups, params.element_params, element_states):
            s_new, f_nodal, f_cols = group.nodal_force(self.n_dof, p, s, u, v, dt)
            r = r + f_nodal
            new_states.append(s_new)
            column_forces.append(f_cols)
        return tuple(new_states), r, tuple(column_forces)

    def tangent_stiffness(self, params: StructureParams, element_states, u, v, dt):
        """K_lin + Σ assembled element ``tangent`` (∂r/∂u at fixed velocity) [N/m]."""
        k = params.linear_stiffness
        for group, p, s in zip(self.groups, params.element_params, element_states):
            k = k + group.nodal_tangent(self.n_dof, p, s, u, v, dt)
        return k

    def initial_stiffness(self, params: StructureParams, dt):
        """K_lin + the elements' tangents at their virgin state [N/m] (numerical part)."""
        k = params.linear_stiffness
        for group, p in zip(self.groups, params.element_params):
            k = k + group.initial_nodal_stiffness(self.n_dof, p, dt)
        return k

    def linearised_stiffness(self, params: StructureParams, dt):
        """Initial stiffness of the coupled system: numerical part + interface estimate."""
        return self.initial_stiffness(params, dt) + params.interface_stiffness


def structure_from_matrices(
    mass,
    stiffness,
    damping=None,
    influence=None,
    ground_mass=None,
    groups: tuple[ElementGroup, ...] = (),
    element_params: tuple = (),
) -> tuple[Structure, StructureParams]:
    """A structure from matrices M [kg], K [N/m], C [N·s/m] (default zero).

    ``influence`` ι (default all ones: every DOF translates with the ground) gives the
    ground mass m_g = M ι, unless ``ground_mass`` is given directly (use that for a
    numerical substructure, whose ground term keeps the FULL mass). Optional nonlinear
    ``groups`` with their batched ``element_params`` are added to ``stiffness``.
    """
    m = jnp.asarray(np.asarray(mass, dtype=float))
    n = m.shape[0] if m.ndim == 2 else -1
    k = jnp.asarray(np.asarray(stiffness, dtype=float))
    c = jnp.zeros_like(k) if damping is None else jnp.asarray(np.asarray(damping, dtype=float))
    if ground_mass is None:
        iota = np.ones(n) if influence is None else np.asarray(influence, dtype=float)
        if iota.shape != (n,):
            raise ParameterError(f"influence vector must have shape ({n},); got {iota.shape}")
        ground_mass = np.asarray(mass, dtype=float) @ iota
    params = StructureParams(
        mass=m,
        damping=c,
        linear_stiffness=k,
        ground_mass=jnp.asarray(np.asarray(ground_mass, dtype=float)),
        element_params=tuple(element_params),
    )
    structure = Structure(n_dof=params.n_dof, groups=tuple(groups))
    structure.check_params(params)
    return structure, params


def with_changes(params: StructureParams, **changes) -> StructureParams:
    """A copy of ``params`` with some fields replaced, WITHOUT re-validation (pure and
    traceable; cheap enough to call every slow step). Use ``dataclasses.replace`` when
    you want the checks."""
    unknown = set(changes) - {"mass", "damping", "linear_stiffness", "ground_mass", "element_params",
                              "interface_stiffness"}
    if unknown:
        raise TypeError(f"StructureParams has no field(s) {sorted(unknown)}")
    new = object.__new__(StructureParams)
    for name in ("mass", "damping", "linear_stiffness", "ground_mass", "element_params", "interface_stiffness"):
        object.__setattr__(new, name, changes.get(name, getattr(params, name)))
    return new


def set_column_params(structure: Structure, params: StructureParams, model: type, column_params) -> StructureParams:
    """Give EVERY column of every element group whose model is ``model`` the (unbatched)
    ``column_params`` — e.g. the specimen parameters identified online, pushed into all
    numerical columns that share the specimen's model (the model-updating hook's
    ``apply_estimate``). Pure and traceable; other groups are untouched, and so is
    ``interface_stiffness`` (the specimen's K^l estimate: set it with :func:`with_changes`
    if it should follow)."""
    if not any(group.model is model for group in structure.groups):
        raise ValueError(f"no element group of the structure uses {getattr(model, '__name__', model)!r}")
    new_groups = []
    for group, batched in zip(structure.groups, params.element_params):
        if group.model is model:
            batched = jax.tree_util.tree_map(
                lambda old, new: jnp.broadcast_to(jnp.asarray(new, dtype=jnp.result_type(old)), jnp.shape(old)),
                batched,
                column_params,
            )
        new_groups.append(batched)
    return with_changes(params, element_params=tuple(new_groups))
