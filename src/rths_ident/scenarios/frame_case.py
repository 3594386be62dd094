"""A virtual hybrid test of seed 001's frame with one first-storey column tested.

The structure shared by the ``lugre-frame`` and ``bw-frame`` scenarios: what differs
between them — the column model, its identifier and how identified values map onto the
numerical columns — is described by a :class:`ColumnUnderTest`; this module turns it
into a :class:`~rths_ident.hybrid.loop.assembled.HybridTest`:

* the monolithic reference (the whole frame, true columns, α-OS at Δt_n);
* the numerical substructure (the frame without its right-most first-storey column,
  initial-guess columns, the frame's Rayleigh C kept whole; see
  :mod:`rths_ident.structures.partition`), native α-OS;
* the fast side (:mod:`rths_ident.hybrid.fast_side.virtual_site`) around the tested column;
* how θ̂ enters the NS: every numerical column takes the estimate, and the α-OS
  splitting stiffness of the interface follows the identified initial stiffness.

DDMRT's Wiener predictor is trained on an approximate realisation (seed 000 Eq. 3.5):
the NS alone (the *initial* model with the tested column's initial-guess stiffness as a
linear spring) under the record itself. The loop, the engines and the report are
:mod:`rths_ident.hybrid.loop.assembled` and :mod:`rths_ident.runner.results`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import exported_programs
from rths_ident.hybrid.loop.assembled import HybridTest, NativeNS, native_substructure
from rths_ident.hybrid.fast_side.interlocks import physical_bounds
from rths_ident.hybrid.loop.model_updating import UpdateGuards
from rths_ident.runner.options import RunOptions
from rths_ident.runner.results import run_scenario as run_hybrid_test
from rths_ident.scenarios import components, remote_ns
from rths_ident.scenarios.components import NATIVE_INTEGRATORS
from rths_ident.declaration import Field
from rths_ident.models.registry import name_of_model
from rths_ident.scenarios.config import HybridTestConfig
from rths_ident.protocols import OnlineIdentifier
from rths_ident.hybrid.fast_side.fast_chunk import no_identifier_log
from rths_ident.errors import ParameterError
from rths_ident._params import units_of
from rths_ident.structures import ShearBuilding, StoreyColumns, partition_column, set_column_params
from rths_ident.structures.numerical_substructure import NS_BACKENDS, native_ns_step
from rths_ident.structures.structure import Structure, StructureParams, with_changes




@dataclasses.dataclass(frozen=True)
class FrameTestConfig(HybridTestConfig):
    """Settings of a seed 001 frame scenario (SI units): those of
    :class:`~rths_ident.scenarios.config.HybridTestConfig` plus the floor mass
    and the frame's Rayleigh damping."""

    SCENARIO: ClassVar[str] = "frame-test"

    floor_mass: float | None = None  # kg per floor
    rayleigh_zeta: float = 0.05  # on modes 1–2
    storeys: int = 3  # seed 001 §3.2: 3 storeys …
    columns_per_storey: int = 3  # … of 3 columns (2 bays)
    tested_column: int = -1  # which ground-storey column is tested (Python index; −1 = the right-most)
    integrator: str = "alpha-os"  # of the NS (and the reference): alpha-os | newmark-explicit | central-difference
    ns: str = "native"  # native (JAX), opensees (the same frame in OpenSeesPy; step-wise engine) or opensees-tcp
    ns_address: str | None = None  # "HOST:PORT" of a running `rths-ident serve ns` (opensees-tcp); None: start one

    def __post_init__(self):
        super().__post_init__()
        if self.integrator not in NATIVE_INTEGRATORS:
            self.bad("integrator", " | ".join(NATIVE_INTEGRATORS))
        if self.ns not in NS_BACKENDS:
            self.bad("ns", NS_BACKENDS.choices())
        if not isinstance(self.storeys, int) or self.storeys < 2:
            self.bad("storeys", "an integer ≥ 2")
        if not isinstance(self.columns_per_storey, int) or self.columns_per_storey < 2:
            self.bad("columns_per_storey", "an integer ≥ 2 (one is tested, the others stay numerical)")
        if not (isinstance(self.tested_column, int)
                and -self.columns_per_storey <= self.tested_column < self.columns_per_storey):
            self.bad("tested_column", f"a column index in [−{self.columns_per_storey}, {self.columns_per_storey})")
        remote_ns.check_ns_address(self)
        if self.floor_mass is not None and not (np.isfinite(self.floor_mass) and self.floor_mass > 0):
            self.bad("floor_mass", "a positive mass in kg")
        if not (0.0 <= self.rayleigh_zeta < 1.0):
            self.bad("rayleigh_zeta", "a damping ratio in [0, 1)")

    def program_key(self):
        """The loop's program does not depend on where the OpenSees NS runs."""
        return dataclasses.replace(super().program_key(), ns_address=None,
                                   ns="opensees" if self.ns == "opensees-tcp" else self.ns)

    @property
    def mass(self) -> float:
        """Floor mass [kg] (scenarios may derive it from the record)."""
        return float(self.floor_mass)

    @property
    def floors(self) -> tuple:
        """Names of the response DOFs (floor 1 first)."""
        return tuple(f"floor{i + 1}" for i in range(self.storeys))

    def frame(self, model: type, column_params) -> ShearBuilding:
        """The shear frame: ``storeys`` floors of ``mass``, ``columns_per_storey``
        identical columns of ``model`` per storey."""
        return ShearBuilding([self.mass] * self.storeys,
                             [StoreyColumns(model, column_params, self.columns_per_storey)] * self.storeys)


class ColumnUnderTest(NamedTuple):
    """What a frame scenario specifies about its columns (module doc)."""

    model: type  # element model class
    true_column: Any  # Params of every true column (reference, specimen's model numbers)
    initial_column: Any  # Params of the NS columns' initial guess
    specimen: Any  # Params used for the physical specimen (e.g. finer sub-steps)
    param_names: tuple  # names of the identified parameters, in θ̂ order
    identifier: OnlineIdentifier
    with_estimate: Callable  # θ̂ -> column Params (traceable; pushed into every NS column)
    interface_stiffness: Callable  # θ̂ -> the tested column's initial stiffness [N/m] (α-OS K^l)
    guards: UpdateGuards
    actuator: Any  # CarrionSpencerParams
    extra_metrics: Callable = lambda logs: {}
    identifier_log: Callable = no_identifier_log  # (identifier params, state) -> dict, once per slow step
    # column Params -> the tested column's initial stiffness [N/m] (α-OS K^l), when it
    # needs more of the column than θ̂ (None: interface_stiffness(θ̂))
    column_interface_stiffness: Callable | None = None


def untouched_from(estimated, guess, current):
    """``estimated`` (column Params) with every float field that is still the very
    object of ``guess`` (θ̂ left it) taken from ``current`` (Params of the same model);
    ``estimated`` itself when the three do not flatten alike."""
    leaves, tree = jax.tree_util.tree_flatten(estimated)
    guess_leaves, guess_tree = jax.tree_util.tree_flatten(guess)
    current_leaves, current_tree = jax.tree_util.tree_flatten(current)
    if not (tree == guess_tree == current_tree):
        return estimated
    kept = [now if leaf is old and isinstance(old, (float, np.floating)) else leaf
            for leaf, old, now in zip(leaves, guess_leaves, current_leaves)]
    return jax.tree_util.tree_unflatten(tree, kept)


def values(column_params, names) -> np.ndarray:
    """The named fields of a column's Params as an array (θ order)."""
    return np.array([float(getattr(column_params, n)) for n in names])


class PartitionedFrame(NamedTuple):
    """The structure of a frame test: the monolithic reference (every column true, the
    specimen among them) and the numerical substructure (the structure without the
    specimen), both native (:mod:`rths_ident.structures.structure`)."""

    reference_structure: Structure
    reference_params: StructureParams  # true columns, the specimen among them
    tested: tuple  # (element group, column) of the specimen in the reference
    ns_structure: Structure
    ns_params: StructureParams  # the numerical columns at the initial guess
    ns_params_true: StructureParams  # … at the true values (the oracle variant)
    interface_dof: int  # the DOF (0-based) where the specimen acts, against the ground
    response_names: tuple  # names of the NS's DOFs (its logged displacements)


def shear_frame_partition(cfg: FrameTestConfig, column: ColumnUnderTest) -> PartitionedFrame:
    """Seed 001's shear frame of ``cfg`` (:meth:`FrameTestConfig.frame`) with Rayleigh
    damping on modes 1–2 of the true frame, its tested first-storey column removed."""
    true_frame = cfg.frame(column.model, column.true_column)
    damping = true_frame.rayleigh_damping(cfg.rayleigh_zeta, (1, 2))[0]
    ref_structure, ref_params = true_frame.to_structure(damping=damping)
    guess_frame = cfg.frame(column.model, column.initial_column)
    part = partition_column(guess_frame, storey=1, column=cfg.tested_column, damping=damping)
    ns_params_true = partition_column(true_frame, storey=1, column=cfg.tested_column, damping=damping).params
    return PartitionedFrame(ref_structure, ref_params, (0, cfg.tested_column), part.structure, part.params,
                            ns_params_true, 0, cfg.floors)


def build(cfg: FrameTestConfig, column: ColumnUnderTest, frame: PartitionedFrame | None = None) -> HybridTest:
    """The hybrid test of ``column`` in ``frame`` (default: seed 001's shear frame of
    ``cfg``, :func:`shear_frame_partition`) under ``cfg``."""
    time_slow, ground_accel = components.slow_record(cfg)
    dt_slow = 1.0 / cfg.slow_rate
    model = column.model
    frame = shear_frame_partition(cfg, column) if frame is None else frame
    ref_params = frame.reference_params
    make_integrator = NATIVE_INTEGRATORS[cfg.integrator]
    reference_integrator = make_integrator(frame.reference_structure)
    integrator = make_integrator(frame.ns_structure)
    structure, ns_params = frame.ns_structure, frame.ns_params
    i = frame.interface_dof
    tested_group, tested_column = frame.tested
    has_copies = any(group.model is model for group in structure.groups)

    copies = next((g for g, group in enumerate(structure.groups) if group.model is model), None)

    def estimated_column(params, estimate):
        """The column θ̂ describes: ``with_estimate(θ̂)``, its fields that θ̂ leaves at the
        guess read from the NS's own first copy of the column (they are equal; read from
        the loop's arguments, they are not constants of the compiled program, so tests
        that differ only in them share one program: a study's batch)."""
        estimated = column.with_estimate(estimate)
        if copies is None:
            return estimated
        current = jax.tree_util.tree_map(lambda leaf: leaf[0] if jnp.ndim(leaf) else leaf,
                                         params.element_params[copies])
        return untouched_from(estimated, column.initial_column, current)

    def apply_estimate(params, estimate):
        """Push θ̂ into every numerical column; the α-OS splitting stiffness of the
        interface follows the identified initial stiffness."""
        estimated = estimated_column(params, estimate)
        if has_copies:  # a structure of matrices may have no numerical copy of the specimen's model
            params = set_column_params(structure, params, model, estimated)
        k = (column.interface_stiffness(estimate) if column.column_interface_stiffness is None
             else column.column_interface_stiffness(estimated))
        k_interface = jnp.zeros_like(params.interface_stiffness).at[i, i].set(k)
        return with_changes(params, interface_stiffness=k_interface)

    def realisation():
        k_interface = ns_params.interface_stiffness
        linear = with_changes(ns_params, linear_stiffness=ns_params.linear_stiffness + k_interface)
        state = integrator.init(linear, dt_slow, check_stability=False)
        _, out = integrator.simulate(linear, ground_accel, dt_slow, state=state)
        return np.asarray(out.displacement[:, i])

    side = components.fast_side(cfg, specimen_model=model, specimen=column.specimen, actuator=column.actuator,
                                identifier=column.identifier, realisation=realisation,
                                identifier_log=column.identifier_log)
    native = NativeNS(integrator, ns_params, frame.ns_params_true, (i,), native_ns_step(integrator, (i,)),
                      apply_estimate)

    def reference():
        """Monolithic frame with the true columns: floor displacements (N, n) [m] and the
        tested column's force [N]."""
        def run(params, ag):
            _, out = reference_integrator.simulate(params, ag, dt_slow, state=reference_integrator.init(params, dt_slow))
            return out.displacement, out.column_forces[tested_group][:, tested_column]

        ag = jax.device_put(np.asarray(ground_accel))  # jnp.asarray would compile a small program
        floors, force = _reference_runner(cfg.program_key(), run, (ref_params, ag))(ref_params, ag)
        return np.asarray(floors), np.asarray(force)

    test = HybridTest(
        key=cfg.program_key(), name=cfg.SCENARIO, time_slow=time_slow, ground_accel=ground_accel,
        slow_rate=cfg.slow_rate, fast_side=side, native_ns=native, make_ns=None, guards=column.guards,
        param_names=column.param_names, true_values=values(column.true_column, column.param_names),
        initial_values=values(column.initial_column, column.param_names), reference=reference, seed=cfg.seed,
        response_names=frame.response_names, extra_metrics=column.extra_metrics,
        param_units={n: units_of(column.true_column)[n] for n in column.param_names},
        interlocks=components.interlocks(cfg, column.actuator),
        identifier_bounds=physical_bounds(type(column.true_column), column.param_names,
                                          values(column.initial_column, column.param_names),
                                          cfg.interlock_identifier_range),
    )
    if cfg.ns == "opensees":
        check_opensees_twin(cfg, column)
        return test._replace(native_ns=None, make_ns=lambda variant: opensees_frame_ns(cfg, column, variant,
                                                                                        ground_accel))
    if cfg.ns == remote_ns.REMOTE:
        check_opensees_twin(cfg, column)
        return test._replace(native_ns=None, make_ns=lambda variant: remote_ns.remote_substructure(
            cfg, variant, ground_accel))
    return test._replace(make_ns=lambda variant: native_substructure(test, variant))


def check_opensees_twin(cfg: FrameTestConfig, column: ColumnUnderTest) -> None:
    """A clear error before any work when the column model cannot live in OpenSees."""
    from rths_ident.models import opensees_twins  # noqa: PLC0415

    twins = opensees_twins()
    if column.model not in twins:
        raise ParameterError(
            f"{cfg.SCENARIO} --ns opensees: the {column.model.__name__} column has no OpenSees twin material "
            f"(OpenSees twins: {', '.join(m.__name__ for m in twins)})")
    unknown = [n for n in column.param_names if n not in twins[column.model].updatable]
    if unknown:
        raise ParameterError(f"{cfg.SCENARIO} --ns opensees: OpenSees cannot update {', '.join(unknown)} of "
                             f"{column.model.__name__} (updatable: {', '.join(twins[column.model].updatable)})")


def opensees_damping(cfg: FrameTestConfig, column: ColumnUnderTest) -> tuple[np.ndarray, float]:
    """The NS's damping for OpenSees: the native partition's C [N·s/m] (Rayleigh on the
    true frame, modes 1–2) and its mass-proportional coefficient a0 [1/s]."""
    true_frame = cfg.frame(column.model, column.true_column)
    damping, a0 = true_frame.rayleigh_damping(cfg.rayleigh_zeta, (1, 2))[:2]
    part = partition_column(cfg.frame(column.model, column.initial_column), storey=1, column=cfg.tested_column,
                            damping=damping)
    return np.asarray(part.params.damping), float(a0)


def opensees_frame_ns(cfg: FrameTestConfig, column: ColumnUnderTest, variant: str, ground_accel):
    """The numerical substructure as an OpenSeesPy model (``ground_accel`` at t_1 … t_N,
    as the test's): the frame without its tested column, the columns as OpenSees twin
    materials, the native C (a0 M + storey dashpots, :func:`opensees_damping`), identified fields pushed into every column's material through
    ``updateParameter``. α-OS weights the interface force like an internal force, as
    the native scheme does; OpenSees commits its elements at the corrected displacement
    (the native scheme at the predictor) and has no splitting stiffness for the
    specimen, so the two differ slightly (docs/hybrid/bw_frame.md); explicit Newmark
    gives the native numbers to rounding."""
    from rths_ident.models import opensees_twin_of  # noqa: PLC0415
    from rths_ident.structures.opensees_shear_building import build_shear_building  # noqa: PLC0415
    from rths_ident.structures.opensees_substructure import (  # noqa: PLC0415
        ElementParameter,
        OpenSeesSubstructure,
    )

    damping, a0 = opensees_damping(cfg, column)
    params = column.true_column if variant == "oracle" else column.initial_column
    per_storey = [cfg.columns_per_storey - 1] + [cfg.columns_per_storey] * (cfg.storeys - 1)
    storeys = [[(column.model, params)] * count for count in per_storey]
    tags: list = []

    def build(ops):
        built = build_shear_building(ops, [cfg.mass] * cfg.storeys, storeys, damping, a0)
        tags[:] = [t for storey in built.column_tags for t in storey]

    # element tags 1, 2, … in storey order (build_shear_building numbers the columns first)
    column_tags = tuple(range(1, sum(per_storey) + 1))
    updatable = opensees_twin_of(column.model).updatable
    parameter_map = [ElementParameter(column_tags, updatable[name]) for name in column.param_names]
    options = {"alpha_os_feedback": "weighted"} if cfg.integrator == "alpha-os" else {}
    ns = OpenSeesSubstructure(build, (1, 1), 1.0 / cfg.slow_rate, ground_accel=np.concatenate([[0.0], ground_accel]),
                              integrator=cfg.integrator, response=tuple((i, 1) for i in range(1, cfg.storeys + 1)),
                              parameter_map=parameter_map, parameter_names=column.param_names, **options)
    if tuple(tags) != column_tags:
        ns.close()
        raise RuntimeError(f"unexpected OpenSees column tags {tags}")
    return ns


def scenario_runner(build: Callable[[FrameTestConfig], HybridTest],
                    column_under_test: Callable[[FrameTestConfig], ColumnUnderTest] | None = None) -> Callable:
    """A frame scenario's ``run_scenario(cfg, options)``: the configured variant and
    (``options.compare``) ``none`` and ``oracle``
    (:func:`rths_ident.runner.results.run_scenario`), with the floor mass and the initial
    error in the result. With ``column_under_test`` the plots get
    ``_arrays["column_force"]`` (:func:`column_force_function`)."""

    def run_scenario(cfg, options: RunOptions = RunOptions()) -> dict:
        with remote_ns.ns_server_for(cfg) as served:  # opensees-tcp: its server lives as long as the run
            column = column_under_test(served) if column_under_test is not None else None
            model_force = None if column is None else column_force_function(column, cfg.fast_rate)
            result = run_hybrid_test(served, build, options, describe=lambda test: {
                "floor_mass_kg": served.mass, "initial_error": served.initial_error,
                **({} if column is None else {"specimen_model": name_of_model(column.model)})},
                model_force=model_force)
        if model_force is not None and "_arrays" in result:
            result["_arrays"]["column_force"] = model_force
        return result

    return run_scenario


def column_force_function(column: ColumnUnderTest, fast_rate: float) -> Callable:
    """``force(values, displacement)``: the restoring force [N] of the column model with
    the identified fields set to ``values`` (θ order), simulated from the virgin state
    along a displacement history [m] sampled at ``fast_rate`` [Hz] (velocity by finite
    differences) — the identified model's loop drawn over the measured one."""

    def force(values, displacement):
        model = column.model(column.with_estimate(np.asarray(values, dtype=float)))
        return model.force_history(np.asarray(displacement, dtype=float), dt=1.0 / fast_rate)

    return force


_REFERENCE_RUNNERS: dict = {}

#: XLA options of the reference's compilation: LLVM's optimisation level 0. The
#: reference runs once per process (≈ 15 ms instead of 11), while its compilation sat
#: beside the loop's on a first run (2.4–3.1 s of CPU at the default level, 1.6 s at 0).
#: Its numbers move by rounding only (floor displacements by ≤ 5e-16 of their amplitude,
#: the J4 errors against it by ≤ 4e-14 relative: tests/scenarios/test_frame_case.py);
#: the loop itself keeps XLA's defaults (any other level changes its bits).
REFERENCE_COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}


def _reference_runner(key, run, args):
    """The reference run compiled once per configuration (and kept between processes
    with :mod:`rths_ident.exported_programs`), with :data:`REFERENCE_COMPILER_OPTIONS`."""
    if key not in _REFERENCE_RUNNERS:
        _REFERENCE_RUNNERS[key] = exported_programs.compile_program(
            "frame-reference", exported_programs.package_key(key), run, args, digest_arrays=(args[1],),
            compiler_options=REFERENCE_COMPILER_OPTIONS)
    return _REFERENCE_RUNNERS[key]


def structure_fields(floor_mass_doc: str, floor_mass_optional: bool) -> list[Field]:
    """``[structure]``: seed 001's shear frame — floors, storeys of columns, the tested
    column, Rayleigh damping."""
    return [
        Field("structure.floor_mass", "floor_mass", floor_mass_doc, unit="kg", low=1e-9, optional=floor_mass_optional,
              option="--floor-mass"),
        Field("structure.storeys", "storeys", "storeys (floors)", kind=int, low=2),
        Field("structure.columns_per_storey", "columns_per_storey", "columns per storey (one first-storey column is "
              "tested, the others stay numerical)", kind=int, low=2),
        Field("structure.tested_column", "tested_column", "which first-storey column is tested (Python index; -1: "
              "the right-most)", kind=int),
        Field("structure.rayleigh_zeta", "rayleigh_zeta", "Rayleigh damping ratio on modes 1–2 (the frame's C stays "
              "whole in the numerical substructure)", low=0.0, high=0.999999),
    ]
