"""Test kind ``shear-frame``: your own frame, declared in a test file.

The structure (``[structure]``), one of three sources:

* a shear frame of ``storeys`` floors of ``floor_mass`` with ``columns_per_storey``
  identical columns per storey, every column a model of :mod:`rths_ident.models` (any
  registered model: ``specimen.model`` and its parameters, each with its unit, in
  ``[specimen]``); one first-storey column is the specimen, the other columns the
  numerical copies of its model;
* ``matrices``: a folder of M, K, C (CSV, SI) with the ``interface_dof`` where the
  specimen acts and the ``updated_elements``, numerical copies of the specimen's model
  between DOF pairs (:mod:`rths_ident.scenarios.structure_files`);
* ``opensees_model``: an OpenSeesPy model file (``build(ops)``, ``INTERFACE``,
  ``PARAMETER_MAP`` of OpenSees element tags and parameter names), run by the
  ``opensees`` or ``opensees-tcp`` backend (:mod:`rths_ident.scenarios.structure_files`).

The specimen is tested behind the physical side; the numerical copies of its model
start from a wrong guess (``identifier.initial_error`` on the identified fields) and are
updated with what a joint UKF identifies on the specimen (``identifier.fields``), or
stay as they are (``identifier.kind = "none"``).

The physical side (``specimen.site``):

* ``virtual`` — the virtual fast side: rate transition, compensation, the
  servo-hydraulic actuator (sized for ``actuator.peak_force``, ``actuator.stroke``,
  ``actuator.peak_velocity``), the specimen model, sensors; the identifier at the
  identifier rate;
* ``openfresco:HOST:PORT``, ``adapter:HOST:PORT`` — an element server in another
  process over the OpenFresco protocol (an OpenFresco site server or ``rths-ident serve
  site``; an OpenSees ``adapter`` element, whose OpenSees model is the specimen), read
  once per slow step, the identifier on its readings;
* ``emulator``, ``emulator:timed``, ``serial:PORT``, ``direct`` — seed 002's servo rig
  (:mod:`rths_ident.rigs`): the emulated board with the declared specimen model behind
  it, a real board on a serial port, or the specimen's force computed exactly; read
  once per slow step, the identifier on its readings (:mod:`rths_ident.rigs.loop_site`),
  the rig's stroke and force limits (``[rig]``) and safe stop. A rig test runs on the
  step-wise engine; its comparison runs (no updating, oracle) stay virtual.

Going from the virtual test to the rig is the site line; nothing else changes: the
structure, the record, the identifier, the hook and its guards, the reference (the
monolithic frame with the true columns; for an OpenSees model file the ideal
partitioned test), the metrics and the record's layout.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from rths_ident.declaration import Field
from rths_ident.errors import ParameterError
from rths_ident.estimators.registry import IDENTIFIERS
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.loop.model_updating import UpdateGuards
from rths_ident.models import ElementInputs
from rths_ident.models.registry import MODELS
from rths_ident.rigs.site_spec import SITES, parse_site, site_field
from rths_ident.runner.options import RunOptions
from rths_ident.scenarios import fields, frame_case
from rths_ident.scenarios.frame_case import ColumnUnderTest, FrameTestConfig
from rths_ident.scenarios.kinds import kind_names
from rths_ident.structures.integrators import native_integrator_names

SCENARIO = "shear-frame"
UPDATING_MODES = ("ukf", "none", "oracle")
#: the model and parameters a new shear-frame test starts from: a bench-scale bilinear
#: column (seed 002's rig: 10 mm stroke, 16.7 N) — k [N/m], f_y [N], b [-]
DEFAULT_MODEL = "bilinear"
DEFAULT_PARAMS = (("k", 1540.0), ("fy", 8.0), ("b", 0.05))
#: RLS memory [s]: the forgetting factor per sample is 1 − 1/(memory · identifier rate)
RLS_MEMORY_S = 10.0


@dataclasses.dataclass(frozen=True)
class ShearFrameConfig(FrameTestConfig):
    """A ``shear-frame`` test (SI units; module doc). ``column_params``: the columns'
    parameters as (field, value) pairs (the model's Params fields; the rest at their
    defaults)."""

    SCENARIO: ClassVar[str] = SCENARIO
    UPDATING_MODES: ClassVar[tuple] = UPDATING_MODES
    IDENTIFYING_MODES: ClassVar[tuple] = ("ukf",)

    floor_mass: float = 20.0  # kg per floor
    storeys: int = 2
    columns_per_storey: int = 3  # 2 bays
    column_model: str = DEFAULT_MODEL
    column_params: tuple = DEFAULT_PARAMS
    site: str = "virtual"
    identifier: str = "ukf"
    identified: tuple = ("k", "fy")
    initial_error: float = -0.3
    ukf_parameter_std: float = 0.5
    ukf_force_std: float = 0.1  # N: the load cell's noise (0.1 N rms at the thesis' powers) + model error
    updating: str = "ukf"
    update_after: float = 0.5
    max_relative_std: float = np.inf  # the hook's guard: every identified field this sure first
    peak_force: float = 30.0  # N: the actuator's design force
    stroke: float = 0.02  # m: the actuator's design stroke (its limit is 1.5×)
    peak_velocity: float = 0.5  # m/s
    rig_stroke_limit: float = 0.010  # m (seed 002's rig)
    rig_force_limit: float = 16.67  # N (seed 002's rig)
    rig_mode: str = "pseudo-dynamic"
    record_scale: float = 0.2  # El Centro × 0.2: the bench-scale specimen yields (peak drift ≈ 7 mm)
    matrices: str | None = None  # a folder of M.csv, K.csv, C.csv (structure_files)
    opensees_model: str | None = None  # an OpenSeesPy model file (structure_files)
    interface_dof: int = 1  # matrices: the DOF (from 1) where the specimen acts, against the ground
    updated_elements: tuple = ()  # matrices: ((i, j), …) copies of the specimen's model, DOFs from 1, 0 the ground

    def __post_init__(self):
        for name in ("column_params", "identified", "updated_elements"):  # lists (a file, the wire) -> tuples
            object.__setattr__(self, name, tuple(tuple(v) if isinstance(v, list) else v for v in getattr(self, name)))
        super().__post_init__()
        model = self.model  # an unknown model: the registry's error
        params = dict(self.column_params)
        names = [f.name for f in dataclasses.fields(model.Params) if f.init]
        unknown = [n for n in params if n not in names]
        if unknown:
            self.bad("column_params", f"fields of {self.column_model}: {', '.join(names)}")
        parse_site(self.site, allowed=lambda kind: True, where=f"{SCENARIO} site =")
        if self.identifier not in IDENTIFIERS:
            self.bad("identifier", IDENTIFIERS.choices())
        applies_to = IDENTIFIERS[self.identifier].models
        if applies_to is not None and self.column_model not in applies_to:
            self.bad("identifier", f"one that applies to {self.column_model} ({IDENTIFIERS[self.identifier].description} "
                     f"applies to {', '.join(applies_to)})")
        bad = [n for n in self.identified if n not in names]
        if bad or not self.identified:
            self.bad("identified", f"one or more fields of {self.column_model}: {', '.join(names)}")
        if not (-0.9 <= self.initial_error <= 2.0):
            self.bad("initial_error", "a relative error in [-0.9, 2.0]")
        for name in ("ukf_parameter_std", "ukf_force_std", "peak_force", "stroke", "peak_velocity",
                     "rig_stroke_limit", "rig_force_limit"):
            if not (np.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                self.bad(name, "a finite positive number")
        self.column()  # the model's own checks of the parameter values
        self._check_structure_source()

    def _check_structure_source(self):
        """A declared structure file: read and checked now (errors name the field and the file)."""
        from rths_ident.scenarios import structure_files  # noqa: PLC0415

        if self.matrices is not None and self.opensees_model is not None:
            raise ParameterError("structure.matrices and structure.opensees_model: expected one structure source")
        if self.matrices is not None:
            if self.ns != "native":
                raise ParameterError(f"structure.matrices with substructure.backend = {self.ns}: expected backend = "
                                     "native (the matrices are a native model; an OpenSees structure is declared "
                                     "with structure.opensees_model)")
            n = structure_files.matrices_of(self).n_dof
            if not (isinstance(self.interface_dof, int) and 1 <= self.interface_dof <= n):
                raise ParameterError(f"structure.interface_dof = {self.interface_dof}: expected a DOF in 1…{n} (the "
                                     f"matrices in {self.matrices} have {n})")
            structure_files.element_pairs(self.updated_elements, n)
            if self.identified and self.identifier != "none" and not self.updated_elements:
                raise ParameterError("structure.updated_elements = []: the identified fields update nothing; "
                                     "expected the DOF pairs of the numerical copies of the specimen's model (or "
                                     "identifier.kind = \"none\")")
        elif self.updated_elements:
            raise ParameterError("structure.updated_elements: only with structure.matrices")
        if self.opensees_model is not None:
            if self.ns not in ("opensees", "opensees-tcp"):
                raise ParameterError(f"structure.opensees_model with substructure.backend = {self.ns}: expected "
                                     "backend = opensees | opensees-tcp")
            model_file = structure_files.model_file_of(self)
            integrator = model_file.settings.get("integrator")
            if integrator is not None and integrator != self.integrator:
                raise ParameterError(f"structure.opensees_model = {self.opensees_model!r}: its INTEGRATOR = "
                                     f"{integrator!r} but substructure.integrator = {self.integrator!r}: expected "
                                     "the same (or leave INTEGRATOR out of the file)")
            if self.identifier != "none":
                missing = [n for n in self.identified if n not in model_file.parameter_names]
                if missing:
                    raise ParameterError(
                        f"structure.opensees_model = {self.opensees_model!r}: PARAMETER_NAMES = "
                        f"{list(model_file.parameter_names)} has no entry for identifier.fields {missing}: expected "
                        "a PARAMETER_MAP entry (OpenSees element tags, parameter name) per identified field")

    @property
    def structure_source(self) -> str:
        """``"shear-frame"``, ``"matrices"`` or ``"opensees-model"``."""
        if self.matrices is not None:
            return "matrices"
        return "opensees-model" if self.opensees_model is not None else "shear-frame"

    def program_key(self):
        """With a structure file, the key holds the files' versions (an edited file is
        another test); being a tuple, its programs are traced in each process, never read
        back from the store (:func:`rths_ident.exported_programs.package_key`)."""
        from rths_ident.scenarios.structure_files import _stamp  # noqa: PLC0415

        key = super().program_key()
        path = self.matrices or self.opensees_model
        return key if path is None else (key, _stamp(path))

    @property
    def model(self) -> type:
        return MODELS[self.column_model].model

    def column(self):
        """The true column's Params."""
        return self.model.Params(**dict(self.column_params))

    @property
    def on_a_rig(self) -> bool:
        """Whether the physical side is not the virtual fast side (a rig, an element server)."""
        return self.site != "virtual"


def _model_fields(model_name: str) -> list[Field]:
    """``[specimen]`` fields of ``model_name``'s parameters, with their units and ranges."""
    model = MODELS[model_name].model
    defaults = dict(DEFAULT_PARAMS) if model_name == DEFAULT_MODEL else {}
    out = []
    for f in dataclasses.fields(model.Params):
        if not f.init or isinstance(f.default, (str, bool)):
            continue
        meta = f.metadata
        is_int = isinstance(f.default, int)
        unit = meta.get("unit", "")
        low, high = meta.get("low"), meta.get("high")
        out.append(Field(f"specimen.{f.name}", f"column:{f.name}", meta.get("doc") or f.name,
                         unit="" if unit in ("-", None) else unit, kind=int if is_int else float,
                         low=None if low is None or not np.isfinite(low) else low,
                         high=None if high is None or not np.isfinite(high) else high,
                         default=defaults.get(f.name, f.default)))
    return out


#: the structure sources: the field that declares one (None: the shear frame of storeys)
STRUCTURE_SOURCES = ("structure.matrices", "structure.opensees_model")


def structure_fields(source: str | None) -> list[Field]:
    """``[structure]`` of the declared source (``None``: the shear frame of storeys; the
    field paths of :data:`STRUCTURE_SOURCES`)."""
    if source == "structure.matrices":
        return [
            Field("structure.matrices", "matrices", "a folder of M.csv [kg], K.csv [N/m], C.csv [N·s/m]: n lines of "
                  "n comma-separated numbers, line i = DOF i (a displacement relative to the ground), symmetric, "
                  "the specimen not included", kind=str, optional=True, is_path=True),
            Field("structure.interface_dof", "interface_dof", "the DOF (from 1) where the specimen acts, against "
                  "the ground", kind=int, low=1),
            Field("structure.updated_elements", "updated_elements", "numerical copies of the specimen's model, "
                  "updated with what is identified: [i, j] per element, its deformation u_i − u_j (DOFs from 1, "
                  "j = 0 the ground)", kind=list, item=tuple),
        ]
    if source == "structure.opensees_model":
        return [
            Field("structure.opensees_model", "opensees_model", "an OpenSeesPy model file: build(ops) (SI), "
                  "INTERFACE = (node, dof) where the specimen acts against the ground, RESPONSE, PARAMETER_MAP of "
                  "ElementParameter (OpenSees element tags, parameter name) and PARAMETER_NAMES (the specimen "
                  "model's fields they update); backend opensees or opensees-tcp", kind=str, optional=True,
                  is_path=True),
        ]
    return frame_case.structure_fields("floor mass", False)


def fields_for(values: dict | None = None) -> list[Field]:
    """The test-file fields of a ``shear-frame`` test whose raw values (by ``"table.key"``)
    are ``values``: its model's parameters (``specimen.model``; default: the default
    model) and its structure source's fields (:data:`STRUCTURE_SOURCES`)."""
    values = values or {}
    model_name = values.get("specimen.model") or DEFAULT_MODEL
    source = next((path for path in STRUCTURE_SOURCES if values.get(path) is not None), None)
    return [
        *fields.test_fields(kind_names), *fields.record_fields(), *fields.rate_fields(),
        *structure_fields(source),
        *fields.substructure_fields(native_integrator_names()),
        site_field(option="--site"),
        Field("specimen.model", "column_model", "the columns' model (every column; one is tested)", kind=str,
              choices=MODELS, option="--model"),
        *_model_fields(model_name),
        Field("identifier.kind", "identifier", "ukf: a joint UKF over the model identifies the fields below on the "
              "specimen; rls: seed 001's constrained RLS (modified LuGre: sigma0, Fc, sigma3); none: nothing is "
              "identified", kind=str, choices=IDENTIFIERS),
        Field("identifier.fields", "identified", "the identified fields (pushed into every numerical column)",
              kind=list, item=str),
        Field("identifier.initial_error", "initial_error", "relative error of the numerical columns' identified "
              "fields at the start", low=-0.9, high=2.0, option="--initial-error"),
        Field("identifier.parameter_std", "ukf_parameter_std", "joint UKF: initial std of the identified fields, "
              "relative to the guess", low=1e-9),
        Field("identifier.force_std", "ukf_force_std", "joint UKF: force-measurement std (noise + model error)",
              unit="N", low=1e-12),
        Field("actuator.peak_force", "peak_force", "virtual site: the actuator's design force", unit="N", low=1e-9),
        Field("actuator.stroke", "stroke", "virtual site: the actuator's design stroke (limit 1.5×)", unit="m",
              low=1e-9),
        Field("actuator.peak_velocity", "peak_velocity", "virtual site: the actuator's design velocity", unit="m/s",
              low=1e-9),
        Field("rig.stroke_limit", "rig_stroke_limit", "rig sites: the rig's stroke", unit="m", low=1e-9),
        Field("rig.force_limit", "rig_force_limit", "rig sites: the rig's force", unit="N", low=1e-9),
        Field("rig.mode", "rig_mode", "rig sites: pseudo-dynamic (as slow as the rig needs) or real-time (paced to "
              "Δt_n; an overrun aborts)", kind=str, choices=("pseudo-dynamic", "real-time")),
        *fields.fast_side_fields(), *fields.updating_fields(UPDATING_MODES), *fields.interlock_fields(),
        Field("updating.max_relative_std", "max_relative_std", "the hook pushes θ̂ only once every identified "
              "field's relative std is below this (inf: no such guard)", low=1e-12),
        *fields.run_fields(),
    ]


#: the fields with the default model and the shear frame of storeys (rths-ident run shear-frame --help)
FIELDS = fields_for()
CONFIG = ShearFrameConfig


def config_from_values(values: dict) -> ShearFrameConfig:
    """The configuration from a test file's checked values: the model's parameters
    (targets ``column:<field>``) gathered into ``column_params``."""
    values = dict(values)
    model_name = values.get("column_model", DEFAULT_MODEL)
    params = dict(DEFAULT_PARAMS) if model_name == DEFAULT_MODEL else {}
    params.update((k[len("column:"):], v) for k, v in values.items() if k.startswith("column:"))
    values = {k: v for k, v in values.items() if not k.startswith("column:")}
    values["column_params"] = tuple(params.items())
    for name in ("identified", "updated_elements"):
        if name in values:
            values[name] = tuple(tuple(v) if isinstance(v, list) else v for v in values[name])
    return ShearFrameConfig(**values)


def _tangent_at_rest(model: type, params, dt: float):
    """dF/dx of ``params`` at rest [N/m] (traceable): the α-OS splitting stiffness."""
    return model.tangent(params, model.init(params), ElementInputs(0.0, 0.0), dt)


def column_under_test(cfg: ShearFrameConfig) -> ColumnUnderTest:
    """The declared column, its identifier and how θ̂ enters the numerical columns."""
    model, true_column = cfg.model, cfg.column()
    names = tuple(cfg.identified)
    true_values = np.array([float(getattr(true_column, n)) for n in names])
    guess = dataclasses.replace(true_column, **dict(zip(names, (1.0 + cfg.initial_error) * true_values)))
    guess_values = np.array([float(getattr(guess, n)) for n in names])
    options = {"ukf": {"force_noise_std": cfg.ukf_force_std, "parameter_std": cfg.ukf_parameter_std},
               "rls": {"forgetting": 1.0 - 1.0 / (RLS_MEMORY_S * cfg.fast_rate / cfg.identifier_every)}}
    identifier = IDENTIFIERS[cfg.identifier].build(model, guess, names, **options.get(cfg.identifier, {}))
    names = tuple(identifier.param_names)
    dt_fast = 1.0 / cfg.fast_rate

    def with_estimate(estimate):
        return dataclasses.replace(guess, **{n: estimate[i] for i, n in enumerate(names)})

    actuator = act.CarrionSpencerParams.scaled_for(peak_force=cfg.peak_force, peak_displacement=cfg.stroke,
                                                   peak_velocity=cfg.peak_velocity, substeps=cfg.actuator_substeps)
    guards = UpdateGuards(lower_bounds=0.25 * np.abs(guess_values[:len(names)]),
                          upper_bounds=4.0 * np.abs(guess_values[:len(names)]), freeze_until_s=cfg.update_after,
                          max_relative_std=cfg.max_relative_std)
    return ColumnUnderTest(
        model=model, true_column=true_column, initial_column=guess, specimen=true_column, param_names=names,
        identifier=identifier, with_estimate=with_estimate,
        interface_stiffness=lambda estimate: _tangent_at_rest(model, with_estimate(estimate), dt_fast),
        guards=guards, actuator=actuator,
        column_interface_stiffness=lambda column: _tangent_at_rest(model, column, dt_fast))


def build(cfg: ShearFrameConfig):
    """The test (:func:`rths_ident.scenarios.frame_case.build`, or
    :func:`rths_ident.scenarios.structure_files.build_opensees_model_test` for an
    OpenSees model file); on a rig, its physical side is the rig with the test's
    identifier beside it."""
    from rths_ident.scenarios import structure_files  # noqa: PLC0415

    column = column_under_test(cfg)
    if cfg.structure_source == "opensees-model":
        test = structure_files.build_opensees_model_test(cfg, column)
    elif cfg.structure_source == "matrices":
        test = frame_case.build(cfg, column, structure_files.matrix_partition(cfg, column))
    else:
        test = frame_case.build(cfg, column)
    if not cfg.on_a_rig:
        return test
    return test._replace(make_site=lambda: open_rig_site(cfg, column), site_samples_per_step=1)


def opensees_substructure(cfg: ShearFrameConfig, variant: str, ground_accel):
    """The OpenSees NS for ``variant`` (``ground_accel`` at t_1 … t_N): the model file's,
    or the shear frame's twin; in process for ``opensees``, on the server for
    ``opensees-tcp`` (:mod:`rths_ident.scenarios.remote_ns`)."""
    from rths_ident.scenarios import structure_files  # noqa: PLC0415

    column = column_under_test(cfg)
    if cfg.structure_source == "opensees-model":
        return structure_files.opensees_model_ns(cfg, column, variant, ground_accel)
    return frame_case.opensees_frame_ns(cfg, column, variant, ground_accel)


def check_before_run(cfg: ShearFrameConfig) -> None:
    """What the configuration alone cannot tell (``rths-ident check``): an OpenSees model
    file is built once, its parameters attached (an unknown element tag or parameter is
    named), and wiped."""
    if cfg.structure_source == "opensees-model":
        from rths_ident.scenarios import structure_files  # noqa: PLC0415

        structure_files.check_opensees_model(cfg, column_under_test(cfg))


def open_rig_site(cfg: ShearFrameConfig, column: ColumnUnderTest):
    """The rig of ``cfg.site`` with the declared specimen behind it (emulator, direct),
    as the loop's site (:class:`~rths_ident.rigs.loop_site.RigLoopSite`)."""
    import contextlib  # noqa: PLC0415

    from rths_ident.rigs.hardware_site import RigLimits  # noqa: PLC0415
    from rths_ident.rigs.loop_site import HystereticSpecimen, RigLoopSite  # noqa: PLC0415
    from rths_ident.rigs.site_spec import open_site  # noqa: PLC0415

    dt = 1.0 / cfg.slow_rate
    identifier = column.identifier if column.param_names else None
    name, address = parse_site(cfg.site, allowed=lambda kind: True)
    if SITES[name].dialect:
        from rths_ident.transport.openfresco_client import OpenFrescoClient  # noqa: PLC0415
        from rths_ident.transport.remote_site import RemoteElementSite  # noqa: PLC0415
        from rths_ident.tcp_ports import parse_address  # noqa: PLC0415

        host, port = parse_address(address)
        client = OpenFrescoClient.connect(host, port, 1, dialect=SITES[name].dialect, wait_for_server_s=10.0)
        return RigLoopSite(RemoteElementSite(client, dt), identifier, dt)
    stack = contextlib.ExitStack()
    specimen = HystereticSpecimen(column.model, column.specimen, test_dt=dt)
    hardware = stack.enter_context(open_site(cfg.site, dt, specimen=specimen, seed=cfg.seed, mode=cfg.rig_mode,
                                             limits=RigLimits(stroke=cfg.rig_stroke_limit, force=cfg.rig_force_limit)))
    return RigLoopSite(hardware, identifier, dt, on_close=stack.close)


def run_scenario(cfg: ShearFrameConfig, options: RunOptions = RunOptions()) -> dict:
    """Run the test (:func:`rths_ident.runner.results.run_scenario`); on a rig, step-wise."""
    if cfg.on_a_rig and options.engine != "stepwise":
        raise ParameterError(f"specimen.site = {cfg.site}: a rig runs on the step-wise engine (--engine stepwise)")
    check_before_run(cfg)  # a user's OpenSees model: an unknown element tag is named before any work
    result = {**_runner(cfg, options), "site": cfg.site, "structure": cfg.structure_source}
    if cfg.structure_source != "shear-frame":
        result.pop("floor_mass_kg", None)  # the declared floor mass builds nothing
    return result


_runner = frame_case.scenario_runner(build, column_under_test)


def plot(result: dict, out_dir):
    """The figures of a run (:func:`rths_ident.runner.plots.plot_frame_test`)."""
    from rths_ident.runner.plots import plot_frame_test  # noqa: PLC0415

    labels = {n: rf"$\hat{{{n}}}/{n}$" for n in result.get("params_true", {})}
    where = "first-storey column" if result.get("structure", "shear-frame") == "shear-frame" else "the specimen"
    return plot_frame_test(result, out_dir, labels, specimen=f"{where}, {result['specimen_model']}")
