"""Test kind ``sdof``: seed 003's SDOF hybrid test (§2.3, our partition), one specimen of
the population ``rths-ident calibrate amb|damb|polynomial`` tunes a compensator over.

* **Prototype:** m ẍ + c ẋ + k x = −m ẍ_g, with k = m (2π/T)² and c = 2 ζ m ω; its
  stiffness is split into a numerical (1 − α) k and a physical α k.
* **Numerical substructure:** m, c and (1 − α) k, explicit Newmark (γ = ½, β = 0) at
  Δt_n, sending the lab target x_t = λ x (:mod:`rths_ident.structures.scaled_sdof`).
* **Physical substructure:** a linear spring k_lab behind the Carrion–Spencer actuator
  (seed 000 Table 2.1, with control–structure interaction) or an ideal one, the sensors
  with the thesis' noise powers (or ideal); the prototype sees r = r_lab α k / (λ k_lab).
* **Fast side:** rate transition → compensator (its ``[compensation]`` gains) → actuator
  → spring → sensors, as every virtual test (:mod:`rths_ident.scenarios.components`).
* **Reference:** the same prototype with the whole k numerical (the same step with an
  ideal interface: r_lab = k_lab x_t), so J4 measures what the fast side adds.

No online identifier, no model updating (``updating.mode = none``). The shipped test
(``scenarios/shipped/sdof.toml``) runs the calibration's defaults: 6 s of El Centro,
4000/50 Hz, the predictor–corrector of the sources (continuity 0), noise seed 0, dAMB at
the sources' gains. (AMB and polynomial extrapolation at the sources' gains amplify the
predictor–corrector's switch into command jumps of tens of mm per fast step: such a run
stops on the command-velocity interlock, ``interlocks.command_velocity``.)
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.declaration import Field
from rths_ident.errors import ParameterError
from rths_ident.estimators.registry import no_identifier
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.loop.assembled import HybridTest, NativeNS, native_substructure
from rths_ident.hybrid.loop.model_updating import UpdateGuards
from rths_ident.models import LinearElement, LinearParams
from rths_ident.runner.options import RunOptions
from rths_ident.runner.results import run_scenario as run_hybrid_test
from rths_ident.scenarios import components, fields
from rths_ident.scenarios.config import HybridTestConfig
from rths_ident.scenarios.kinds import kind_names
from rths_ident.structures.scaled_sdof import ScaledSDOFNewmark, scaled_sdof_params, scaled_sdof_step

SCENARIO = "sdof"
ENGINES = ("fused", "stepwise")


@dataclasses.dataclass(frozen=True)
class SDOFTestConfig(HybridTestConfig):
    """Configuration of an ``sdof`` test (SI units; module doc). The specimen's fields
    are those :mod:`rths_ident.calibration.sample` samples."""

    SCENARIO: ClassVar[str] = SCENARIO
    UPDATING_MODES: ClassVar[tuple] = ("none",)

    mass: float = 1000.0  # m [kg]
    period: float = 1.0  # T [s]
    damping_ratio: float = 0.02  # ζ [-]
    experimental_share: float = 0.5  # α [-]: the physical spring's share of k
    lab_stiffness: float = 1.0e4  # k_lab [N/m]
    length_scale: float = 0.05  # λ = lab / prototype displacement [-]
    record_start: float = 0.0  # s: where in the record the test's window starts
    duration: float | None = 6.0  # s: the strong motion of El Centro (calibrate's default window)
    compensation: str = "damb"
    transition_continuity: int = 0  # the sources' predictor–corrector
    seed: int = 0

    def __post_init__(self):
        super().__post_init__()
        if not (np.isfinite(self.record_start) and self.record_start >= 0):
            self.bad("record_start", "a time ≥ 0 s in the record")
        for name in ("mass", "period", "lab_stiffness", "length_scale"):
            if not (np.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                self.bad(name, "a finite number > 0")
        if not 0.0 <= self.damping_ratio < 1.0:
            self.bad("damping_ratio", "a damping ratio in [0, 1)")
        if not 0.0 <= self.experimental_share <= 1.0:
            self.bad("experimental_share", "a share in [0, 1]")
        omega_dt = 2.0 * np.pi / self.period / self.slow_rate
        if not omega_dt < 2.0:
            self.bad("period", f"a period with ω Δt_n < 2 (explicit Newmark's limit; here ω Δt_n = {omega_dt:.3g})")

    @property
    def identifier_every(self) -> int:
        """No identifier: the fast chunk is one scan over its samples."""
        return 1

    @property
    def actuator(self) -> act.CarrionSpencerParams:
        """The shipped Carrion–Spencer actuator (seed 000 Table 2.1)."""
        return act.CarrionSpencerParams(substeps=self.actuator_substeps)

    def ns_params(self):
        """The numerical substructure's numbers (:func:`~rths_ident.structures.scaled_sdof.scaled_sdof_params`)."""
        return scaled_sdof_params(self.mass, self.period, self.damping_ratio, self.experimental_share,
                                  self.lab_stiffness, self.length_scale)


def slow_record(cfg: SDOFTestConfig):
    """The ground motion at the slow rate (:func:`rths_ident.scenarios.components.slow_record`)
    from ``record_start`` seconds into the record: (t_1 … t_N [s] of the test, ẍ_g [m/s²])."""
    if cfg.record_start == 0:
        return components.slow_record(cfg)
    dt = 1.0 / cfg.slow_rate
    skip = int(round(cfg.record_start * cfg.slow_rate))
    whole = dataclasses.replace(cfg, pad_seconds=0.0,
                                duration=None if cfg.duration is None else cfg.record_start + cfg.duration)
    try:
        _, ag = components.slow_record(whole)
    except ParameterError as error:
        raise ParameterError(f"{SCENARIO} record.start + duration = {cfg.record_start:g} + {cfg.duration:g} s: "
                             f"expected a window within the record ({error})") from None
    n_pad = int(round(cfg.pad_seconds * cfg.slow_rate))
    ag = np.concatenate([np.zeros(n_pad), ag[skip:]])
    return dt * np.arange(1, ag.size + 1), ag


def build(cfg: SDOFTestConfig) -> HybridTest:
    """The ``sdof`` test of ``cfg`` as data (module doc)."""
    time_slow, ground_accel = slow_record(cfg)
    actuator = cfg.actuator
    side = components.fast_side(cfg, specimen_model=LinearElement, specimen=LinearParams(k=cfg.lab_stiffness),
                                actuator=actuator, identifier=no_identifier(),
                                realisation=lambda: _reference_target(cfg, ground_accel))
    params = cfg.ns_params()
    native = NativeNS(ScaledSDOFNewmark(), params, params, (0,), scaled_sdof_step, lambda p, theta: p)

    def reference():
        """The prototype with the whole k numerical: x (N, 1) [m] and the lab force k_lab λ x [N]."""
        x = reference_displacement(cfg, ground_accel)
        return x[:, None], cfg.lab_stiffness * cfg.length_scale * x

    test = HybridTest(
        key=cfg.program_key(), name=SCENARIO, time_slow=time_slow, ground_accel=ground_accel,
        slow_rate=cfg.slow_rate, fast_side=side, native_ns=native, make_ns=None,
        guards=UpdateGuards(np.zeros(0), np.zeros(0), freeze_until_s=np.inf), param_names=(),
        true_values=np.zeros(0), initial_values=np.zeros(0), reference=reference, seed=cfg.seed,
        response_names=("displacement",), interlocks=components.interlocks(cfg, actuator))
    return test._replace(make_ns=lambda variant: native_substructure(test, variant))


@jax.jit
def _ideal_run(params, ground_accel, lab_stiffness, dt):
    def step(carry, ag):
        state, target = carry
        state, target, log = scaled_sdof_step(params, state, lab_stiffness * target, ag, dt)
        return (state, target), log["displacement"][0]

    zero = jnp.zeros(())
    _, x = jax.lax.scan(step, ((zero, zero), jnp.zeros(1)), ground_accel)
    return x


def reference_displacement(cfg: SDOFTestConfig, ground_accel) -> np.ndarray:
    """x [m] of the prototype at t_1 … t_N with an ideal interface (module doc)."""
    return np.asarray(_ideal_run(cfg.ns_params(), jnp.asarray(ground_accel), float(cfg.lab_stiffness),
                                 1.0 / cfg.slow_rate))


def _reference_target(cfg: SDOFTestConfig, ground_accel) -> np.ndarray:
    """DDMRT's training signal: the lab target λ x of the reference [m]."""
    return cfg.length_scale * reference_displacement(cfg, ground_accel)


def run_scenario(cfg: SDOFTestConfig, options: RunOptions = RunOptions()) -> dict:
    """Run the test (:func:`rths_ident.runner.results.run_scenario`)."""
    return run_hybrid_test(cfg, build, options, describe=lambda test: {"specimen": {
        name: getattr(cfg, name) for name in ("mass", "period", "damping_ratio", "experimental_share",
                                              "lab_stiffness", "length_scale")}})


CONFIG = SDOFTestConfig

#: the test-file fields of an ``sdof`` test (units per field; rths-ident new --from sdof)
FIELDS = [
    *fields.test_fields(kind_names), *fields.record_fields(),
    Field("record.start", "record_start", "where the test's window starts in the record", unit="s", low=0.0),
    *(field for field in fields.rate_fields() if field.path != "rates.identifier"),  # no identifier
    Field("structure.mass", "mass", "prototype mass m", unit="kg", low=1e-9),
    Field("structure.period", "period", "natural period T (k = m (2π/T)²; explicit Newmark needs 2π/T · Δt_n < 2)",
          unit="s", low=1e-9),
    Field("structure.damping_ratio", "damping_ratio", "damping ratio ζ (c = 2 ζ m ω)", low=0.0, high=0.999999),
    Field("specimen.experimental_share", "experimental_share", "α: the share of k tested physically, the rest "
          "(1 − α) k numerical", low=0.0, high=1.0),
    Field("specimen.lab_stiffness", "lab_stiffness", "k_lab: the lab spring behind the actuator", unit="N/m",
          low=1e-9),
    Field("specimen.length_scale", "length_scale", "λ = lab / prototype displacement (the target is λ x; the "
          "prototype sees r_lab α k / (λ k_lab))", low=1e-9),
    *fields.fast_side_fields(), *fields.updating_fields(SDOFTestConfig.UPDATING_MODES), *fields.interlock_fields(),
    *fields.run_fields(compare=False),
]


def config_from_values(values: dict) -> SDOFTestConfig:
    """The configuration from a test file's checked values (by field target)."""
    return SDOFTestConfig(**values)


def plot(result: dict, out_dir):
    """The figures of a run (:func:`rths_ident.runner.plots.plot_sdof_test`)."""
    from rths_ident.runner.plots import plot_sdof_test  # noqa: PLC0415 (matplotlib only when plotting)

    return plot_sdof_test(result, out_dir)
