"""Partition of a structure into a numerical and a physical substructure.

Seed 001 Eqs. 3.2–3.5 (seed 000 Eqs. 2.9–2.10, seed 004 Eqs. 4–8)::

    (M_n + M_f) ẍ + (C_n + C_f) ẋ + (K_n + K_f) x = − M ι ẍ_g                 (3.2)
    M_n ẍ + C_n ẋ + K_n x = − M ι ẍ_g − f_e,   f_e = M_f ẍ + C_f ẋ + K_f x     (3.3–3.5)

The ground-motion term keeps the FULL mass M (Eq. 3.3): the specimen in the lab is not
base-excited, so its share of the ground inertia is applied numerically.

Damping split (the choice made here; seed 001 leaves it open, see its digest §3.3 flag)
----------------------------------------------------------------------------------------
* The viscous matrix C you pass (e.g. Rayleigh, built from M and the linear K of the
  FULL structure, seed 001 Eq. 3.11) stays WHOLE in the numerical substructure:
  C_n = C. It models the inherent damping of the building as a whole.
* A column's own damping (the σ2 ẋ macro-damping of the modified LuGre model, Eq.
  2.10, and its σ1 ż term) is part of that column's restoring force, wherever the
  column is. For the removed column it is therefore in the specimen's measured force
  f_e, and it is NOT in C_n.
* The monolithic reference with the same C and all columns as elements therefore solves
  exactly the same equation, and nothing is counted twice. If instead you want only the
  columns' own damping, pass ``damping=None`` (C = 0) to both.

Mass split: by default the removed column has no mass of its own in the model (its mass
is in the floor mass, which stays in M_n), so f_e is the specimen's restoring force
only — a load cell reading minus the specimen's inertia force (seed 000 Eq. 2.13). With
``specimen_mass`` m_f > 0, M_n = M − m_f e eᵀ at the column's top DOF and f_e must then
include m_f ẍ (seed 001 Eq. 3.13).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.structures.elements import InterfaceElement
from rths_ident.structures.shear_building import ShearBuilding
from rths_ident.structures.structure import Structure, StructureParams

__all__ = ["PartitionedStructure", "partition_column", "partition_matrices", "state_space_matrices"]


class PartitionedStructure(NamedTuple):
    """Result of :func:`partition_column`.

    structure, params : the numerical substructure (remaining columns as element groups,
        C_n = C, M_n, ground mass = full M ι, ``interface_stiffness`` = the removed
        column's initial tangent at its DOFs).
    interface : :class:`InterfaceElement` of the removed column (its model and DOFs):
        ``interface(interface_params, state, u, v, dt) -> (state, f_e)``; a virtual
        specimen for :meth:`step_coupled`, or just the DOF map in a physical test.
    interface_params : the removed column's own (unbatched) Params.
    interface_dofs : DOFs the interface force acts on (top first; ground omitted).
    storey, column : which column was removed (storey 1-based, column index as given).
    """

    structure: Structure
    params: StructureParams
    interface: InterfaceElement
    interface_params: Any
    interface_dofs: tuple
    storey: int
    column: int


def _take(leaf, index):
    """``leaf[index]`` (an int or an integer array): NumPy's copy put on the device for
    set-up values (JAX's indexing compiles small programs), JAX's for traced ones."""
    if isinstance(leaf, jax.core.Tracer):
        return leaf[index]
    return jax.device_put(np.asarray(leaf)[index])


def partition_column(
    building: ShearBuilding,
    storey: int = 1,
    column: int = -1,
    damping=None,
    specimen_mass: float = 0.0,
) -> PartitionedStructure:
    """Remove one column from ``building`` and make it the physical substructure.

    storey : 1-based storey number (1 = ground storey, as in seed 001 §3.3).
    column : index of the column within the storey (Python indexing; −1 = the last, the
        right-most column of seed 001 Fig. 3.3).
    damping : viscous matrix C of the FULL structure [N·s/m] (kept whole in the
        numerical part; see the module docstring), or None.
    specimen_mass : m_f [kg] subtracted from the floor mass at the column's top DOF.
    """
    n_storeys = len(building.groups)
    if not (1 <= int(storey) <= n_storeys):
        raise ParameterError(f"storey must be in 1..{n_storeys}; got {storey!r}")
    g_index = int(storey) - 1
    group = building.groups[g_index]
    if not (-group.count <= int(column) < group.count):
        raise ParameterError(
            f"column must index one of the {group.count} columns of storey {storey}; got {column!r}"
        )
    col = int(column) % group.count
    batched = building.column_params[g_index]
    removed_params = jax.tree_util.tree_map(lambda leaf: _take(leaf, col), batched)
    keep = np.array([i for i in range(group.count) if i != col], dtype=int)

    groups = []
    params = []
    for i, (g, p) in enumerate(zip(building.groups, building.column_params)):
        if i == g_index:
            if keep.size == 0:
                continue
            g = g._replace(count=int(keep.size))
            p = jax.tree_util.tree_map(lambda leaf: _take(leaf, keep), p)
        groups.append(g)
        params.append(p)

    n = building.n_dof
    specimen_mass = float(specimen_mass)
    top = group.top_dof
    if not (np.isfinite(specimen_mass) and 0.0 <= specimen_mass < building.floor_masses[top]):
        raise ParameterError(
            f"specimen_mass must be in [0, floor mass {building.floor_masses[top]:g}) kg; got {specimen_mass!r}"
        )
    mass = building.mass_matrix.copy()
    mass[top, top] -= specimen_mass
    c = np.zeros((n, n)) if damping is None else np.asarray(damping, dtype=float)
    interface = InterfaceElement(model=group.model, top_dof=top, bottom_dof=group.bottom_dof, n_dof=n)
    numerical_params = StructureParams(  # jax.device_put: jnp.asarray / jnp.zeros compile small programs
        mass=jax.device_put(mass),
        damping=jax.device_put(c),
        linear_stiffness=jax.device_put(np.zeros((n, n))),
        ground_mass=jax.device_put(building.floor_masses.copy()),  # FULL M ι (Eq. 3.3)
        element_params=tuple(params),
        interface_stiffness=interface.initial_nodal_stiffness(removed_params, building.linearisation_dt),
    )
    structure = Structure(n_dof=n, groups=tuple(groups))
    structure.check_params(numerical_params)
    dofs = (top,) if group.bottom_dof is None else (top, group.bottom_dof)
    return PartitionedStructure(
        structure=structure,
        params=numerical_params,
        interface=interface,
        interface_params=removed_params,
        interface_dofs=dofs,
        storey=int(storey),
        column=int(column),
    )


def partition_matrices(
    mass,
    stiffness,
    physical_stiffness,
    damping=None,
    physical_mass=None,
    physical_damping=None,
    influence=None,
) -> tuple[Structure, StructureParams]:
    """Linear numerical substructure M_n = M − M_f, C_n = C − C_f, K_n = K − K_f
    (seed 001 Eq. 3.2; seed 004 Eq. 5), all (n, n) in SI, with the ground mass of the
    FULL structure m_g = M ι (Eq. 3.3) and ``interface_stiffness`` = K_f.

    The physical matrices are full-size (zeros outside the interface DOFs). Use
    ``physical_damping`` = None (C_f = 0) when the physical specimen's damping is in its
    measured force but not in C (see the module docstring).
    """
    m = np.asarray(mass, dtype=float)
    n = m.shape[0]
    zeros = np.zeros((n, n))
    k = np.asarray(stiffness, dtype=float)
    c = zeros if damping is None else np.asarray(damping, dtype=float)
    kf = np.asarray(physical_stiffness, dtype=float)
    mf = zeros if physical_mass is None else np.asarray(physical_mass, dtype=float)
    cf = zeros if physical_damping is None else np.asarray(physical_damping, dtype=float)
    for name, arr in (("stiffness", k), ("damping", c), ("physical_stiffness", kf),
                      ("physical_mass", mf), ("physical_damping", cf)):
        if arr.shape != (n, n):
            raise ParameterError(f"{name} must have the shape of mass ({n}, {n}); got {arr.shape}")
    iota = np.ones(n) if influence is None else np.asarray(influence, dtype=float)
    if iota.shape != (n,):
        raise ParameterError(f"influence must have shape ({n},); got {iota.shape}")
    params = StructureParams(
        mass=jnp.asarray(m - mf),
        damping=jnp.asarray(c - cf),
        linear_stiffness=jnp.asarray(k - kf),
        ground_mass=jnp.asarray(m @ iota),
        interface_stiffness=jnp.asarray(kf),
    )
    return Structure(n_dof=n, groups=()), params


def state_space_matrices(params: StructureParams):
    """``(A, B, C, D)`` of a LINEAR numerical substructure (seed 001 Eqs. 3.6–3.9),
    state X = [x; ẋ], input u = [ẍ_g; f_e] (1 + n), output Y = [x; ẋ; ẍ]::

        A = [[0, I], [−M_n⁻¹K_n, −M_n⁻¹C_n]]
        B = [[0, 0], [−M_n⁻¹ m_g, −M_n⁻¹]]
        C = [[I, 0], [0, I], [−M_n⁻¹K_n, −M_n⁻¹C_n]],  D = [[0, 0], [0, 0], [−M_n⁻¹ m_g, −M_n⁻¹]]

    with m_g = M ι of the full structure. Element groups are ignored (linear matrices
    only); M_n must be invertible.
    """
    m = np.asarray(params.mass, dtype=float)
    n = m.shape[0]
    minv = np.linalg.inv(m)
    k = np.asarray(params.linear_stiffness, dtype=float)
    c = np.asarray(params.damping, dtype=float)
    g = np.asarray(params.ground_mass, dtype=float).reshape(n, 1)
    eye, zero = np.eye(n), np.zeros((n, n))
    a = np.block([[zero, eye], [-minv @ k, -minv @ c]])
    b = np.block([[np.zeros((n, 1)), zero], [-minv @ g, -minv]])
    c_out = np.block([[eye, zero], [zero, eye], [-minv @ k, -minv @ c]])
    d_out = np.block([[np.zeros((n, 1)), zero], [np.zeros((n, 1)), zero], [-minv @ g, -minv]])
    return a, b, c_out, d_out
