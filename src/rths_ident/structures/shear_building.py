"""Shear building whose columns are element models (seed 001 §3.2, Eqs. 3.10–3.12).

Floors are lumped masses with one lateral DOF each (relative to the ground); storey i
(1-based, storey 1 at the ground) holds columns between floor i−1 (the ground for
i = 1) and floor i. The columns of a storey share one model class and are stored as
ONE batched Params pytree (leading axis = number of columns) so that they are evaluated
with ``jax.vmap`` and their parameters can be replaced together as pytree leaves.

The linear stiffness used for modal analysis and Rayleigh damping is assembled from the
columns' *initial* tangents (``model.tangent`` at the virgin state, zero drift and zero
drift velocity).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.structures.damping import modal_damping, rayleigh_damping
from rths_ident.structures.elements import ElementGroup, batch_size
from rths_ident.structures.modal import ModalProperties, modal_analysis
from rths_ident.structures.structure import Structure, StructureParams

__all__ = ["StoreyColumns", "ShearBuilding", "three_storey_two_bay_frame"]

#: Time step [s] passed to ``model.tangent`` when linearising (the thesis rate, 4096 Hz).
DEFAULT_LINEARISATION_DT = 1.0 / 4096.0


class StoreyColumns(NamedTuple):
    """The columns of one storey.

    model_class : element model class (static init/step/tangent, ``rths_ident.models``).
    params : ONE Params container for all columns: batched (every leaf has a leading
        axis of length ``count``), or unbatched (scalar leaves), which is then copied to
        every column. A model instance (e.g. ``ModifiedLuGre.from_physical(...)``) is
        accepted for its ``.params``.
    count : number of columns.
    """

    model_class: type
    params: Any
    count: int


def _as_batched(params, count: int, where: str):
    leaves = jax.tree_util.tree_leaves(params)
    if leaves and all(jnp.ndim(leaf) == 0 for leaf in leaves):
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return jax.tree_util.tree_map(lambda leaf: jnp.full((count,), leaf, dtype=jnp.float64), params)
        # set-up values: NumPy's copies put on the device (jnp.full compiles small programs)
        return jax.tree_util.tree_map(lambda leaf: jax.device_put(np.full((count,), leaf, dtype=np.float64)), params)
    try:
        size = batch_size(params)
    except ValueError as exc:
        raise ParameterError(f"{where}: {exc}") from exc
    if size != count:
        raise ParameterError(f"{where}: batched params hold {size} columns but count = {count}")
    return params


class ShearBuilding:
    """Shear building: ``floor_masses`` [kg] (floor 1 first) and one
    :class:`StoreyColumns` per storey (storey 1 first).

    ``linearisation_dt`` [s] is passed to ``model.tangent`` when the initial stiffness
    is assembled (models whose tangent does not depend on dt ignore it).
    """

    def __init__(self, floor_masses, storeys, linearisation_dt: float = DEFAULT_LINEARISATION_DT):
        masses = np.atleast_1d(np.asarray(floor_masses, dtype=float))
        if masses.ndim != 1 or masses.size == 0:
            raise ParameterError(f"floor_masses must be a 1-D sequence [kg]; got shape {masses.shape}")
        if not np.all(np.isfinite(masses)) or np.any(masses <= 0.0):
            raise ParameterError(f"floor_masses must be positive and finite [kg]; got {masses!r}")
        storeys = list(storeys)
        if len(storeys) != masses.size:
            raise ParameterError(
                f"ShearBuilding needs one StoreyColumns per floor: {masses.size} floor masses, "
                f"{len(storeys)} storeys"
            )
        groups = []
        params = []
        for i, storey in enumerate(storeys):
            if not isinstance(storey, StoreyColumns):
                storey = StoreyColumns(*storey)
            if int(storey.count) < 1:
                raise ParameterError(f"storey {i + 1}: count must be >= 1; got {storey.count}")
            column_params = storey.params
            if isinstance(column_params, storey.model_class):  # a model instance: use its params
                column_params = column_params.params
            batched = _as_batched(column_params, int(storey.count), f"storey {i + 1}")
            groups.append(
                ElementGroup(
                    model=storey.model_class,
                    top_dof=i,
                    bottom_dof=None if i == 0 else i - 1,
                    count=int(storey.count),
                    name=f"storey {i + 1}",
                )
            )
            params.append(batched)
        self.floor_masses = masses
        self.groups = tuple(groups)
        self.column_params = tuple(params)
        self.linearisation_dt = float(linearisation_dt)
        self.structure = Structure(n_dof=masses.size, groups=self.groups)

    @property
    def n_dof(self) -> int:
        """Number of floors (= lateral DOFs)."""
        return int(self.floor_masses.size)

    @property
    def mass_matrix(self) -> np.ndarray:
        """M = diag(floor masses) [kg]."""
        return np.diag(self.floor_masses)

    def storey_stiffnesses(self) -> np.ndarray:
        """Initial lateral stiffness of each storey (sum of its columns' tangents) [N/m]."""
        out = []
        for group, p in zip(self.groups, self.column_params):
            state0 = group.init(p)
            k = group.column_tangents(p, state0, 0.0, 0.0, self.linearisation_dt)
            out.append(float(jnp.sum(k)))
        return np.asarray(out)

    def linearised_stiffness(self) -> np.ndarray:
        """K from the columns' initial tangents [N/m] (seed 001 Eq. 3.10 for 3 columns of
        stiffness k per storey: [[6k,−3k,0],[−3k,6k,−3k],[0,−3k,3k]])."""
        ks = self.storey_stiffnesses()
        n = self.n_dof
        k = np.zeros((n, n))
        for i, ki in enumerate(ks):
            k[i, i] += ki
            if i > 0:
                k[i - 1, i - 1] += ki
                k[i - 1, i] -= ki
                k[i, i - 1] -= ki
        return k

    def modal_analysis(self) -> ModalProperties:
        """Frequencies, periods and mass-normalised mode shapes of (M, K_linearised)."""
        return modal_analysis(self.mass_matrix, self.linearised_stiffness())

    def rayleigh_damping(self, zeta: float = 0.05, modes: tuple[int, int] = (1, 2)):
        """``(C, a0, a1)``: Rayleigh damping of the full building (seed 001 Eqs. 3.11–3.12),
        built from M and the linearised K."""
        return rayleigh_damping(self.mass_matrix, self.linearised_stiffness(), zeta, modes)

    def modal_damping(self, zetas) -> np.ndarray:
        """Classical damping matrix with ratio ``zetas`` per mode [N·s/m]."""
        return modal_damping(self.mass_matrix, self.linearised_stiffness(), zetas)

    def to_structure(self, damping=None) -> tuple[Structure, StructureParams]:
        """``(Structure, StructureParams)`` of the nonlinear building: the columns are the
        element groups, ``linear_stiffness`` is zero and ``damping`` [N·s/m] is the extra
        viscous matrix (default none; e.g. ``self.rayleigh_damping()[0]``)."""
        n = self.n_dof
        c = np.zeros((n, n)) if damping is None else np.asarray(damping, dtype=float)
        params = StructureParams(  # jax.device_put: jnp.asarray / jnp.zeros compile small programs
            mass=jax.device_put(self.mass_matrix),
            damping=jax.device_put(c),
            linear_stiffness=jax.device_put(np.zeros((n, n))),
            ground_mass=jax.device_put(self.floor_masses.copy()),
            element_params=self.column_params,
        )
        self.structure.check_params(params)
        return self.structure, params

    def to_linear_structure(self, damping=None) -> tuple[Structure, StructureParams]:
        """The linear matrix model (M, C, K_linearised) without element groups."""
        n = self.n_dof
        c = np.zeros((n, n)) if damping is None else np.asarray(damping, dtype=float)
        params = StructureParams(
            mass=jnp.asarray(self.mass_matrix),
            damping=jnp.asarray(c),
            linear_stiffness=jnp.asarray(self.linearised_stiffness()),
            ground_mass=jnp.asarray(self.floor_masses.copy()),
        )
        return Structure(n_dof=n, groups=()), params


def three_storey_two_bay_frame(
    floor_mass, column_model: type, column_params, columns_per_storey: int = 3, **kwargs
) -> ShearBuilding:
    """The 3-storey, 2-bay steel frame of seed 001 (§3.2, Fig. 3.2): 3 floors of mass
    ``floor_mass`` [kg] (scalar or 3 values; 5000 kg in Ch. 3; 64/16/64/36 t in Ch. 4),
    3 identical columns per storey of ``column_model`` with ``column_params`` (one
    unbatched Params, copied to every column, or a batched one per storey).

    With a column stiffness k = 1.34e6 N/m the linearised K is Eq. 3.10.
    """
    masses = np.broadcast_to(np.asarray(floor_mass, dtype=float), (3,)).copy()
    storeys = [StoreyColumns(column_model, column_params, columns_per_storey) for _ in range(3)]
    return ShearBuilding(masses, storeys, **kwargs)
