"""Scenario ``bw-frame``: seed 001's frame with degrading Bouc–Wen columns and UKF updating.

The structure: seed 001's 3-storey, 2-bay shear frame (§3.2, three columns per storey),
every column a :class:`~rths_ident.models.DegradingBoucWen` element with the seed 000
Case 4 preset (Wang/Mostaghel degrading Bouc–Wen, α_sv = 0.5, N = 1.5, η₁ = 0.25,
stiffness and strength degradation; digest 000 §12.3 [REPO] values), 5 % Rayleigh
damping on modes 1–2 on top of the columns' own c_e.

Scaling (the choice, and why). The Case 4 preset is a small-scale specimen (k_e = 2.9
kip/in = 5.08e5 N/m, x_y = 0.2 in = 5.08 mm). Here it is resized by *force similitude*
to a W4×13-like column of seed 001 (Table 2.1: k = 1.34e6 N/m): every force scales by
s = 1.34e6 / 5.08e5 = 2.64 while lengths and time are unchanged, i.e. k_e, f_y0, k_h,
c_e and m_e × s, and the degradation rates (per joule of dissipated energy) ÷ s. The
dimensionless groups of the model (α_sv, N, η, a·f_y0·x_y, b·f_y0·x_y, k_h x_y²/k_e)
are those of the preset, so the hysteresis loops have the preset's shape and degrade at
the preset's pace per cycle at the same ductility. Floor masses are seed 001 Chapter
3's 5000 kg: the frame's periods are then 0.50 / 0.18 / 0.12 s, realistic for a low-rise
steel frame (the 64 t of Table 4.1 would give T₁ = 1.8 s with these columns), and the
full El Centro record drives the first-storey columns to ≈ 6 × x_y (31 mm drift) and
dissipates H ≈ 700 J per column (a·H ≈ 0.5: the hysteretic branch loses ~75 % of its
stiffness and f_y drops by a third), so both degradation rates are exercised.

* **Reference:** the whole frame with the true columns, α-OS at the slow step (as the NS).
* **Physical substructure:** the right-most first-storey column (true parameters, one
  backward-Euler sub-step at the fast rate) behind a Carrion–Spencer actuator scaled
  with :meth:`CarrionSpencerParams.scaled_for` to the column's force at a design drift,
  with sensor noise (thesis noise powers).
* **Numerical substructure:** the other eight columns, same model, wrong initial values
  of the four identified parameters (default −30 % each); the shape constants (α_sv, N,
  η₁, η₂, k_h, c_e) are known (the same section and steel).
* **Online model updating:** the joint state–parameter UKF (its ``degrading-bouc-wen``
  preset: state [r, H, k_e, f_y0, a, b], driven by the measured displacement, measuring
  the force) runs inside the
  fast loop at ``identifier_rate`` (≥ 500 Hz; default 1 kHz); the hook pushes
  [k̂_e, f̂_y0, â, b̂] into the eight numerical columns every slow step, and the α-OS
  splitting stiffness of the interface follows k̂_e.

The loop, the sensors, the compensation and the rate transition are the shared
:mod:`rths_ident.scenarios.frame_case` of ``lugre-frame`` (same modelling choices: the load cell
reads the specimen's restoring force, velocity from a velocity transducer). Updating
modes: ``ukf`` (identify and update), ``none`` (keep the wrong model), ``oracle`` (true
parameters from the start). The three share one compiled loop: the identifier always
runs; they differ in the NS's initial parameters and the hook's freeze time.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.loop.model_updating import UpdateGuards
from rths_ident.declaration import Field
from rths_ident.scenarios import fields, frame_case
from rths_ident.scenarios.kinds import kind_names
from rths_ident.structures.integrators import native_integrator_names
from rths_ident.hybrid.loop.assembled import HybridTest
from rths_ident.scenarios.frame_case import ColumnUnderTest
from rths_ident.protocols import OnlineIdentifier
from rths_ident.models import DegradingBoucWen, DegradingBoucWenParams

SCENARIO = "bw-frame"
COLUMN_MODELS = ("degrading-boucwen", "boucwen")
#: the standard Bouc–Wen column of ``column_model="boucwen"`` (OpenSees ``BoucWen``'s twin):
#: α, A, β [1/m], γ [1/m], n — z_u = A/(β+γ) = 1 cm
BOUC_WEN_SHAPE = {"alpha": 0.1, "A": 1.0, "beta": 60.0, "gamma": 40.0, "n": 1.0}
BOUC_WEN_FIELDS = ("k", "alpha", "beta", "gamma")
UPDATING_MODES = ("ukf", "none", "oracle")
#: the parameters the UKF identifies (and the hook pushes into the NS), SI units
PARAM_NAMES = ("k_e", "f_y0", "stiffness_degradation", "strength_degradation")
PARAM_UNITS = {"k_e": "N/m", "f_y0": "N", "stiffness_degradation": "1/J", "strength_degradation": "1/J"}


@dataclasses.dataclass(frozen=True)
class BWFrameConfig(frame_case.FrameTestConfig):
    """Configuration of a ``bw-frame`` run (SI units; module doc for the defaults); the
    shared fields are those of :class:`~rths_ident.scenarios.frame_case.FrameTestConfig`."""

    SCENARIO: ClassVar[str] = SCENARIO
    UPDATING_MODES: ClassVar[tuple] = UPDATING_MODES
    IDENTIFYING_MODES: ClassVar[tuple] = ("ukf",)
    minimum_identifier_rate: ClassVar[float] = 500.0

    floor_mass: float = 5000.0  # kg per floor (seed 001 Ch. 3)
    updating: str = "ukf"
    initial_error: float = -0.30  # relative error of the NS's k_e, f_y0, a, b
    column_model: str = "degrading-boucwen"  # or "boucwen": standard Bouc–Wen, the twin of OpenSees BoucWen
    column_preset: str = "case4"  # DegradingBoucWen preset (seed 000 [REPO])
    column_stiffness: float = 1.34e6  # k_e [N/m] after force-similitude scaling (W4×13, seed 001 Table 2.1)
    column_substeps: int = 4  # backward-Euler sub-steps of the NS/reference columns per slow step
    design_drift: float = 0.05  # m: first-storey drift the actuator is sized for
    # s: the hook holds the initial model this long. The UKF settles k̂_e within 2 % in
    # 0.08 s of elastic response while f̂_y0, â, b̂ stay at the guess until the column
    # yields, so an early push changes only k_e; on 4 s of El Centro a 0.5 s hold left the
    # roof J4 at 1.44× the oracle's, 0.1 s at 1.01×.
    update_after: float = 0.1
    ukf_parameter_std: float = 0.5  # initial std of the identified parameters, relative to the guess
    ukf_force_std: float = 20.0  # N: the UKF's force-measurement std (noise + model error)

    def __post_init__(self):
        super().__post_init__()
        if self.column_model not in COLUMN_MODELS:
            self.bad("column_model", " | ".join(COLUMN_MODELS))
        if self.column_preset not in DegradingBoucWen.PRESET_NAMES:
            self.bad("column_preset", " | ".join(DegradingBoucWen.PRESET_NAMES))
        for name in ("column_stiffness", "design_drift", "ukf_parameter_std", "ukf_force_std"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                self.bad(name, "a finite positive number")
        if not (-0.9 <= self.initial_error <= 2.0):
            self.bad("initial_error", "a relative error in [-0.9, 2.0]")
        if not isinstance(self.column_substeps, int) or self.column_substeps < 1:
            self.bad("column_substeps", "an integer ≥ 1")


def scaled_column_params(preset: str, column_stiffness: float, substeps: int = 1):
    """The seed 000 ``preset`` resized by force similitude to initial stiffness
    ``column_stiffness`` [N/m] (module doc): forces × s, lengths and time unchanged,
    s = column_stiffness / k_e(preset). Returns :class:`DegradingBoucWenParams` (SI)."""
    base = DegradingBoucWen.preset_params(preset, units="SI", substeps=substeps)
    s = float(column_stiffness) / float(base.k_e)
    return dataclasses.replace(
        base,
        k_e=base.k_e * s,
        f_y0=base.f_y0 * s,
        k_h=base.k_h * s,
        c_e=base.c_e * s,
        m_e=base.m_e * s,
        stiffness_degradation=base.stiffness_degradation / s,  # per joule; energy scales with s
        strength_degradation=base.strength_degradation / s,
    )


def _with_identified(column, values):
    """``column`` with k_e, f_y0, a, b replaced by ``values`` (traceable, not validated)."""
    return dataclasses.replace(column, **dict(zip(PARAM_NAMES, values)))


def _ukf_identifier(cfg: BWFrameConfig, true_column, guess_values) -> OnlineIdentifier:
    """The joint UKF's ``degrading-bouc-wen`` preset (its P0, Q, R, weights and bounds)
    over the column's own :meth:`DegradingBoucWen.step` (two sub-steps per identifier
    sample): state [r, H, k_e, f_y0, a, b], driven by the measured displacement,
    measuring the force. Logs the identified dissipated energy H every slow step."""
    from rths_ident.estimators.joint_ukf_presets import joint_ukf_preset  # noqa: PLC0415

    guess = DegradingBoucWenParams(
        alpha_sv=float(true_column.alpha_sv), N=float(true_column.N), eta1=float(true_column.eta1),
        eta2=float(true_column.eta2), k_h=float(true_column.k_h), c_e=float(true_column.c_e),
        min_stiffness_ratio=float(true_column.min_stiffness_ratio),
        min_strength_ratio=float(true_column.min_strength_ratio), substeps=2,
        **{name: float(value) for name, value in zip(PARAM_NAMES, guess_values)},
    )
    return joint_ukf_preset("degrading-bouc-wen", guess, sample_interval=cfg.identifier_every / cfg.fast_rate,
                            parameter_std=cfg.ukf_parameter_std, force_std=cfg.ukf_force_std)


def identified_dissipated_energy(params, state) -> dict:
    """The joint UKF's dissipated energy H [J] (logged once per slow step)."""
    from rths_ident.estimators import joint_ukf_identifier as joint  # noqa: PLC0415

    return {"dissipated_energy": joint.model_state(params, state).dissipated_energy}


def bouc_wen_column_under_test(cfg: BWFrameConfig) -> ColumnUnderTest:
    """A standard Bouc–Wen column (:data:`BOUC_WEN_SHAPE`, k = ``column_stiffness``; one
    sub-step: the OpenSees ``BoucWen`` material to 7e-13), identified by the generic joint
    UKF over :class:`~rths_ident.models.BoucWen` (θ = k, α, β, γ), pushed into every
    numerical column — natively or into OpenSees ``BoucWen`` materials."""
    from rths_ident.estimators.joint_ukf_identifier import joint_ukf_online_identifier  # noqa: PLC0415
    from rths_ident.models import BoucWen, BoucWenParams  # noqa: PLC0415

    true_column = BoucWenParams(k=cfg.column_stiffness, substeps=1, **BOUC_WEN_SHAPE)
    true_values = np.array([float(getattr(true_column, n)) for n in BOUC_WEN_FIELDS])
    guess_values = (1.0 + cfg.initial_error) * true_values
    guess = dataclasses.replace(true_column, **dict(zip(BOUC_WEN_FIELDS, guess_values)))
    online = joint_ukf_online_identifier(BoucWen, guess, BOUC_WEN_FIELDS, force_noise_std=cfg.ukf_force_std,
                                         parameter_std=cfg.ukf_parameter_std)
    d = cfg.design_drift
    k, alpha = float(true_column.k), float(true_column.alpha)
    design_force = alpha * k * d + (1 - alpha) * k * float(true_column.A) / float(true_column.beta + true_column.gamma)
    actuator = act.CarrionSpencerParams.scaled_for(peak_force=design_force, peak_displacement=2.0 * d,
                                                   peak_velocity=1.0, specimen_mass=19.3,
                                                   substeps=cfg.actuator_substeps)
    guards = UpdateGuards(lower_bounds=0.4 * guess_values, upper_bounds=2.5 * guess_values,
                          freeze_until_s=cfg.update_after)
    return ColumnUnderTest(
        model=BoucWen, true_column=true_column, initial_column=guess, specimen=true_column,
        param_names=BOUC_WEN_FIELDS, identifier=online,
        with_estimate=lambda estimate: dataclasses.replace(
            guess, **{n: estimate[i] for i, n in enumerate(BOUC_WEN_FIELDS)}),
        interface_stiffness=lambda estimate: estimate[0], guards=guards, actuator=actuator,
    )


def column_under_test(cfg: BWFrameConfig) -> ColumnUnderTest:
    """The scaled Case 4 column, its UKF and the map θ̂ = [k̂_e, f̂_y0, â, b̂] → column
    (``column_model="boucwen"``: :func:`bouc_wen_column_under_test`)."""
    if cfg.column_model == "boucwen":
        return bouc_wen_column_under_test(cfg)
    true_column = scaled_column_params(cfg.column_preset, cfg.column_stiffness, cfg.column_substeps)
    true_values = np.array([float(getattr(true_column, n)) for n in PARAM_NAMES])
    guess_values = (1.0 + cfg.initial_error) * true_values
    guess = _with_identified(true_column, guess_values)
    specimen = dataclasses.replace(true_column, substeps=1)  # one sub-step per fast step (model doc)
    d = cfg.design_drift
    design_force = float(true_column.alpha_sv * true_column.k_e * d + true_column.f_y0 + true_column.k_h * d**3)
    actuator = act.CarrionSpencerParams.scaled_for(
        peak_force=design_force, peak_displacement=2.0 * d, peak_velocity=1.0,
        specimen_mass=float(true_column.m_e), substeps=cfg.actuator_substeps,
    )
    # physical plausibility relative to the initial guess (degradation rates may be ~0)
    guards = UpdateGuards(lower_bounds=np.array([0.4, 0.4, 0.0, 0.0]) * guess_values,
                          upper_bounds=np.array([2.5, 2.5, 5.0, 5.0]) * guess_values,
                          freeze_until_s=cfg.update_after)

    def extra_metrics(logs):
        return {"identified_dissipated_energy_J": float(np.asarray(logs["fast"]["identifier"]["dissipated_energy"])[-1])}

    return ColumnUnderTest(
        model=DegradingBoucWen, true_column=true_column, initial_column=guess, specimen=specimen,
        param_names=PARAM_NAMES, identifier=_ukf_identifier(cfg, true_column, guess_values),
        with_estimate=lambda estimate: _with_identified(true_column, [estimate[i] for i in range(4)]),
        interface_stiffness=lambda estimate: estimate[0], guards=guards, actuator=actuator,
        extra_metrics=extra_metrics, identifier_log=identified_dissipated_energy,
    )


#: the configuration class (what a remote NS server rebuilds from the wire)
CONFIG = BWFrameConfig


def opensees_substructure(cfg: BWFrameConfig, variant: str, ground_accel):
    """The OpenSeesPy frame as the NS for ``variant`` (``ground_accel`` at t_1 … t_N): in
    process for ``--ns opensees``, on the server for ``--ns opensees-tcp``."""
    return frame_case.opensees_frame_ns(cfg, column_under_test(cfg), variant, ground_accel)


def build(cfg: BWFrameConfig) -> HybridTest:
    """The ``bw-frame`` loop for ``cfg`` (see :func:`frame_case.build`)."""
    return frame_case.build(cfg, column_under_test(cfg))


#: run the configured variant and (``compare``) ``none`` and ``oracle``
run_scenario = frame_case.scenario_runner(build, column_under_test)


CONFIG = BWFrameConfig

#: the test-file fields of a ``bw-frame`` test (units per field; rths-ident new --from bw-frame)
FIELDS = [
    *fields.test_fields(kind_names), *fields.record_fields(), *fields.rate_fields(),
    *frame_case.structure_fields("floor mass (seed 001 Ch. 3)", False),
    *fields.substructure_fields(native_integrator_names()),
    Field("specimen.model", "column_model", "column model: degrading-boucwen (seed 000 Case 4, scaled) or boucwen "
          "(the twin of OpenSees BoucWen: what backend opensees needs)", kind=str, choices=COLUMN_MODELS,
          option="--column-model"),
    Field("specimen.preset", "column_preset", "degrading Bouc–Wen preset (seed 000 [REPO])", kind=str,
          choices=DegradingBoucWen.PRESET_NAMES),
    Field("specimen.stiffness", "column_stiffness", "initial stiffness k_e of each column after force-similitude "
          "scaling", unit="N/m", low=1e-9),
    Field("specimen.substeps", "column_substeps", "backward-Euler sub-steps of the numerical and reference columns "
          "per slow step", kind=int, low=1),
    Field("actuator.design_drift", "design_drift", "first-storey drift the actuator is sized for", unit="m",
          low=1e-9),
    Field("identifier.initial_error", "initial_error", "relative error of the numerical columns' k_e, f_y0, a, b",
          low=-0.9, high=2.0, option="--parameter-error"),
    Field("identifier.parameter_std", "ukf_parameter_std", "joint UKF: initial std of the identified parameters, "
          "relative to the guess", low=1e-9),
    Field("identifier.force_std", "ukf_force_std", "joint UKF: force-measurement std (noise + model error)",
          unit="N", low=1e-9),
    *fields.fast_side_fields(), *fields.updating_fields(UPDATING_MODES), *fields.interlock_fields(),
    *fields.run_fields(),
]


def config_from_values(values: dict) -> BWFrameConfig:
    """The configuration from a test file's checked values (by field target)."""
    return BWFrameConfig(**values)


def plot(result: dict, out_dir):
    """The figures of a run (:func:`rths_ident.runner.plots.plot_bw_frame`)."""
    from rths_ident.runner.plots import plot_bw_frame  # noqa: PLC0415 (matplotlib only when plotting)

    return plot_bw_frame(result, out_dir)
