"""A ``shear-frame`` test's structure from a file: matrices, or an OpenSeesPy model file.

``structure.matrices`` — a folder of ``M.csv``, ``K.csv``, ``C.csv``
(:mod:`rths_ident.structures.matrix_files`): the numerical substructure (NS) is the linear
structure M ü + C u̇ + K u plus the numerical copies of the specimen's model between the
DOF pairs of ``structure.updated_elements`` (their identified fields are updated with θ̂,
as a shear frame's numerical columns are); the specimen acts at ``structure.interface_dof``
against the ground. Native NS, either engine. Reference (J4): the **monolithic**
structure, M, C, K, the numerical copies and the specimen as one more element, all true,
integrated with the NS's integrator at the slow rate (exact: the same equation, nothing
partitioned; :func:`rths_ident.scenarios.frame_case.build`).

``structure.opensees_model`` — an OpenSeesPy model file in the ``build(ops)``/``INTERFACE``
form of :mod:`rths_ident.structures.ns_model_file`: the NS is
:class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure` (backend
``opensees``, or ``opensees-tcp``: the same function on a ``rths-ident serve ns``
server), with the test file's integrator and slow step and the record; its
``PARAMETER_MAP`` entries named by the identified fields (``PARAMETER_NAMES``) are what
the hook updates. Before the first step the NS's identified fields are set to the
initial guess (variant ``oracle``: the true values), whatever the file builds, so the
three variants start where the other structure sources start. Reference (J4): the
**ideal partitioned test**, the same OpenSees NS with the true values coupled to the
specimen's model at the slow rate (:class:`~rths_ident.hybrid.fast_side.direct_site.DirectSite`,
as ``rc-frame``'s), run once per configuration.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from rths_ident._params import units_of
from rths_ident.hybrid.fast_side.direct_site import DirectSite
from rths_ident.hybrid.loop.assembled import HybridTest
from rths_ident.hybrid.loop.engine import run_stepwise
from rths_ident.scenarios import components, frame_case, remote_ns
from rths_ident.scenarios.frame_case import ColumnUnderTest, PartitionedFrame
from rths_ident.structures.elements import ElementGroup, InterfaceElement, batch_params
from rths_ident.structures.matrix_files import StructureMatrices, element_pairs, read_structure_matrices
from rths_ident.structures.ns_model_file import OpenSeesModelFile, read_opensees_model_file
from rths_ident.structures.shear_building import DEFAULT_LINEARISATION_DT
from rths_ident.structures.structure import Structure, StructureParams

__all__ = ["matrices_of", "model_file_of", "matrix_partition", "build_opensees_model_test", "opensees_model_ns",
           "check_opensees_model"]


def _stamp(path: str) -> tuple:
    """``path`` with its files' modification times: a cache key that sees an edited file."""
    if os.path.isdir(path):
        return path, tuple(sorted((e.name, e.stat().st_mtime_ns) for e in os.scandir(path)))
    return path, os.stat(path).st_mtime_ns if os.path.exists(path) else None


@functools.lru_cache(maxsize=8)
def _read_matrices(stamp) -> StructureMatrices:
    return read_structure_matrices(stamp[0])


@functools.lru_cache(maxsize=8)
def _read_model_file(stamp) -> OpenSeesModelFile:
    return read_opensees_model_file(stamp[0])


def matrices_of(cfg) -> StructureMatrices:
    """The checked M, K, C of ``cfg.matrices`` (read once per file version)."""
    return _read_matrices(_stamp(cfg.matrices))


def model_file_of(cfg) -> OpenSeesModelFile:
    """The checked model file of ``cfg.opensees_model`` (run once per file version)."""
    return _read_model_file(_stamp(cfg.opensees_model))


# --------------------------------------------------------------------------- matrices

def _element_groups(model: type, pairs, specimen_at: int | None) -> tuple:
    """One :class:`ElementGroup` per distinct (top, bottom) pair, in order of first
    appearance; with ``specimen_at`` the specimen is one more element, the last of the
    group between that DOF and the ground (a group of its own if there is none)."""
    distinct = list(dict.fromkeys(pairs))
    groups = []
    for top, bottom in distinct:
        count = pairs.count((top, bottom)) + (1 if (top, bottom) == (specimen_at, -1) else 0)
        groups.append(ElementGroup(model, top, None if bottom < 0 else bottom, count,
                                   f"dof{top + 1}-{'ground' if bottom < 0 else f'dof{bottom + 1}'}"))
    if specimen_at is not None and (specimen_at, -1) not in distinct:
        groups.append(ElementGroup(model, specimen_at, None, 1, "specimen"))
    return tuple(groups)


def _structure(matrices: StructureMatrices, groups: tuple, column_params, interface_stiffness=None):
    n = matrices.n_dof
    params = StructureParams(  # jax.device_put: jnp.asarray compiles small programs
        mass=_device(matrices.mass), damping=_device(matrices.damping),
        linear_stiffness=_device(matrices.stiffness), ground_mass=_device(matrices.mass @ np.ones(n)),
        element_params=tuple(batch_params([column_params] * g.count) for g in groups),
        interface_stiffness=interface_stiffness)
    structure = Structure(n_dof=n, groups=groups)
    structure.check_params(params)
    return structure, params


def _device(array):
    import jax  # noqa: PLC0415

    return jax.device_put(np.asarray(array, dtype=float))


def matrix_partition(cfg, column: ColumnUnderTest) -> PartitionedFrame:
    """The reference and the NS of a ``structure.matrices`` test (module doc)."""
    matrices = matrices_of(cfg)
    pairs = list(element_pairs(cfg.updated_elements, matrices.n_dof))
    i = cfg.interface_dof - 1
    ref_groups = _element_groups(column.model, pairs, i)
    ref_structure, ref_params = _structure(matrices, ref_groups, column.true_column)
    tested_group = next(g for g, group in enumerate(ref_groups) if group.top_dof == i and group.bottom_dof is None)
    ns_groups = _element_groups(column.model, pairs, None)
    interface = InterfaceElement(column.model, i, None, matrices.n_dof)
    ns_structure, ns_params = _structure(matrices, ns_groups, column.initial_column,
                                         interface.initial_nodal_stiffness(column.initial_column,
                                                                           DEFAULT_LINEARISATION_DT))
    _, ns_params_true = _structure(matrices, ns_groups, column.true_column,
                                   interface.initial_nodal_stiffness(column.true_column, DEFAULT_LINEARISATION_DT))
    names = tuple(f"dof{d + 1}" for d in range(matrices.n_dof))
    return PartitionedFrame(ref_structure, ref_params, (tested_group, -1), ns_structure, ns_params,
                            ns_params_true, i, names)


# --------------------------------------------------------------------- OpenSees model file

def response_names(model_file: OpenSeesModelFile) -> tuple:
    return tuple(f"node{node}-dof{dof}" for node, dof in model_file.response)


def opensees_model_ns(cfg, column: ColumnUnderTest, variant: str, ground_accel):
    """The model file's OpenSees NS for ``variant`` (``ground_accel`` at t_1 … t_N, as the
    test's), its identified fields set to the initial guess (``oracle``: the true
    values). In process for ``opensees``, on the server for ``opensees-tcp``."""
    from rths_ident.structures.opensees_substructure import OpenSeesSubstructure  # noqa: PLC0415

    model_file = model_file_of(cfg)
    names = column.param_names
    settings = {k: v for k, v in model_file.settings.items()
                if k not in ("integrator", "response", "parameter_map", "parameter_names", "parameter_units")}
    if cfg.integrator == "alpha-os":  # the native α-OS weighting unless the file says otherwise
        settings.setdefault("alpha_os_feedback", "weighted")
    ns = OpenSeesSubstructure(model_file.build, model_file.interface, 1.0 / cfg.slow_rate,
                              ground_accel=np.concatenate([[0.0], np.asarray(ground_accel, dtype=float)]),
                              integrator=cfg.integrator, response=model_file.response,
                              parameter_map=model_file.parameter_map_for(names) if names else None,
                              parameter_names=names or None, **settings)
    if names:
        start = column.true_column if variant == "oracle" else column.initial_column
        ns.apply_parameters(frame_case.values(start, names))
    return ns


def check_opensees_model(cfg, column: ColumnUnderTest) -> None:
    """Build the model once and attach its parameters (an element tag not in the model,
    a parameter OpenSees does not know: a :class:`ParameterError` naming the field and
    the file), then wipe it. ``rths-ident check`` calls it; a run does the same when it
    opens its NS."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415

    try:
        ns = opensees_model_ns(cfg, column, "updating", np.zeros(2))
    except ParameterError as error:
        raise ParameterError(f"structure.opensees_model = {cfg.opensees_model!r}: {error}") from None
    ns.close()


def _direct_logs(cfg, column: ColumnUnderTest, make_ns, ground_accel, specimen_model, specimen_params) -> dict:
    """The NS of ``make_ns("oracle")`` coupled to the specimen model at the slow rate."""
    ns = make_ns("oracle")
    try:
        return run_stepwise(DirectSite(specimen_model, specimen_params, 1.0 / cfg.slow_rate), ns, ground_accel,
                            safe_stop=None)
    finally:
        ns.close()


_IDEAL_LOGS: dict = {}


def build_opensees_model_test(cfg, column: ColumnUnderTest) -> HybridTest:
    """The test of a ``structure.opensees_model`` file (module doc); the step-wise engine."""
    from rths_ident.models import LinearElement, LinearParams  # noqa: PLC0415

    time_slow, ground_accel = components.slow_record(cfg)
    model_file = model_file_of(cfg)

    def make_ns(variant: str):
        if cfg.ns == remote_ns.REMOTE:
            return remote_ns.remote_substructure(cfg, variant, ground_accel)
        return opensees_model_ns(cfg, column, variant, ground_accel)

    def ideal_logs() -> dict:
        """The ideal partitioned test (J4's reference), once per configuration."""
        key = cfg.program_key()
        if key not in _IDEAL_LOGS:
            _IDEAL_LOGS.clear()
            _IDEAL_LOGS[key] = _direct_logs(cfg, column, make_ns, ground_accel, column.model, column.true_column)
        return _IDEAL_LOGS[key]

    def realisation():
        """DDMRT's training signal: the NS with the specimen as a linear spring of its
        initial-guess stiffness."""
        k = float(column.interface_stiffness(frame_case.values(column.initial_column, column.param_names)))
        logs = _direct_logs(cfg, column, make_ns, ground_accel, LinearElement, LinearParams(k=k))
        return np.asarray(logs["fast"]["target"])[:, 0]

    def reference():
        logs = ideal_logs()
        return np.asarray(logs["ns"]["displacement"]), np.asarray(logs["fast"]["force"])[:, 0]

    side = components.fast_side(cfg, specimen_model=column.model, specimen=column.specimen,
                                actuator=column.actuator, identifier=column.identifier, realisation=realisation,
                                identifier_log=column.identifier_log)
    return HybridTest(
        key=cfg.program_key(), name=cfg.SCENARIO, time_slow=time_slow, ground_accel=ground_accel,
        slow_rate=cfg.slow_rate, fast_side=side, native_ns=None, make_ns=make_ns, guards=column.guards,
        param_names=column.param_names, true_values=frame_case.values(column.true_column, column.param_names),
        initial_values=frame_case.values(column.initial_column, column.param_names), reference=reference,
        seed=cfg.seed, response_names=response_names(model_file), extra_metrics=column.extra_metrics,
        param_units={n: units_of(column.true_column)[n] for n in column.param_names})
