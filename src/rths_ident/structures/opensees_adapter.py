"""In-process OpenSeesPy numerical substructure: a LINEAR shear building.

Model (``model basic -ndm 1 -ndf 1``): node 0 fixed at the ground, node i (i = 1..n) is
floor i with its lumped mass; every column is a ``zeroLength`` element between floor
i−1 and floor i with its own ``uniaxialMaterial Elastic`` (so each column's stiffness
can be changed through an OpenSees ``parameter``; ``-doRayleigh 1``, without which
zeroLength elements get no stiffness-proportional damping). Rayleigh damping
``rayleigh a0 a1 0 0``: a1 multiplies each element's CURRENT stiffness, so after
:meth:`update_parameter` the damping follows the new stiffness (the native model keeps
its C matrix until you replace it). Ground motion:
``UniformExcitation`` in direction 1 with a ``Path`` time series (values in m/s², the
first sample at t = 0), so ``nodeDisp`` are displacements relative to the ground, as
in :mod:`rths_ident.structures`.

Integrators: ``"Newmark"`` (``integrator Newmark 0.5 0.25`` by default, algorithm
``Linear``: exact for a linear model), ``"AlphaOS"`` (``integrator AlphaOS α_OS``,
α_OS = 1 + α of seed 000 Eq. 2.51), and, for cross-checks, ``"CentralDifference"`` and
``"NewmarkExplicit"``.

The physical substructure's force f_e enters as nodal loads −f_e in a ``Plain`` pattern
with a ``Constant`` series, rebuilt by :meth:`apply_interface_force` (the same sign
convention as the native integrators: subtracted like an internal force). With
AlphaOS, OpenSees treats it as an external load (not blended with the previous step's
force as the native :class:`~rths_ident.structures.alpha_os.AlphaOS` does).

OpenSees keeps ONE model per process: creating a new adapter wipes the previous one,
whose methods then raise ``RuntimeError``. Units: SI (N, m, s, kg).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from rths_ident import extras
from rths_ident.errors import ParameterError

__all__ = ["OpenSeesShearBuilding", "import_opensees"]

_active_model: object | None = None

_GROUND_SERIES_TAG = 1
_GROUND_PATTERN_TAG = 1
_INTERFACE_SERIES_TAG = 2
_INTERFACE_PATTERN_TAG = 2


def import_opensees():
    """``openseespy.opensees``, or :class:`~rths_ident.errors.MissingExtra` in one line
    naming the system BLAS/LAPACK to install; its exit message kept off the terminal
    (:func:`rths_ident.extras.opensees`)."""
    return extras.opensees()


class OpenSeesShearBuilding:
    """Linear shear building in OpenSeesPy, stepped from Python.

    floor_masses : (n,) kg, floor 1 first.
    column_stiffnesses : per storey (storey 1 first), a sequence of column lateral
        stiffnesses [N/m] (or one number = one column).
    dt : analysis time step [s].
    ground_accel : ground acceleration record [m/s²] at t = 0, record_dt, 2 record_dt, …
        (None: no ground motion).
    record_dt : sample interval of ``ground_accel`` [s] (default ``dt``).
    rayleigh : (a0 [1/s], a1 [s]) or None.
    integrator : "Newmark" | "AlphaOS" | "CentralDifference" | "NewmarkExplicit".
    newmark : (γ, β) for "Newmark" (OpenSees argument order), default (0.5, 0.25).
    alpha_os : α_OS ∈ [2/3, 1] for "AlphaOS" (0.9 ↔ α = −0.1).
    """

    def __init__(
        self,
        floor_masses: Sequence[float],
        column_stiffnesses: Sequence,
        dt: float,
        ground_accel=None,
        record_dt: float | None = None,
        rayleigh: tuple[float, float] | None = None,
        integrator: str = "Newmark",
        newmark: tuple[float, float] = (0.5, 0.25),
        alpha_os: float = 0.9,
    ):
        global _active_model
        ops = import_opensees()
        masses = np.atleast_1d(np.asarray(floor_masses, dtype=float))
        if masses.ndim != 1 or masses.size == 0 or np.any(masses <= 0) or not np.all(np.isfinite(masses)):
            raise ParameterError(f"floor_masses must be positive finite values [kg]; got {floor_masses!r}")
        if len(column_stiffnesses) != masses.size:
            raise ParameterError(
                f"column_stiffnesses needs one entry per storey ({masses.size}); got {len(column_stiffnesses)}"
            )
        columns = []
        for i, storey in enumerate(column_stiffnesses):
            ks = np.atleast_1d(np.asarray(storey, dtype=float))
            if ks.ndim != 1 or ks.size == 0 or np.any(ks <= 0) or not np.all(np.isfinite(ks)):
                raise ParameterError(
                    f"column_stiffnesses[{i}] must be positive finite stiffnesses [N/m]; got {storey!r}"
                )
            columns.append(ks)
        if not (math.isfinite(dt) and dt > 0):
            raise ParameterError(f"dt must be a positive time step [s]; got {dt!r}")
        if integrator not in ("Newmark", "AlphaOS", "CentralDifference", "NewmarkExplicit"):
            raise ParameterError(
                "integrator must be 'Newmark', 'AlphaOS', 'CentralDifference' or 'NewmarkExplicit'; "
                f"got {integrator!r}"
            )
        if integrator == "AlphaOS" and not (2.0 / 3.0 - 1e-12 <= alpha_os <= 1.0):
            raise ParameterError(f"alpha_os must be in [2/3, 1] (OpenSees AlphaOS); got {alpha_os!r}")

        self._ops = ops
        self.floor_masses = masses
        self.dt = float(dt)
        self.integrator = integrator
        self._element_tags: list[list[int]] = []
        self._parameter_tags: dict[int, int] = {}
        self._initial_stiffness: dict[int, float] = {}
        self._interface_force = np.zeros(masses.size)

        ops.wipe()
        _active_model = self
        ops.model("basic", "-ndm", 1, "-ndf", 1)
        ops.node(0, 0.0)
        ops.fix(0, 1)
        for i, m in enumerate(masses, start=1):
            ops.node(i, 0.0)
            ops.mass(i, float(m))
        tag = 1
        for i, ks in enumerate(columns, start=1):
            tags = []
            for k in ks:
                ops.uniaxialMaterial("Elastic", tag, float(k))
                self._initial_stiffness[tag] = float(k)
                ops.element("zeroLength", tag, i - 1, i, "-mat", tag, "-dir", 1, "-doRayleigh", 1)
                tags.append(tag)
                tag += 1
            self._element_tags.append(tags)
        if rayleigh is not None:
            a0, a1 = rayleigh
            ops.rayleigh(float(a0), float(a1), 0.0, 0.0)
        if ground_accel is not None:
            values = np.asarray(ground_accel, dtype=float).ravel()
            rdt = self.dt if record_dt is None else float(record_dt)
            ops.timeSeries("Path", _GROUND_SERIES_TAG, "-dt", rdt, "-values", *values.tolist())
            ops.pattern("UniformExcitation", _GROUND_PATTERN_TAG, 1, "-accel", _GROUND_SERIES_TAG)
        ops.timeSeries("Constant", _INTERFACE_SERIES_TAG)
        self._build_interface_pattern()

        ops.constraints("Plain")
        ops.numberer("Plain")
        ops.system("FullGeneral")
        ops.algorithm("Linear")
        if integrator == "Newmark":
            gamma, beta = newmark
            ops.integrator("Newmark", float(gamma), float(beta))
        elif integrator == "AlphaOS":
            ops.integrator("AlphaOS", float(alpha_os))
        elif integrator == "CentralDifference":
            ops.integrator("CentralDifference")
        else:
            ops.integrator("NewmarkExplicit", 0.5)
        ops.analysis("Transient")

    # -- helpers ----------------------------------------------------------------------
    def _check_active(self):
        if _active_model is not self:
            raise RuntimeError(
                "this OpenSees model was wiped: OpenSees holds one model per process and a "
                "newer OpenSeesShearBuilding (or ops.wipe()) replaced it"
            )

    def _build_interface_pattern(self):
        ops = self._ops
        ops.pattern("Plain", _INTERFACE_PATTERN_TAG, _INTERFACE_SERIES_TAG)
        for i, f in enumerate(self._interface_force, start=1):
            ops.load(i, -float(f))

    @property
    def n_dof(self) -> int:
        return int(self.floor_masses.size)

    # -- stepping -----------------------------------------------------------------------
    def apply_interface_force(self, force) -> None:
        """Set the physical substructure's force f_e [N] (one value per floor) for the
        next steps; it is applied as the nodal load −f_e."""
        self._check_active()
        f = np.broadcast_to(np.asarray(force, dtype=float), (self.n_dof,)).copy()
        if not np.all(np.isfinite(f)):
            raise ValueError(f"interface force must be finite; got {force!r}")
        self._interface_force = f
        self._ops.remove("loadPattern", _INTERFACE_PATTERN_TAG)
        self._build_interface_pattern()

    def step(self, dt: float | None = None) -> np.ndarray:
        """Advance one step (default ``self.dt``); return the floor displacements [m]."""
        self._check_active()
        status = self._ops.analyze(1, self.dt if dt is None else float(dt))
        if status != 0:
            raise RuntimeError(f"OpenSees analyze failed with status {status} at t = {self.time:.6g} s")
        return self.displacements()

    @property
    def time(self) -> float:
        """Current analysis time [s]."""
        return float(self._ops.getTime())

    def displacements(self) -> np.ndarray:
        """Floor displacements relative to the ground [m]."""
        self._check_active()
        return np.array([self._ops.nodeDisp(i, 1) for i in range(1, self.n_dof + 1)])

    def velocities(self) -> np.ndarray:
        """Floor velocities relative to the ground [m/s]."""
        self._check_active()
        return np.array([self._ops.nodeVel(i, 1) for i in range(1, self.n_dof + 1)])

    def accelerations(self) -> np.ndarray:
        """Floor accelerations relative to the ground [m/s²]."""
        self._check_active()
        return np.array([self._ops.nodeAccel(i, 1) for i in range(1, self.n_dof + 1)])

    def interface_displacement(self, dof: int = 0) -> float:
        """Displacement [m] of floor ``dof`` (0-based; 0 = floor 1, the seed 001
        interface) — the target to send to the physical substructure."""
        if not (0 <= int(dof) < self.n_dof):
            raise ValueError(f"dof must be in 0..{self.n_dof - 1}; got {dof!r}")
        self._check_active()
        return float(self._ops.nodeDisp(int(dof) + 1, 1))

    # -- model updating -------------------------------------------------------------------
    def column_stiffness(self, storey: int, column: int) -> float:
        """Current stiffness [N/m] of a column (storey 1-based, column 0-based), read back
        from OpenSees when it has been updated through a parameter."""
        ele = self._element_tag(storey, column)
        if ele in self._parameter_tags:
            return float(self._ops.getParamValue(self._parameter_tags[ele]))
        return float(self._initial_stiffness[ele])

    def _element_tag(self, storey: int, column: int) -> int:
        self._check_active()
        if not (1 <= int(storey) <= self.n_dof):
            raise ValueError(f"storey must be in 1..{self.n_dof}; got {storey!r}")
        tags = self._element_tags[int(storey) - 1]
        if not (-len(tags) <= int(column) < len(tags)):
            raise ValueError(f"storey {storey} has {len(tags)} columns; got column {column!r}")
        return tags[int(column)]

    def update_parameter(self, storey: int, column: int, stiffness: float) -> None:
        """Set a column's stiffness [N/m] through an OpenSees ``parameter`` on its
        element's material modulus ("E") and ``updateParameter``."""
        stiffness = float(stiffness)
        if not (math.isfinite(stiffness) and stiffness > 0):
            raise ParameterError(f"stiffness must be a positive finite value [N/m]; got {stiffness!r}")
        ele = self._element_tag(storey, column)
        if ele not in self._parameter_tags:
            ptag = len(self._parameter_tags) + 1
            self._ops.parameter(ptag, "element", ele, "E")
            self._parameter_tags[ele] = ptag
        self._ops.updateParameter(self._parameter_tags[ele], stiffness)

    def close(self) -> None:
        """Wipe the OpenSees model."""
        global _active_model
        if _active_model is self:
            self._ops.wipe()
            _active_model = None

    @classmethod
    def from_shear_building(cls, building, dt: float, **kwargs) -> "OpenSeesShearBuilding":
        """Linear model of a :class:`~rths_ident.structures.ShearBuilding`: the floor
        masses and every column's initial tangent stiffness."""
        import jax.numpy as jnp

        columns = []
        for group, p in zip(building.groups, building.column_params):
            ks = group.column_tangents(p, group.init(p), 0.0, 0.0, building.linearisation_dt)
            columns.append(np.asarray(jnp.atleast_1d(ks), dtype=float))
        return cls(building.floor_masses, columns, dt, **kwargs)
