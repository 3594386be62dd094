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
* **Online model updating:** the joint state–parameter UKF of
  :class:`~rths_ident.estimators.DegradingBoucWenUKFIdentifier` (state [r, H, k_e,
  f_y0, a, b], driven by the measured displacement, measuring the force) runs inside the
  fast loop at ``identifier_rate`` (≥ 500 Hz; default 1 kHz); the hook pushes
  [k̂_e, f̂_y0, â, b̂] into the eight numerical columns every slow step, and the α-OS
  splitting stiffness of the interface follows k̂_e.

The loop, the sensors, the compensation and the rate transition are those of
:mod:`rths_ident.hybrid.scenarios.lugre_frame` (same modelling choices: the load cell
reads the specimen's restoring force, velocity from a velocity transducer). Updating
modes: ``ukf`` (identify and update), ``none`` (keep the wrong model), ``oracle`` (true
parameters from the start). The three share one compiled loop: the identifier always
runs; they differ in the NS's initial parameters and the hook's freeze time.
"""

from __future__ import annotations

import dataclasses
import time as _time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import metrics
from rths_ident._params import ParameterError
from rths_ident.estimators.boucwen_ukf_identifier import (
    DegradingBoucWenConstants,
    DegradingBoucWenUKFIdentifier,
    degrading_boucwen_force,
    degrading_boucwen_transition,
)
from rths_ident.estimators.ukf import ukf_step
from rths_ident.hybrid import actuator as act
from rths_ident.hybrid import sensors
from rths_ident.hybrid.compensation import amb, damb, polynomial
from rths_ident.hybrid.engine import LoopState, SlowStepFunctions, make_fused_runner, make_slow_stepper, run_stepwise
from rths_ident.hybrid.model_updating import UpdateGuards, hook_init, hook_step
from rths_ident.hybrid.rate_transition import ddmrt, predictor_corrector

# shared helpers of the flagship (candidates for a common module, see the report)
from rths_ident.hybrid.scenarios.lugre_frame import _ddmrt_weights, _finite_or_none, _read, _slow_record
from rths_ident.models import DegradingBoucWen
from rths_ident.structures import AlphaOS, partition_column, set_column_params, three_storey_two_bay_frame
from rths_ident.structures.structure import with_changes

SCENARIO = "bw-frame"
# fast steps unrolled per scan iteration: 1 compiles in about half the time of 4 (≈6 vs
# 11 s) for ≈20 % more run time (31 s of El Centro: 1.0 vs 0.83 s on an idle core)
_UNROLL = 1
UPDATING_MODES = ("none", "ukf", "oracle")
COMPENSATIONS = ("damb", "amb", "polynomial", "none")
TRANSITIONS = ("predictor-corrector", "ddmrt")
TRANSFER_SYSTEMS = ("carrion-spencer", "ideal")
#: the parameters the UKF identifies (and the hook pushes into the NS), SI units
PARAM_NAMES = ("k_e", "f_y0", "stiffness_degradation", "strength_degradation")
PARAM_UNITS = {"k_e": "N/m", "f_y0": "N", "stiffness_degradation": "1/J", "strength_degradation": "1/J"}


@dataclasses.dataclass(frozen=True)
class BWFrameConfig:
    """Configuration of a ``bw-frame`` run (SI units; module doc for the defaults)."""

    record: str = "elcentro_1940"
    floor_mass: float = 5000.0  # kg per floor (seed 001 Ch. 3)
    record_scale: float = 1.0
    duration: float | None = None  # s of the record; None = all of it
    fast_rate: float = 4000.0  # Hz
    slow_rate: float = 50.0  # Hz
    updating: str = "ukf"
    initial_error: float = -0.30  # relative error of the NS's k_e, f_y0, a, b
    compensation: str = "damb"
    transition: str = "predictor-corrector"
    arrival_fraction: float = 0.5
    sensor_noise: bool = True
    seed: int = 123
    column_preset: str = "case4"  # DegradingBoucWen preset (seed 000 [REPO])
    column_stiffness: float = 1.34e6  # k_e [N/m] after force-similitude scaling (W4×13, seed 001 Table 2.1)
    column_substeps: int = 4  # backward-Euler sub-steps of the NS/reference columns per slow step
    rayleigh_zeta: float = 0.05
    design_drift: float = 0.05  # m: first-storey drift the actuator is sized for
    # s: the hook holds the initial model this long. The UKF settles k̂_e within 2 % in
    # 0.08 s of elastic response while f̂_y0, â, b̂ stay at the guess until the column
    # yields, so an early push changes only k_e; on 4 s of El Centro a 0.5 s hold left the
    # roof J4 at 1.44× the oracle's, 0.1 s at 1.01×.
    update_after: float = 0.1
    transfer_system: str = "carrion-spencer"
    actuator_substeps: int = 1
    # Hz; None = auto: the lowest rate ≥ 1 kHz dividing the fast rate into whole samples per slow step
    identifier_rate: float | None = None
    ukf_parameter_std: float = 0.5  # initial std of the identified parameters, relative to the guess
    ukf_force_std: float = 20.0  # N: the UKF's force-measurement std (noise + model error)

    def __post_init__(self):
        def bad(field, expected):
            raise ParameterError(f"{SCENARIO} {field} = {getattr(self, field)!r}: expected {expected}")

        if self.updating not in UPDATING_MODES:
            bad("updating", " | ".join(UPDATING_MODES))
        if self.compensation not in COMPENSATIONS:
            bad("compensation", " | ".join(COMPENSATIONS))
        if self.transition not in TRANSITIONS:
            bad("transition", " | ".join(TRANSITIONS))
        if self.transfer_system not in TRANSFER_SYSTEMS:
            bad("transfer_system", " | ".join(TRANSFER_SYSTEMS))
        if self.column_preset not in DegradingBoucWen.PRESET_NAMES:
            bad("column_preset", " | ".join(DegradingBoucWen.PRESET_NAMES))
        if not (self.fast_rate > 0 and self.slow_rate > 0):
            bad("fast_rate/slow_rate", "positive rates in Hz")
        ratio = self.fast_rate / self.slow_rate
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise ParameterError(
                f"{SCENARIO} fast_rate/slow_rate = {ratio:g} must be a whole number ≥ 1 "
                f"(got fast {self.fast_rate:g} Hz, slow {self.slow_rate:g} Hz)"
            )
        if self.duration is not None and not self.duration > 0:
            bad("duration", "a positive number of seconds")
        for name in ("floor_mass", "record_scale", "column_stiffness", "design_drift", "ukf_parameter_std",
                     "ukf_force_std"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                bad(name, "a finite positive number")
        if not (-0.9 <= self.initial_error <= 2.0):
            bad("initial_error", "a relative error in [-0.9, 2.0]")
        if not (0.0 <= self.arrival_fraction < 1.0):
            bad("arrival_fraction", "a fraction in [0, 1)")
        if not (0.0 <= self.rayleigh_zeta < 1.0):
            bad("rayleigh_zeta", "a damping ratio in [0, 1)")
        if not (self.update_after >= 0.0):
            bad("update_after", "a time ≥ 0 s")
        for name in ("column_substeps", "actuator_substeps"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                bad(name, "an integer ≥ 1")
        if self.identifier_rate is not None:
            every = self.fast_rate / self.identifier_rate if self.identifier_rate > 0 else np.inf
            if not (self.identifier_rate >= 500.0 and abs(every - round(every)) < 1e-9
                    and ratio % round(every) == 0):
                raise ParameterError(
                    f"{SCENARIO} identifier_rate = {self.identifier_rate!r} Hz must be ≥ 500 Hz and divide the "
                    f"fast rate {self.fast_rate:g} Hz into a whole number of samples that divides the "
                    f"{round(ratio)} fast steps of a slow step"
                )

    @property
    def ratio(self) -> int:
        return int(round(self.fast_rate / self.slow_rate))

    @property
    def identifier_every(self) -> int:
        """Fast samples per identifier update."""
        if self.identifier_rate is not None:
            return int(round(self.fast_rate / self.identifier_rate))
        divisors = [d for d in range(1, self.ratio + 1) if self.ratio % d == 0 and self.fast_rate / d >= 1000.0]
        return max(divisors) if divisors else 1

    @property
    def mass(self) -> float:
        return float(self.floor_mass)


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


class Built(NamedTuple):
    """Everything a run needs, built once."""

    config: BWFrameConfig
    time_slow: np.ndarray
    ground_accel: np.ndarray
    true_column: Any  # DegradingBoucWenParams (NS/reference sub-steps)
    initial_column: Any  # the NS's initial guess
    integrator: Any
    ns_params: Any
    ns_params_true: Any
    reference_integrator: Any
    reference_params: Any
    functions: SlowStepFunctions
    fast_params: dict
    initial_fast_state: dict
    guards: UpdateGuards


def _compensation(cfg, actuator_params):
    if cfg.compensation == "damb":
        return damb, damb.DAMBParams(filter_sample_rate=cfg.fast_rate)
    if cfg.compensation == "amb":
        return amb, amb.AMBParams(filter_sample_rate=cfg.fast_rate)
    if cfg.compensation == "polynomial":
        return polynomial, polynomial.PolynomialExtrapolationParams(delay=1.0 / actuator_params.loop_gain())
    return None, None


def _record(cfg):
    try:
        return _slow_record(cfg)
    except ParameterError as exc:  # the shared helper names the flagship
        raise ParameterError(str(exc).replace("lugre-frame", SCENARIO)) from None


def build(cfg: BWFrameConfig) -> Built:
    time_slow, ground_accel = _record(cfg)
    dt_slow, dt_fast, ratio = 1.0 / cfg.slow_rate, 1.0 / cfg.fast_rate, cfg.ratio

    true_column = scaled_column_params(cfg.column_preset, cfg.column_stiffness, cfg.column_substeps)
    true_values = np.array([float(getattr(true_column, n)) for n in PARAM_NAMES])
    guess_values = (1.0 + cfg.initial_error) * true_values
    guess = _with_identified(true_column, guess_values)
    specimen = dataclasses.replace(true_column, substeps=1)  # one sub-step per fast step (model doc)

    true_frame = three_storey_two_bay_frame(cfg.mass, DegradingBoucWen, true_column)
    damping = true_frame.rayleigh_damping(cfg.rayleigh_zeta, (1, 2))[0]
    ref_structure, ref_params = true_frame.to_structure(damping=damping)
    reference_integrator = AlphaOS(ref_structure)

    guess_frame = three_storey_two_bay_frame(cfg.mass, DegradingBoucWen, guess)
    part = partition_column(guess_frame, storey=1, column=-1, damping=damping)
    integrator = AlphaOS(part.structure)
    ns_params = part.params
    ns_params_true = partition_column(true_frame, storey=1, column=-1, damping=damping).params

    # --- fast side ------------------------------------------------------------------
    d = cfg.design_drift
    design_force = float(true_column.alpha_sv * true_column.k_e * d + true_column.f_y0 + true_column.k_h * d**3)
    actuator_params = act.CarrionSpencerParams.scaled_for(
        peak_force=design_force, peak_displacement=2.0 * d, peak_velocity=1.0,
        specimen_mass=float(true_column.m_e), substeps=cfg.actuator_substeps,
    )
    comp_module, comp_params = _compensation(cfg, actuator_params)
    if cfg.transition == "ddmrt":
        weights = _ddmrt_weights(integrator, ns_params, ground_accel, dt_slow)
        tr_module, tr_params = ddmrt, ddmrt.DDMRTParams(weights=weights, ratio=ratio)
    else:
        arrival = int(round(cfg.arrival_fraction * ratio)) if ratio > 1 else 0
        tr_module, tr_params = predictor_corrector, predictor_corrector.PredictorCorrectorParams(
            ratio=ratio, arrival_tick=min(arrival, ratio - 1)
        )
    if cfg.sensor_noise:
        disp_sensor = sensors.SensorParams.thesis_displacement()
        force_sensor = sensors.SensorParams.thesis_force()
        vel_sensor = sensors.SensorParams(noise_power=float(disp_sensor.noise_power) * (2 * np.pi) ** 2)
    else:
        disp_sensor = force_sensor = vel_sensor = sensors.SensorParams()

    id_every = cfg.identifier_every
    # the UKF's numbers (P0, Q, R, sigma weights, bounds) from the validated wrapper; the
    # filter itself runs as the pure ukf_step inside the fast loop
    wrapper = DegradingBoucWenUKFIdentifier(
        dt_fast * id_every, dict(zip(PARAM_NAMES, guess_values)), cfg.ukf_parameter_std,
        alpha_sv=float(true_column.alpha_sv), N=float(true_column.N), eta1=float(true_column.eta1),
        eta2=float(true_column.eta2), k_h=float(true_column.k_h), c_e=float(true_column.c_e),
        force_std=cfg.ukf_force_std, min_stiffness_ratio=float(true_column.min_stiffness_ratio),
        min_strength_ratio=float(true_column.min_strength_ratio),
    )
    constants = DegradingBoucWenConstants(*(jnp.asarray(v) for v in wrapper.constants))
    filter_substeps = 2

    def fx(s, dt, displacement_start, displacement_end, constants):
        return degrading_boucwen_transition(s, displacement_end - displacement_start, constants, filter_substeps)

    def hx(s, displacement, velocity, constants):
        return jnp.stack([degrading_boucwen_force(s, displacement, velocity, constants)])

    def identifier_step(ukf_params, id_state, x_m, v_m, f_m):
        fx_args = {"displacement_start": id_state["previous_displacement"], "displacement_end": x_m,
                   "constants": constants}
        hx_args = {"displacement": x_m, "velocity": v_m, "constants": constants}
        posterior, _ = ukf_step(ukf_params, id_state["ukf"], jnp.stack([f_m]), fx, hx, fx_args, hx_args)
        return {"ukf": posterior, "previous_displacement": x_m}

    fast_params = {
        "actuator": actuator_params,
        "specimen": specimen,
        "compensation": comp_params,
        "transition": tr_params,
        "sensor_displacement": disp_sensor,
        "sensor_force": force_sensor,
        "sensor_velocity": vel_sensor,
        "identifier": wrapper.params,
    }
    keys = jax.random.split(jax.random.PRNGKey(cfg.seed), 3)
    initial_fast_state = {
        "actuator": act.actuator_init(actuator_params, DegradingBoucWen, specimen),
        "compensation": comp_module.init(comp_params) if comp_module is not None else (),
        "transition": tr_module.init(tr_params),
        "sensor_displacement": sensors.sensor_init(disp_sensor, keys[0]),
        "sensor_force": sensors.sensor_init(force_sensor, keys[1]),
        "sensor_velocity": sensors.sensor_init(vel_sensor, keys[2]),
        "identifier": {"ukf": wrapper.state, "previous_displacement": jnp.zeros(())},
        "measured_displacement": jnp.zeros(()),
        "previous_target": jnp.zeros(()),
    }
    actuator_step = act.ideal_actuator_step if cfg.transfer_system == "ideal" else act.actuator_step

    def fast_chunk(fp, fs, target):
        newest = fs["previous_target"] if cfg.transition == "ddmrt" else target
        tr_state, tr_out = tr_module.step(fp["transition"], fs["transition"], newest)
        zeros = jnp.zeros(ratio)
        sd, noise_x = sensors.sensor_step(fp["sensor_displacement"], fs["sensor_displacement"], zeros, dt_fast)
        sf, noise_f = sensors.sensor_step(fp["sensor_force"], fs["sensor_force"], zeros, dt_fast)
        sv, noise_v = sensors.sensor_step(fp["sensor_velocity"], fs["sensor_velocity"], zeros, dt_fast)

        def fast_step(carry, inputs):
            x_target, nx, nf, nv, tick = inputs
            if comp_module is not None:
                comp_state, x_command = comp_module.step(
                    fp["compensation"], carry["compensation"], x_target, carry["measured_displacement"], dt_fast
                )
            else:
                comp_state, x_command = (), x_target
            act_state, out = actuator_step(fp["actuator"], DegradingBoucWen, fp["specimen"], carry["actuator"],
                                           x_command, dt_fast)
            x_m = _read(fp["sensor_displacement"], out["x_measured"] + nx)
            f_m = _read(fp["sensor_force"], out["restoring_force"] + nf)
            v_m = _read(fp["sensor_velocity"], out["v"] + nv)
            if id_every == 1:
                id_state = identifier_step(fp["identifier"], carry["identifier"], x_m, v_m, f_m)
            else:  # the UKF samples every id_every-th fast step (one branch runs)
                id_state = jax.lax.cond(
                    tick % id_every == id_every - 1,
                    lambda s: identifier_step(fp["identifier"], s, x_m, v_m, f_m),
                    lambda s: s, carry["identifier"])
            new = dict(carry, compensation=comp_state, actuator=act_state, identifier=id_state,
                       measured_displacement=x_m)
            log = {"target": x_target, "command": x_command, "measured": x_m, "force": f_m,
                   "true_force": out["restoring_force"], "limit": out["limit_code"]}
            return new, log

        carry = dict(fs, transition=tr_state, previous_target=jnp.asarray(target, jnp.float64),
                     sensor_displacement=sd, sensor_force=sf, sensor_velocity=sv)
        carry, log = jax.lax.scan(fast_step, carry, (tr_out.samples, noise_x, noise_f, noise_v, jnp.arange(ratio)),
                                  unroll=_UNROLL)
        return carry, log, log["force"][-1]

    structure = part.structure

    def apply_estimate(params, estimate):
        """Push [k̂_e, f̂_y0, â, b̂] into the eight numerical columns; the α-OS splitting
        stiffness of the interface follows k̂_e (the column's initial tangent)."""
        params = set_column_params(structure, params, DegradingBoucWen,
                                   _with_identified(true_column, [estimate[i] for i in range(4)]))
        k_interface = jnp.zeros_like(params.interface_stiffness).at[0, 0].set(estimate[0])
        return with_changes(params, interface_stiffness=k_interface)

    # physical plausibility relative to the initial guess (degradation rates may be ~0)
    guards = UpdateGuards(lower_bounds=np.array([0.4, 0.4, 0.0, 0.0]) * guess_values,
                          upper_bounds=np.array([2.5, 2.5, 5.0, 5.0]) * guess_values,
                          freeze_until_s=cfg.update_after)

    def update(ns_p, hook, fs, feedback, k):
        hook_state, hook_guards = hook
        ukf_state = fs["identifier"]["ukf"]
        estimate = ukf_state.x[2:6]
        std = jnp.sqrt(jnp.maximum(jnp.diag(ukf_state.P)[2:6], 0.0))
        t = (k + 1) * dt_slow
        hook_state, ns_p, applied = hook_step(hook_guards, hook_state, ns_p, estimate, jnp.zeros(4), True, t, k,
                                              apply_estimate)
        return ns_p, (hook_state, hook_guards), {"applied": applied, "estimate": estimate, "std": std,
                                                 "dissipated_energy": ukf_state.x[1]}

    def ns_step(ns_p, ns_state, feedback, ag):
        force = jnp.zeros(3).at[0].set(feedback)
        ns_state, target, out = integrator.step_and_predict(ns_p, ns_state, ag, force, dt_slow)
        return ns_state, target[0], {"displacement": out.displacement, "velocity": out.velocity,
                                     "acceleration": out.acceleration}

    functions = SlowStepFunctions(fast_chunk, ns_step, update)
    return Built(cfg, time_slow, ground_accel, true_column, guess, integrator, ns_params, ns_params_true,
                 reference_integrator, ref_params, functions, fast_params, initial_fast_state, guards)


def initial_loop_state(built: Built, updating: str | None = None) -> LoopState:
    """Initial loop state for ``updating`` = ukf | none | oracle (default: the config's)."""
    updating = built.config.updating if updating is None else updating
    if updating not in UPDATING_MODES:
        raise ParameterError(f"updating = {updating!r}: expected one of {', '.join(UPDATING_MODES)}")
    dt_slow = 1.0 / built.config.slow_rate
    ns_params = built.ns_params_true if updating == "oracle" else built.ns_params
    column = built.true_column if updating == "oracle" else built.initial_column
    ns_init = _cached("ns_init", built, lambda: jax.jit(lambda p: built.integrator.init(p, dt_slow)))
    ns_state = ns_init(ns_params)  # AlphaOS is unconditionally stable: no time-step check to skip
    target = built.integrator.predicted_displacement(ns_params, ns_state, dt_slow)[0]
    hook_state = hook_init([float(getattr(column, n)) for n in PARAM_NAMES])
    guards = built.guards if updating == "ukf" else dataclasses.replace(built.guards, freeze_until_s=np.inf)
    return LoopState(ns_state, built.initial_fast_state, jnp.asarray(target), ns_params, (hook_state, guards))


_RUNNER_CACHE: dict = {}


def _cache_key(kind, built):
    # equal configurations build identical loops; the three updating variants share one
    return (kind, dataclasses.replace(built.config, updating="ukf"))


def _cached(kind, built, make):
    """Compiled functions per configuration (a new build does not recompile)."""
    key = _cache_key(kind, built)
    if key not in _RUNNER_CACHE:
        _RUNNER_CACHE[key] = make()
    return _RUNNER_CACHE[key]


def compiled_fused_runner(built: Built, initial: LoopState | None = None):
    """The fused loop compiled ahead of time for this configuration (cached)."""
    key = _cache_key("fused", built)
    if key not in _RUNNER_CACHE:
        initial = initial_loop_state(built) if initial is None else initial
        runner = make_fused_runner(built.functions)
        _RUNNER_CACHE[key] = runner.lower(built.fast_params, initial, jnp.asarray(built.ground_accel)).compile()
    return _RUNNER_CACHE[key]


def _stepper(built):
    key = _cache_key("stepwise", built)
    if key not in _RUNNER_CACHE:
        _RUNNER_CACHE[key] = make_slow_stepper(built.functions)
    return _RUNNER_CACHE[key]


def simulate_reference(built: Built):
    """Monolithic frame with the true columns: floor displacements (N, 3) [m] and the
    specimen column's force [N]."""
    dt_slow = 1.0 / built.config.slow_rate
    integ = built.reference_integrator

    def reference(params, ground_accel):
        _, out = integ.simulate(params, ground_accel, dt_slow, state=integ.init(params, dt_slow))
        return out.displacement, out.column_forces[0][:, -1]

    floors, column_force = _cached("reference", built, lambda: jax.jit(reference))(
        built.reference_params, jnp.asarray(built.ground_accel))
    return np.asarray(floors), np.asarray(column_force)


def run_loop(built: Built, engine: str = "fused", updating: str | None = None, progress=None):
    """Run the hybrid loop; returns (final LoopState, logs as NumPy, wall seconds)."""
    initial = initial_loop_state(built, updating)
    ag = jnp.asarray(built.ground_accel)
    if engine == "fused":
        runner = compiled_fused_runner(built, initial)
        start = _time.perf_counter()
        final, logs = runner(built.fast_params, initial, ag)
        jax.block_until_ready(logs)
        wall = _time.perf_counter() - start
        logs = jax.tree_util.tree_map(np.asarray, logs)
    elif engine == "stepwise":
        stepper = _stepper(built)

        def check(log, k):
            code = int(np.max(log["fast"]["limit"]))
            if code:
                return (f"actuator limit exceeded (code {code}) in slow step {k} "
                        f"(t = {(k + 1) / built.config.slow_rate:.3f} s)")
            return None

        start = _time.perf_counter()
        final, logs = run_stepwise(stepper, built.fast_params, initial, np.asarray(ag), check=check,
                                   on_step=progress)
        wall = _time.perf_counter() - start
    else:
        raise ParameterError(f"engine = {engine!r}: expected 'fused' or 'stepwise'")
    return final, logs, wall


# --------------------------------------------------------------------------------------
# metrics and the whole scenario (`rths-ident run bw-frame`)
# --------------------------------------------------------------------------------------
def _variant_metrics(built: Built, logs: dict, reference_floors, reference_force) -> dict:
    cfg = built.config
    floors = np.asarray(logs["ns"]["displacement"])
    target = np.asarray(logs["fast"]["target"]).ravel()
    measured = np.asarray(logs["fast"]["measured"]).ravel()
    force_slow = np.asarray(logs["fast"]["force"])[:, -1]
    estimates = np.asarray(logs["update"]["estimate"])
    true = np.array([float(getattr(built.true_column, n)) for n in PARAM_NAMES])
    final = estimates[-1]
    return {
        "J2_percent": float(metrics.j2_tracking_error(target, measured)),
        "J4_percent": {f"floor{i + 1}": float(metrics.j4_global_error(reference_floors[:, i], floors[:, i]))
                       for i in range(3)},
        "J4_force_percent": float(metrics.j4_global_error(reference_force, force_slow)),
        "tau_ms": float(metrics.fei_delay(target, measured, cfg.fast_rate) * 1e3),
        "params_final": dict(zip(PARAM_NAMES, map(float, final))),
        "param_error_percent": dict(zip(PARAM_NAMES, map(float, 100 * np.abs(final / true - 1)))),
        "param_std_percent": dict(zip(PARAM_NAMES, map(float, 100 * np.asarray(logs["update"]["std"])[-1]
                                                       / np.abs(final)))),
        "convergence_time_s": {
            name: _finite_or_none(metrics.convergence_time(built.time_slow, estimates[:, i], true[i], tol=0.02))
            for i, name in enumerate(PARAM_NAMES)
        },
        "identified_dissipated_energy_J": float(np.asarray(logs["update"]["dissipated_energy"])[-1]),
        "updates_applied": int(np.sum(logs["update"]["applied"])),
        "actuator_limit_code": int(np.max(logs["fast"]["limit"])),
    }


class VariantResult(NamedTuple):
    updating: str
    metrics: dict
    logs: dict
    wall_s: float


def run_scenario(cfg: BWFrameConfig, engine: str = "fused", compare: bool = True, progress=None) -> dict:
    """Run the configured variant and (``compare``) the other two. Returns the JSON keys
    of ``rths-ident run`` (for the configured variant), ``variants`` and ``_arrays``."""
    start_all = _time.perf_counter()
    built = build(cfg)
    reference_floors, reference_force = simulate_reference(built)
    order = [cfg.updating] + ([m for m in UPDATING_MODES if m != cfg.updating] if compare else [])
    results = {}
    for mode in order:
        _, logs, wall = run_loop(built, engine, updating=mode, progress=progress if mode == cfg.updating else None)
        results[mode] = VariantResult(mode, _variant_metrics(built, logs, reference_floors, reference_force),
                                      logs, wall)
    main = results[cfg.updating]
    duration = float(built.time_slow[-1])
    out = dict(main.metrics)
    out.update({
        "scenario": SCENARIO,
        "record": cfg.record,
        "floor_mass_kg": cfg.mass,
        "updating": cfg.updating,
        "engine": engine,
        "compensation": cfg.compensation,
        "transition": cfg.transition,
        "transfer_system": cfg.transfer_system,
        "fast_rate_hz": cfg.fast_rate,
        "slow_rate_hz": cfg.slow_rate,
        "identifier_rate_hz": cfg.fast_rate / cfg.identifier_every,
        "initial_error": cfg.initial_error,
        "params_true": {n: float(getattr(built.true_column, n)) for n in PARAM_NAMES},
        "params_initial": {n: float(getattr(built.initial_column, n)) for n in PARAM_NAMES},
        "realtime_factor": duration / main.wall_s,
        "sim_duration_s": duration,
        "wall_s": main.wall_s,
        "total_wall_s": _time.perf_counter() - start_all,
        "variants": {m: r.metrics for m, r in results.items()},
    })
    out["_arrays"] = {
        "time_slow": built.time_slow,
        "time_fast": built.time_slow[0] - 1.0 / cfg.slow_rate
        + np.arange(1, len(built.time_slow) * cfg.ratio + 1) / cfg.fast_rate,
        "reference_floors": reference_floors,
        "reference_force": reference_force,
        "logs": {m: r.logs for m, r in results.items()},
    }
    return out


# --------------------------------------------------------------------------------------
# figures (`rths-ident run bw-frame --plots DIR`)
# --------------------------------------------------------------------------------------
_VARIANT_STYLE = {"ukf": ("tab:blue", "with updating (UKF)"), "none": ("tab:red", "no updating"),
                  "oracle": ("tab:green", "oracle (true model)")}
_PARAM_LABELS = {"k_e": r"$\hat k_e/k_e$", "f_y0": r"$\hat f_{y0}/f_{y0}$",
                 "stiffness_degradation": r"$\hat a/a$ (stiffness degr.)",
                 "strength_degradation": r"$\hat b/b$ (strength degr.)"}


def plot_bw_frame(result: dict, out_dir) -> list:
    """Write the ``bw-frame`` figures into ``out_dir`` (tracking, reference vs hybrid,
    specimen hysteresis, identified parameters, updating vs none); returns their paths.
    Same figures as :func:`rths_ident.hybrid.plots.plot_lugre_frame`, with this
    scenario's parameters and variant names."""
    from pathlib import Path  # noqa: PLC0415

    from matplotlib.figure import Figure  # noqa: PLC0415

    from rths_ident.hybrid.plots import _save, _strong_window  # noqa: PLC0415

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = result["_arrays"]
    t_slow, t_fast, ref, logs = arrays["time_slow"], arrays["time_fast"], arrays["reference_floors"], arrays["logs"]
    main_logs = logs[result["updating"]]
    paths = []

    target = main_logs["fast"]["target"].ravel() * 1e3
    measured = main_logs["fast"]["measured"].ravel() * 1e3
    fig = Figure(figsize=(11, 6.5))
    ax1, ax2 = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    ax1.plot(t_fast, target, lw=0.8, label="target $x_t$")
    ax1.plot(t_fast, measured, lw=0.8, ls="--", label="measured $x_m$")
    ax1.set(xlabel="time [s]", ylabel="floor-1 displacement [mm]",
            title=f"Actuator tracking — J2 = {result['J2_percent']:.3f} %, τ = {result['tau_ms']:.3f} ms")
    ax1.legend(loc="upper right")
    t0, t1 = _strong_window(t_fast, target, 1.0)
    sel = (t_fast >= t0) & (t_fast <= t1)
    ax2.plot(t_fast[sel], target[sel], label="target")
    ax2.plot(t_fast[sel], measured[sel], ls="--", label="measured")
    ax2.set(xlabel="time [s]", ylabel="[mm]", title="zoom at the peak")
    ax2.legend(fontsize=8)
    paths.append(_save(fig, out / "tracking.png"))

    fig = Figure(figsize=(11, 7))
    for i in range(3):
        ax = fig.add_subplot(3, 1, 3 - i)
        ax.plot(t_slow, ref[:, i] * 1e3, color="k", lw=1.2, label="reference (monolithic, true model)")
        for mode, lg in logs.items():
            colour, label = _VARIANT_STYLE[mode]
            j4 = result["variants"][mode]["J4_percent"][f"floor{i + 1}"]
            ax.plot(t_slow, lg["ns"]["displacement"][:, i] * 1e3, color=colour, lw=0.8, ls="--",
                    label=f"{label}: J4 = {j4:.2f} %")
        ax.set(ylabel=f"floor {i + 1} [mm]")
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(f"Reference vs hybrid response — {result['record']}, degrading Bouc–Wen columns")
    paths.append(_save(fig, out / "reference_vs_hybrid.png"))

    fig = Figure(figsize=(6.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(measured, main_logs["fast"]["force"].ravel() / 1e3, lw=0.6)
    ax.set(xlabel="measured displacement [mm]", ylabel="measured force [kN]",
           title="Physical specimen (first-storey column, degrading Bouc–Wen)")
    paths.append(_save(fig, out / "specimen_hysteresis.png"))

    fig = Figure(figsize=(10, 4.5))
    ax = fig.add_subplot(1, 1, 1)
    estimates = main_logs["update"]["estimate"]
    for i, name in enumerate(PARAM_NAMES):
        ax.plot(t_slow, estimates[:, i] / result["params_true"][name], label=_PARAM_LABELS[name])
    ax.axhspan(0.98, 1.02, color="grey", alpha=0.2, label="±2 %")
    ax.set(xlabel="time [s]", ylabel="estimate / true", title="Parameters identified by the UKF")
    ax.legend(loc="lower right")
    paths.append(_save(fig, out / "parameters.png"))

    shown = [m for m in ("none", "ukf") if m in logs] or [result["updating"]]
    fig = Figure(figsize=(12, 4.5))
    for k, mode in enumerate(shown):
        ax = fig.add_subplot(1, len(shown), k + 1)
        colour, label = _VARIANT_STYLE[mode]
        ax.plot(t_slow, ref[:, 2] * 1e3, color="k", lw=1.2, label="reference")
        ax.plot(t_slow, logs[mode]["ns"]["displacement"][:, 2] * 1e3, color=colour, lw=0.9, ls="--", label="hybrid")
        ax.set(xlabel="time [s]", ylabel="roof displacement [mm]",
               title=f"{label}: roof J4 = {result['variants'][mode]['J4_percent']['floor3']:.2f} %")
        ax.legend(loc="upper right")
    paths.append(_save(fig, out / "updating_vs_none.png"))
    return paths
