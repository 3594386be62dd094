"""A shear building of hysteretic columns built in OpenSeesPy, the twin of a native one.

:func:`build_shear_building` builds, in the OpenSees domain, the same shear building as a
native :class:`~rths_ident.structures.shear_building.ShearBuilding` (or its numerical
part after :func:`~rths_ident.structures.partition.partition_column`), for use with
:class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure`:

* ``model basic -ndm 1 -ndf 1``; node 0 fixed at the ground, node i = floor i with its
  lumped mass;
* every column a ``zeroLength`` element between floor i−1 and floor i with the OpenSees
  uniaxial material that is the twin of its rths_ident model: the ``opensees_twin`` of
  the model's registry entry (:data:`rths_ident.models.MODELS`), e.g.
  :class:`~rths_ident.models.BoucWen` → ``BoucWen`` (equal to 7e-13 with one sub-step,
  tests/models), :class:`~rths_ident.models.BilinearKinematic` → ``Steel01`` (equal to
  4e-16), :class:`~rths_ident.models.LinearElement` → ``Elastic`` (E = k, eta = c);
* the viscous damping matrix C of the native building, which for a shear building is
  ``a0 M`` plus storey dashpots (a Rayleigh C = a0 M + a1 K keeps the shear pattern,
  and the native partition keeps the full frame's C, tested column included): ``rayleigh
  a0 0 0 0`` and one ``Viscous`` ``zeroLength`` per storey with c_i read off C. A C that
  is not of that form is refused.

The columns' element tags are returned; the twin's ``updatable`` gives the OpenSees
parameter name of each model field, so a ``parameter_map`` can push identified fields
into them. Units: SI.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.models import opensees_twin_of

__all__ = ["build_shear_building", "OpenSeesShearBuildingModel", "storey_dashpots"]


class OpenSeesShearBuildingModel(NamedTuple):
    """What :func:`build_shear_building` built: the column element tags per storey
    (storey 1 first), the floor nodes (floor 1 first) and the storey dashpots' c_i."""

    column_tags: tuple  # tuple per storey of element tags
    floor_nodes: tuple
    storey_damping: np.ndarray  # N·s/m per storey


def storey_dashpots(damping, mass, a0: float) -> np.ndarray:
    """c_i [N·s/m] of the storey dashpots such that C = a0 M + Σ_i c_i (e_i − e_{i−1})(e_i − e_{i−1})ᵀ
    (e_0 = ground). Raises ParameterError if ``damping − a0·mass`` is not of that form."""
    c = np.asarray(damping, dtype=float) - a0 * np.asarray(mass, dtype=float)
    n = c.shape[0]
    dashpots = np.empty(n)
    for i in range(n - 1, -1, -1):
        above = dashpots[i + 1] if i + 1 < n else 0.0
        dashpots[i] = c[i, i] - above
    rebuilt = np.zeros((n, n))
    for i, ci in enumerate(dashpots):
        rebuilt[i, i] += ci
        if i > 0:
            rebuilt[i - 1, i - 1] += ci
            rebuilt[i - 1, i] -= ci
            rebuilt[i, i - 1] -= ci
    scale = max(np.max(np.abs(c)), 1e-300)
    if np.max(np.abs(rebuilt - c)) > 1e-9 * scale:
        raise ParameterError("damping − a0·mass is not a shear-building (storey dashpot) pattern: "
                             "OpenSees could not represent it with rayleigh a0 and storey dashpots")
    return dashpots


def build_shear_building(ops, floor_masses, storeys: Sequence[Sequence[tuple[type, Any]]], damping=None,
                         mass_proportional_damping: float = 0.0) -> OpenSeesShearBuildingModel:
    """Build the shear building in the (wiped) OpenSees domain (module doc).

    floor_masses : (n,) kg, floor 1 first.
    storeys : per storey, a sequence of (model class, Params) columns.
    damping : (n, n) N·s/m, the native C (None: no damping).
    mass_proportional_damping : a0 [1/s] of C's mass-proportional part.
    """
    masses = np.asarray(floor_masses, dtype=float)
    if masses.ndim != 1 or len(storeys) != masses.size:
        raise ParameterError(f"storeys needs one entry per floor ({masses.size}); got {len(storeys)}")
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(0, 0.0)
    ops.fix(0, 1)
    for i, m in enumerate(masses, start=1):
        ops.node(i, 0.0)
        ops.mass(i, float(m))
    tag = 1
    column_tags = []
    for i, columns in enumerate(storeys, start=1):
        tags = []
        for model, params in columns:
            try:
                twin = opensees_twin_of(model)
            except ParameterError as error:
                raise ParameterError(f"storey {i}: {error}") from None
            ops.uniaxialMaterial(*twin.command(tag, params))
            ops.element("zeroLength", tag, i - 1, i, "-mat", tag, "-dir", 1)
            tags.append(tag)
            tag += 1
        column_tags.append(tuple(tags))
    dashpots = np.zeros(masses.size)
    if damping is not None:
        dashpots = storey_dashpots(damping, np.diag(masses), mass_proportional_damping)
        for i, ci in enumerate(dashpots, start=1):
            if ci != 0.0:
                ops.uniaxialMaterial("Viscous", tag, float(ci), 1.0)
                ops.element("zeroLength", tag, i - 1, i, "-mat", tag, "-dir", 1)
                tag += 1
        if mass_proportional_damping:
            ops.rayleigh(float(mass_proportional_damping), 0.0, 0.0, 0.0)
    return OpenSeesShearBuildingModel(tuple(column_tags), tuple(range(1, masses.size + 1)), dashpots)
