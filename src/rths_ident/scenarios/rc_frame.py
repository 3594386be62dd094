"""Scenario ``rc-frame``: seed 000 Case 4, the 3-storey, 2-bay RC frame with a tested column.

The structure (digest 000 §11 Case 4, §12.2; :mod:`rths_ident.structures.rc_frame`): a
planar frame, column lines 42 ft apart, storeys of 36 ft, 5 ft × 5 ft RC columns and
8 ft × 5 ft beams, horizontal floor masses of (200/2)/386.4 kip·s²/in per node, 5 %
modal damping, gravity pre-load. The first-storey column of the third line is the
**tested column**: a degrading Bouc–Wen specimen (Wang/Mostaghel with cubic hardening,
presets ``linear``, ``case1`` … ``case4`` of the companion repository in SI,
:class:`~rths_ident.models.DegradingBoucWen`) behind a servo-hydraulic actuator; the
rest is the numerical substructure (NS), coupled at the horizontal DOF of the removed
column's top node (node 6 in the thesis).

Numerical substructure (``ns``):

* ``"native"``: the linear elastic frame condensed onto its 9 horizontal floor DOFs
  (JAX; :func:`~rths_ident.structures.rc_frame.rc_frame_structure`), α-OS (α = −0.1 as
  the thesis' α_OS = 0.9) or an explicit scheme; runs in both engines;
* ``"opensees"``: the frame built in OpenSeesPy in this process
  (:func:`~rths_ident.structures.rc_frame.build_rc_frame`), ``ns_model`` ``"linear"``
  (the thesis' elastic option) or ``"nonlinear"`` (fiber columns, Concrete02/Steel02),
  integrators AlphaOS, explicit Newmark or Newmark with a fixed number of iterations
  (:class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure`); the
  step-wise engine only;
* ``"opensees-tcp"``: the same OpenSeesPy frame in another process
  (``rths-ident serve ns``, started for the run unless ``ns_address`` = ``"HOST:PORT"``
  names a running one), over the framed protocol: the same numbers as ``"opensees"``
  (:mod:`rths_ident.scenarios.remote_ns`).

Damping: 5 % modal, as the thesis (``modalDamping``), or the source's stiffness-proportional
alternative (``damping="rayleigh"``). OpenSees' ``AlphaOS`` applies ``modalDamping`` with
the predictor velocity and without a tangent term (OpenSees' ``AlphaOS`` lacks the
``getVel``/``getCFactor`` overrides its newer explicit α-schemes have; tests/structures/
test_rc_frame_modal_damping.py pins it): with modal damping the OpenSees and native
frames therefore differ by ~13 % of the peak over 3 s at Δt_n = 0.02 s, while with
Rayleigh damping they agree to rounding. The native frame is the α-method proper.

Record: El Centro 1940 NS × 1.5 (the thesis' scale, §12.2), 50 Hz slow / 4000 Hz fast
(ratio 80), DDMRT (fixed Wiener weights trained on the NS alone with the specimen's
initial stiffness) and dAMB by default, sensor noise at the thesis' powers.

Reference (what J4 compares with): the **ideal partitioned test** — the same NS coupled
to the specimen model directly at the slow rate (:class:`~rths_ident.hybrid.fast_side.direct_site.DirectSite`):
no actuator, no delay, no noise, no rate transition. J4 then measures what the physical
loop adds, as in the thesis, where the reference is the same models without the
experimental loop.

Besides our J4, every run reports J4 as seed 000's ``Output.m`` computes it
(``J4_output_m``): the measured interface displacement x_m at the fast rate against the
reference's interface displacement (the ideal partitioned test, linearly interpolated to
the fast instants; the thesis reads a stored earlier run's 4 kHz target), the reference
advanced by |round(τ_FEI, 0.01 s)| (``metrics.delay_alignment_shift(…, "output_m")``),
and J4,force the same way on the interface force. ``J2_error_above_25Hz`` is the share of
the tracking error's energy (x_m − x_t) above 25 Hz.

Actuator (``actuator``): ``"scaled"`` (default) is Table 2.1's Carrion–Spencer actuator
resized for the specimen by hydraulic similitude
(:meth:`~rths_ident.hybrid.fast_side.actuator.CarrionSpencerParams.scaled_for`); ``"thesis"`` is
Table 2.1 as the thesis' Simulink model computes it: its numbers in kip–inch units
(pressures in ksi where the table says psi: β_e = 95958 ksi, K'_c and C_l per ksi;
V_t = 48.66 in³ as [REPO]), the moving mass the specimen's m_e, no damping but the
specimen's own c_e (digest 000 §12.3), limits wide open.

Model updating: the NS shares no element with the specimen (RC columns vs a Bouc–Wen
specimen), so there is nothing to update: the scenario runs the ``none`` variant only,
with no online identifier (seed 000 Case 4 has none either).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

import jax.numpy as jnp
import numpy as np

from rths_ident import metrics
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side.direct_site import DirectSite
from rths_ident.hybrid.loop.engine import run_stepwise
from rths_ident.hybrid.loop.assembled import HybridTest, NativeNS
from rths_ident.hybrid.loop.model_updating import UpdateGuards
from rths_ident.runner.options import RunOptions
from rths_ident.runner.results import run_scenario as run_hybrid_test
from rths_ident.declaration import Field
from rths_ident.scenarios import components, fields, remote_ns
from rths_ident.scenarios.kinds import kind_names
from rths_ident.scenarios.components import NATIVE_INTEGRATORS
from rths_ident.scenarios.config import HybridTestConfig
from rths_ident.estimators.registry import no_identifier
from rths_ident.models import DegradingBoucWen
from rths_ident.structures.numerical_substructure import NS_BACKENDS, NativeSubstructure, native_ns_step
from rths_ident.structures.integrators import INTEGRATORS
from rths_ident.structures.rc_frame import rc_frame_structure
from rths_ident.structures.structure import with_changes

SCENARIO = "rc-frame"
ACTUATORS = ("scaled", "thesis")
#: the tracking error's energy above this frequency is reported (``J2_error_above_25Hz``)
HIGH_FREQUENCY_HZ = 25.0
NS_MODELS = ("linear", "nonlinear")
FLOORS = ("floor1", "floor2", "floor3")


@dataclasses.dataclass(frozen=True)
class RCFrameConfig(HybridTestConfig):
    """Configuration of an ``rc-frame`` run (SI units; module doc for the defaults)."""

    SCENARIO: ClassVar[str] = SCENARIO
    UPDATING_MODES: ClassVar[tuple] = ("none",)
    IDENTIFYING_MODES: ClassVar[tuple] = ()

    record_scale: float = 1.5  # El Centro × 1.5 (digest 000 §12.2)
    updating: str = "none"
    transition: str = "auto"  # DDMRT at 50/4000 Hz (the thesis), the predictor–corrector below a rate ratio of 8
    case: str = "case4"  # specimen preset: linear | case1 … case4
    ns: str = "native"
    ns_model: str = "linear"  # OpenSees NS: the thesis' elastic option or the fiber-section frame
    integrator: str = "alpha-os"
    damping: str = "modal"  # 5 % modal (the thesis), or "rayleigh": the source's stiffness-proportional 2ζ/ω₁ K
    newmark_iterations: int = 3  # Newton iterations per step of newmark-fixed-iter (seed 000 §4.7.4)
    design_drift: float = 0.10  # m: interface drift the actuator is sized for (stroke ±2×)
    actuator: str = "scaled"  # scaled (Table 2.1 resized for the specimen) | thesis (Table 2.1 in kip–inch)
    ns_address: str | None = None  # "HOST:PORT" of a running `rths-ident serve ns` (opensees-tcp); None: start one

    def __post_init__(self):
        super().__post_init__()
        if self.case not in DegradingBoucWen.PRESET_NAMES:
            self.bad("case", " | ".join(DegradingBoucWen.PRESET_NAMES))
        if self.ns not in NS_BACKENDS:
            self.bad("ns", NS_BACKENDS.choices())
        if self.ns_model not in NS_MODELS:
            self.bad("ns_model", " | ".join(NS_MODELS))
        if self.damping not in ("modal", "rayleigh"):
            self.bad("damping", "modal | rayleigh")
        if self.integrator not in INTEGRATORS:
            self.bad("integrator", INTEGRATORS.choices())
        if self.actuator not in ACTUATORS:
            self.bad("actuator", " | ".join(ACTUATORS))
        if self.ns == "native" and self.integrator not in NATIVE_INTEGRATORS:
            self.bad("integrator", "alpha-os | newmark-explicit | central-difference with the native NS "
                     "(Newmark with fixed iterations has no predictor: use --ns opensees)")
        if NS_BACKENDS[self.ns].opensees and self.integrator in ("newmark-explicit", "central-difference"):
            self.bad("integrator", "alpha-os | newmark-fixed-iter with the OpenSees frame: explicit schemes need "
                     "mass at every DOF, and its rotations and verticals are massless (the native NS condenses them)")
        if self.ns == "native" and self.ns_model != "linear":
            self.bad("ns_model", "'linear' with the native NS (the nonlinear fiber frame needs --ns opensees)")
        remote_ns.check_ns_address(self)
        if not isinstance(self.newmark_iterations, int) or self.newmark_iterations < 1:
            self.bad("newmark_iterations", "an integer ≥ 1")
        if not (np.isfinite(self.design_drift) and self.design_drift > 0):
            self.bad("design_drift", "a positive drift in m")

    def program_key(self):
        """The loop's program does not depend on where the OpenSees NS runs."""
        return dataclasses.replace(super().program_key(), ns_address=None,
                                   ns="opensees" if self.ns == "opensees-tcp" else self.ns)


#: the configuration class (what a remote NS server rebuilds from the wire)
CONFIG = RCFrameConfig


def specimen_params(cfg: RCFrameConfig):
    """The tested column: the ``case`` preset in SI, one sub-step per fast step."""
    return DegradingBoucWen.preset_params(cfg.case, units="SI", substeps=1)


def thesis_actuator(specimen, substeps: int) -> act.CarrionSpencerParams:
    """Table 2.1 as seed 000's Simulink model computes it (module doc): its numbers in
    kip–inch–second units, so that a pressure is in ksi where the table says psi."""
    ksi = 1000.0 * act.PSI
    wide = 1e3  # limits wide open [m, m/s, N × 1e3]: the thesis' model has none
    return act.CarrionSpencerParams.table_2_1(
        bulk_modulus=95958.0 * ksi, valve_flow_pressure_gain=1.36e-5 * act.CUBIC_INCH / ksi,
        leakage_coefficient=5.89e-6 * act.CUBIC_INCH / ksi, fluid_volume=48.66 * act.CUBIC_INCH,
        moving_mass=float(specimen.m_e), payload_damping=0.0, stroke_limit=wide, velocity_limit=wide,
        force_limit=wide * 1e3 * act.KIP, substeps=substeps)


def _actuator(cfg: RCFrameConfig, specimen):
    if cfg.actuator == "thesis":
        return thesis_actuator(specimen, cfg.actuator_substeps)
    d = cfg.design_drift
    design_force = float(specimen.alpha_sv * specimen.k_e * d + specimen.f_y0 + specimen.k_h * d**3)
    return act.CarrionSpencerParams.scaled_for(peak_force=design_force, peak_displacement=2.0 * d, peak_velocity=1.5,
                                               specimen_mass=float(specimen.m_e), substeps=cfg.actuator_substeps)


def _native(cfg: RCFrameConfig, specimen) -> NativeNS:
    frame = rc_frame_structure(damping=cfg.damping)
    integrator = NATIVE_INTEGRATORS[cfg.integrator](frame.structure)
    n = frame.structure.n_dof
    i = frame.interface_dof
    # α-OS splitting stiffness K^l: the specimen's initial stiffness at the interface
    k_interface = jnp.zeros((n, n)).at[i, i].set(float(specimen.k_e))
    params = with_changes(frame.params, interface_stiffness=k_interface)
    floors = jnp.asarray(frame.floor_dofs)
    step = native_ns_step(integrator, (i,), response=lambda out: {"displacement": out.displacement[floors],
                                                                   "velocity": out.velocity[floors]})
    return NativeNS(integrator, params, params, (i,), step, lambda p, theta: p)


def opensees_substructure(cfg: RCFrameConfig, variant: str, ground_accel_with_zero):
    """The OpenSeesPy frame as the NS (``variant`` is always ``none`` here: nothing is
    updated); ``ground_accel_with_zero`` starts at t = 0. In process for ``--ns
    opensees``, and on the server for ``--ns opensees-tcp``."""
    from rths_ident.structures.opensees_substructure import OpenSeesSubstructure  # noqa: PLC0415
    from rths_ident.structures.rc_frame import INTERFACE_NODE, build_rc_frame  # noqa: PLC0415

    build = functools.partial(build_rc_frame, nonlinear=cfg.ns_model == "nonlinear", damping=cfg.damping)
    floors = ((4, 1), (7, 1), (10, 1))  # the left column line's floor nodes (build_rc_frame's floor_response_dofs)
    return OpenSeesSubstructure(build, (INTERFACE_NODE, 1), 1.0 / cfg.slow_rate, ground_accel=ground_accel_with_zero,
                                integrator=cfg.integrator, iterations=cfg.newmark_iterations, response=floors)


def _substructure_factory(cfg: RCFrameConfig, native: NativeNS | None, ground_accel):
    """``make_ns(variant)``: a fresh NS at the start of the test (the only variant is ``none``)."""
    dt_slow = 1.0 / cfg.slow_rate
    record = np.concatenate([[0.0], ground_accel])  # the OpenSees Path series starts at t = 0

    def make_ns(variant: str = "none"):
        if native is not None:
            return NativeSubstructure(native.integrator, native.params, native.interface_dofs, dt_slow,
                                      apply_estimate=native.apply_estimate, ns_step=native.ns_step)
        if cfg.ns == remote_ns.REMOTE:
            return remote_ns.remote_substructure(cfg, variant, record)
        return opensees_substructure(cfg, variant, record)

    return make_ns


def _run_direct(cfg: RCFrameConfig, make_ns, ground_accel, specimen_params) -> dict:
    """The NS coupled to the specimen model directly at the slow rate (NS closed after):
    a computation, not a test (nothing to bring to rest; Ctrl-C stops it as it is)."""
    ns = make_ns()
    try:
        return run_stepwise(DirectSite(DegradingBoucWen, specimen_params, 1.0 / cfg.slow_rate), ns, ground_accel,
                            safe_stop=None)
    finally:
        ns.close()


@functools.lru_cache(maxsize=4)
def ideal_test_logs(cfg: RCFrameConfig) -> dict:
    """The step-wise logs of the ideal partitioned test of ``cfg`` (J4's reference: the NS
    coupled to the specimen model directly at the slow rate), run once per configuration;
    ``["fast"]["target"]`` is the interface displacement at t_1 … t_N [m],
    ``["fast"]["force"]`` the specimen's force [N]. Treat as read-only."""
    _, ground_accel = components.slow_record(cfg)
    specimen = specimen_params(cfg)
    native = _native(cfg, specimen) if cfg.ns == "native" else None
    return _run_direct(cfg, _substructure_factory(cfg, native, ground_accel), ground_accel, specimen)


def build(cfg: RCFrameConfig) -> HybridTest:
    """The ``rc-frame`` hybrid test for ``cfg``."""
    time_slow, ground_accel = components.slow_record(cfg)
    specimen = specimen_params(cfg)
    native = _native(cfg, specimen) if cfg.ns == "native" else None
    make_ns = _substructure_factory(cfg, native, ground_accel)

    def realisation():
        """DDMRT's training signal: the NS under the record with the specimen as a
        linear spring of its initial stiffness (the ideal partitioned test with the
        ``linear`` preset)."""
        linear = dataclasses.replace(DegradingBoucWen.preset_params("linear", units="SI"), k_e=specimen.k_e)
        logs = _run_direct(cfg, make_ns, ground_accel, linear)
        return np.asarray(logs["fast"]["target"])[:, 0]

    actuator = _actuator(cfg, specimen)
    side = components.fast_side(cfg, specimen_model=DegradingBoucWen, specimen=specimen,
                                actuator=actuator, identifier=no_identifier(),
                                realisation=realisation)

    def reference():
        """The ideal partitioned test: floors (N, 3) [m] and the interface force (N,) [N]."""
        logs = ideal_test_logs(cfg)
        return np.asarray(logs["ns"]["displacement"]), np.asarray(logs["fast"]["force"])[:, 0]

    def extra_metrics(logs):
        reference_logs = ideal_test_logs(cfg)
        return thesis_convention_metrics(logs, np.asarray(reference_logs["fast"]["target"])[:, 0],
                                         np.asarray(reference_logs["fast"]["force"])[:, 0], time_slow, cfg.fast_rate)

    guards = UpdateGuards(lower_bounds=np.zeros(0), upper_bounds=np.zeros(0), freeze_until_s=np.inf)
    return HybridTest(
        key=cfg.program_key(), name=SCENARIO, time_slow=time_slow, ground_accel=ground_accel, slow_rate=cfg.slow_rate,
        fast_side=side, native_ns=native, make_ns=make_ns, guards=guards, param_names=(), true_values=np.zeros(0),
        initial_values=np.zeros(0), reference=reference, seed=cfg.seed, response_names=FLOORS,
        extra_metrics=extra_metrics,
        interlocks=components.interlocks(cfg, actuator),
    )


def thesis_convention_metrics(logs: dict, reference_displacement, reference_force, time_slow, fast_rate: float) -> dict:
    """J4 on displacement and force as seed 000's ``Output.m`` computes them (module doc)
    and the share of the tracking error's energy above :data:`HIGH_FREQUENCY_HZ`.

    ``reference_displacement``/``reference_force``: the ideal test's interface values at
    ``time_slow`` (t_1 … t_N); the fast sample i ends at (i + 1)/``fast_rate``."""
    measured = np.asarray(logs["fast"]["measured"]).ravel()
    target = np.asarray(logs["fast"]["target"]).ravel()
    force = np.asarray(logs["fast"]["force"]).ravel()
    time_fast = np.arange(1, measured.size + 1) / fast_rate
    knots = np.concatenate([[0.0], np.asarray(time_slow, dtype=float)])

    def on_fast_grid(values):
        return np.interp(time_fast, knots, np.concatenate([[0.0], np.asarray(values, dtype=float)]))

    indices = metrics.thesis_indices(target, measured, fast_rate, reference=on_fast_grid(reference_displacement),
                                     restoring_force=force, reference_restoring_force=on_fast_grid(reference_force),
                                     alignment="output_m")
    error_spectrum = np.abs(np.fft.rfft(measured - target)) ** 2
    frequencies = np.fft.rfftfreq(measured.size, 1.0 / fast_rate)
    return {
        "J4_output_m": {"disp_percent": float(indices["J4_disp"]), "force_percent": float(indices["J4_force"]),
                        "shift_samples": int(indices["alignment_shift"])},
        "J2_error_above_25Hz": float(error_spectrum[frequencies > HIGH_FREQUENCY_HZ].sum() / error_spectrum.sum()),
    }


def describe(cfg: RCFrameConfig) -> dict:
    """The scenario-specific keys of the result."""
    return {"case": cfg.case, "ns": cfg.ns, "ns_model": cfg.ns_model, "integrator": cfg.integrator,
            "record_scale": cfg.record_scale, "actuator": cfg.actuator}


def run_scenario(cfg: RCFrameConfig, options: RunOptions = RunOptions()) -> dict:
    """Run the test (an OpenSees NS needs the step-wise engine; so does ``realtime``;
    :func:`rths_ident.runner.results.run_scenario`); ``opensees-tcp`` without an address
    starts its server for the run and stops it after, also on error."""
    if options.engine == "fused" and cfg.ns != "native":
        raise ParameterError(f"rc-frame --ns {cfg.ns} runs in the step-wise engine only (use --engine stepwise)")
    with remote_ns.ns_server_for(cfg) as served:
        return run_hybrid_test(served, build, options, describe=lambda test: describe(served))


CONFIG = RCFrameConfig

#: the test-file fields of an ``rc-frame`` test (units per field; rths-ident new --from rc-frame)
FIELDS = [
    *fields.test_fields(kind_names), *fields.record_fields(), *fields.rate_fields(),
    *fields.substructure_fields(),
    Field("substructure.model", "ns_model", "the OpenSees frame: linear (the thesis' elastic option) or nonlinear "
          "(fiber columns, Concrete02/Steel02)", kind=str, choices=NS_MODELS, option="--ns-model"),
    Field("substructure.damping", "damping", "5 % modal (the thesis) or rayleigh (stiffness-proportional)", kind=str,
          choices=("modal", "rayleigh"), option="--damping"),
    Field("substructure.newmark_iterations", "newmark_iterations", "Newton iterations per step of "
          "newmark-fixed-iter (seed 000 §4.7.4)", kind=int, low=1),
    Field("specimen.case", "case", "the tested column's degrading Bouc–Wen preset", kind=str,
          choices=DegradingBoucWen.PRESET_NAMES, option="--case"),
    Field("actuator.design_drift", "design_drift", "interface drift the actuator is sized for (stroke ±2×)",
          unit="m", low=1e-9),
    Field("actuator.kind", "actuator", "the Carrion–Spencer actuator resized for the specimen (scaled), or seed "
          "000's Table 2.1 as its Simulink model computes it, in kip–inch units (thesis)", kind=str,
          choices=ACTUATORS, option="--actuator"),
    *fields.fast_side_fields(), *fields.updating_fields(("none",)), *fields.interlock_fields(),
    *fields.run_fields(),
]


def config_from_values(values: dict) -> RCFrameConfig:
    """The configuration from a test file's checked values (by field target)."""
    return RCFrameConfig(**values)


def plot(result: dict, out_dir):
    """The figures of a run (:func:`rths_ident.runner.plots.plot_rc_frame`)."""
    from rths_ident.runner.plots import plot_rc_frame  # noqa: PLC0415 (matplotlib only when plotting)

    return plot_rc_frame(result, out_dir)
