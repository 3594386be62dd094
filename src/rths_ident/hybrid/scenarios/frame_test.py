"""A virtual hybrid test of seed 001's frame with one first-storey column tested.

The machinery shared by the ``lugre-frame`` and ``bw-frame`` scenarios: what differs
between them — the column model, its identifier and how identified values map onto the
numerical columns — is described by a :class:`ColumnUnderTest`; everything else is here:

* the monolithic reference (the whole frame, true columns, α-OS at Δt_n);
* the numerical substructure (the frame without its right-most first-storey column,
  initial-guess columns, the frame's Rayleigh C kept whole; see
  :mod:`rths_ident.structures.partition`);
* the fast side: rate transition → compensation → transfer system + specimen → sensors
  → identifier (every ``identifier_every`` fast steps);
* the model-updating hook and the NS step (corrector with the ZOH force + predictor);
* running the three variants (identify-and-update, ``none``, ``oracle``) through one
  compiled loop, their metrics, and the result dictionary of ``rths-ident run``.

Modelling choices common to both scenarios: the load cell reads the specimen's restoring
force (the actuator's oil-column damping is on the actuator side); the identifier's
velocity comes from a velocity transducer (actuator velocity + band-limited noise), and
with noisy sensors its displacement is that velocity integrated at the fast rate (the
LVDT reading, with its white noise, drives the compensator);
DDMRT predicts the NS target one slow step ahead (the NS answer is one slow step late),
the predictor–corrector receives it at ``arrival_fraction`` of the slow step.
"""

from __future__ import annotations

import dataclasses
import time as _time
from typing import Any, Callable, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import metrics
from rths_ident._params import ParameterError
from rths_ident.datasets import load_ground_motion, resample_ground_motion
from rths_ident.hybrid import actuator as act
from rths_ident.hybrid import sensors
from rths_ident.hybrid.compensation import amb, damb, polynomial
from rths_ident.hybrid.engine import (
    LoopState,
    SlowStepFunctions,
    make_fused_runner,
    make_slow_stepper,
    run_stepwise,
)
from rths_ident.hybrid.model_updating import UpdateGuards, hook_init, hook_step
from rths_ident.hybrid.rate_transition import ddmrt, predictor_corrector, wiener
from rths_ident.structures import AlphaOS, partition_column, set_column_params, three_storey_two_bay_frame
from rths_ident.structures.structure import with_changes

COMPENSATIONS = ("damb", "amb", "polynomial", "none")
TRANSITIONS = ("predictor-corrector", "ddmrt")
TRANSFER_SYSTEMS = ("carrion-spencer", "ideal")
COMPARISON_MODES = ("none", "oracle")


@dataclasses.dataclass(frozen=True)
class FrameTestConfig:
    """Settings every frame scenario shares (SI units). Scenarios subclass it, set
    ``SCENARIO``/``UPDATING_MODES``/``IDENTIFYING_MODES`` and add their column fields."""

    SCENARIO: ClassVar[str] = "frame-test"
    UPDATING_MODES: ClassVar[tuple] = ("none", "oracle")
    IDENTIFYING_MODES: ClassVar[tuple] = ()

    record: str = "elcentro_1940"
    floor_mass: float | None = None  # kg per floor
    record_scale: float = 1.0
    duration: float | None = None  # s of the record to run; None = all of it
    fast_rate: float = 4000.0  # Hz
    slow_rate: float = 50.0  # Hz
    updating: str = "none"
    compensation: str = "damb"
    transition: str = "predictor-corrector"
    arrival_fraction: float = 0.5  # predictor–corrector: the NS answer arrives after this share of Δt_n
    sensor_noise: bool = True
    seed: int = 123
    rayleigh_zeta: float = 0.05
    update_after: float = 0.2  # s: the hook holds the initial model this long
    transfer_system: str = "carrion-spencer"  # or "ideal": the specimen follows the command exactly
    actuator_substeps: int = 1  # RK4 sub-steps per fast step (1 is within ~1e-8 of a fine solve at 4 kHz)
    # Hz; None = auto: the lowest rate ≥ 1 kHz that divides the fast rate into a whole
    # number of samples per slow step (1 kHz at 4000/50 Hz).
    identifier_rate: float | None = None
    minimum_identifier_rate: ClassVar[float] = 0.0

    def bad(self, field: str, expected: str):
        raise ParameterError(f"{self.SCENARIO} {field} = {getattr(self, field)!r}: expected {expected}")

    def __post_init__(self):
        if self.updating not in self.UPDATING_MODES:
            self.bad("updating", " | ".join(self.UPDATING_MODES))
        if self.compensation not in COMPENSATIONS:
            self.bad("compensation", " | ".join(COMPENSATIONS))
        if self.transition not in TRANSITIONS:
            self.bad("transition", " | ".join(TRANSITIONS))
        if self.transfer_system not in TRANSFER_SYSTEMS:
            self.bad("transfer_system", " | ".join(TRANSFER_SYSTEMS))
        if not (self.fast_rate > 0 and self.slow_rate > 0):
            self.bad("fast_rate", "positive rates in Hz (fast and slow)")
        ratio = self.fast_rate / self.slow_rate
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise ParameterError(
                f"{self.SCENARIO} fast_rate/slow_rate = {ratio:g} must be a whole number ≥ 1 "
                f"(got fast {self.fast_rate:g} Hz, slow {self.slow_rate:g} Hz)"
            )
        if self.duration is not None and not self.duration > 0:
            self.bad("duration", "a positive number of seconds")
        if self.floor_mass is not None and not (np.isfinite(self.floor_mass) and self.floor_mass > 0):
            self.bad("floor_mass", "a positive mass in kg")
        if not (np.isfinite(self.record_scale) and self.record_scale > 0):
            self.bad("record_scale", "a finite positive factor")
        if not (0.0 <= self.arrival_fraction < 1.0):
            self.bad("arrival_fraction", "a fraction in [0, 1)")
        if not (0.0 <= self.rayleigh_zeta < 1.0):
            self.bad("rayleigh_zeta", "a damping ratio in [0, 1)")
        if not (self.update_after >= 0.0):
            self.bad("update_after", "a time ≥ 0 s")
        if not isinstance(self.actuator_substeps, int) or self.actuator_substeps < 1:
            self.bad("actuator_substeps", "an integer ≥ 1")
        if self.identifier_rate is not None:
            every = self.fast_rate / self.identifier_rate if self.identifier_rate > 0 else np.inf
            if not (self.identifier_rate >= self.minimum_identifier_rate and abs(every - round(every)) < 1e-9
                    and ratio % round(every) == 0):
                raise ParameterError(
                    f"{self.SCENARIO} identifier_rate = {self.identifier_rate!r} Hz must be "
                    + (f"≥ {self.minimum_identifier_rate:g} Hz and " if self.minimum_identifier_rate else "")
                    + f"divide the fast rate {self.fast_rate:g} Hz into a whole number of samples that "
                    f"divides the {round(ratio)} fast steps of a slow step"
                )

    @property
    def ratio(self) -> int:
        """Fast steps per slow step, Δt_n/Δt_e."""
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
        """Floor mass [kg] (scenarios may derive it from the record)."""
        return float(self.floor_mass)


class Identifier(NamedTuple):
    """An online identifier as the loop sees it (static functions + its numbers).

    ``step(params, state, x, v, measured_force, dt) -> state``;
    ``estimate(params, state) -> (θ̂ (p,), relative std (p,), converged)``;
    ``extra_log(params, state) -> dict`` (logged every slow step, may be empty).
    """

    name: str
    params: Any
    initial_state: Any
    step: Callable
    estimate: Callable
    extra_log: Callable = lambda params, state: {}
    has_covariance: bool = False


class ColumnUnderTest(NamedTuple):
    """What a frame scenario specifies about its columns (module doc)."""

    model: type  # element model class
    true_column: Any  # Params of every true column (reference, specimen's model numbers)
    initial_column: Any  # Params of the NS columns' initial guess
    specimen: Any  # Params used for the physical specimen (e.g. finer sub-steps)
    param_names: tuple  # names of the identified parameters, in θ̂ order
    identifier: Identifier
    with_estimate: Callable  # θ̂ -> column Params (traceable; pushed into every NS column)
    interface_stiffness: Callable  # θ̂ -> the tested column's initial stiffness [N/m] (α-OS K^l)
    guards: UpdateGuards
    actuator: Any  # CarrionSpencerParams
    extra_metrics: Callable = lambda update_logs: {}


class Built(NamedTuple):
    """Everything a run needs, built once (static parts and arrays)."""

    config: Any
    column: ColumnUnderTest
    time_slow: np.ndarray  # t_1 … t_N [s]
    ground_accel: np.ndarray  # ẍ_g at t_1 … t_N [m/s²]
    integrator: Any  # AlphaOS of the numerical substructure
    ns_params: Any  # StructureParams with the initial guess
    ns_params_true: Any  # StructureParams with the true columns (oracle)
    reference_integrator: Any
    reference_params: Any
    functions: SlowStepFunctions
    fast_params: dict
    initial_fast_state: dict

    @property
    def true_column(self):
        return self.column.true_column

    @property
    def initial_column(self):
        return self.column.initial_column


# --------------------------------------------------------------------------------------
# small shared pieces
# --------------------------------------------------------------------------------------
def read_channel(sensor_params, noisy_value):
    """ADC of a channel whose noise was already added (quantization if configured)."""
    if sensor_params.adc_bits > 0:
        return sensors.quantize(noisy_value, sensor_params.adc_full_scale, sensor_params.adc_bits)
    return noisy_value


def finite_or_none(value: float):
    return float(value) if np.isfinite(value) else None


def slow_record(cfg: FrameTestConfig):
    """The ground motion at the slow rate: (t_1 … t_N [s], ẍ_g [m/s²])."""
    t, ag = load_ground_motion(cfg.record)
    ag = ag * cfg.record_scale
    dt_slow = 1.0 / cfg.slow_rate
    if abs((t[1] - t[0]) - dt_slow) > 1e-12:
        t, ag = resample_ground_motion(t, ag, dt_slow)
    if cfg.duration is not None:
        n = int(round(cfg.duration / dt_slow)) + 1
        if n > len(t):
            raise ParameterError(
                f"{cfg.SCENARIO} duration = {cfg.duration:g} s is longer than the record {cfg.record!r} "
                f"({t[-1] - t[0]:g} s)"
            )
        t, ag = t[:n], ag[:n]
    return t[1:] - t[0], ag[1:]


def ddmrt_weights(integrator, ns_params, ground_accel, dt_slow):
    """DDMRT's Wiener predictor from an approximate realisation (seed 000 Eq. 3.5): the
    NS alone (the *initial* model with the specimen column's initial-guess stiffness as a
    linear spring) under the record itself."""
    k_interface = ns_params.interface_stiffness
    linear = with_changes(ns_params, linear_stiffness=ns_params.linear_stiffness + k_interface)
    state = integrator.init(linear, dt_slow, check_stability=False)
    _, out = integrator.simulate(linear, ground_accel, dt_slow, state=state)
    realisation = np.asarray(out.displacement[:, 0])
    n_window = int(min(2000, len(realisation) - 9))
    return wiener.wiener_coefficients(realisation, 8, 1e-10, n_window)


def make_compensation(cfg: FrameTestConfig, actuator_params):
    """(module, params) of the configured compensator, or (None, None)."""
    if cfg.compensation == "damb":
        return damb, damb.DAMBParams(filter_sample_rate=cfg.fast_rate)
    if cfg.compensation == "amb":
        return amb, amb.AMBParams(filter_sample_rate=cfg.fast_rate)
    if cfg.compensation == "polynomial":
        return polynomial, polynomial.PolynomialExtrapolationParams(delay=1.0 / actuator_params.loop_gain())
    return None, None


def make_transition(cfg: FrameTestConfig, integrator, ns_params, ground_accel):
    """(module, params) of the configured rate transition."""
    ratio = cfg.ratio
    if cfg.transition == "ddmrt":
        weights = ddmrt_weights(integrator, ns_params, ground_accel, 1.0 / cfg.slow_rate)
        return ddmrt, ddmrt.DDMRTParams(weights=weights, ratio=ratio)
    arrival = int(round(cfg.arrival_fraction * ratio)) if ratio > 1 else 0
    return predictor_corrector, predictor_corrector.PredictorCorrectorParams(
        ratio=ratio, arrival_tick=min(arrival, ratio - 1))


def make_sensors(cfg: FrameTestConfig):
    """(displacement, force, velocity) channels: the thesis noise powers, or ideal."""
    if not cfg.sensor_noise:
        ideal = sensors.SensorParams()
        return ideal, ideal, ideal
    displacement = sensors.SensorParams.thesis_displacement()
    force = sensors.SensorParams.thesis_force()
    # velocity transducer: the displacement channel's relative noise level at 1 Hz
    velocity = sensors.SensorParams(noise_power=float(displacement.noise_power) * (2 * np.pi) ** 2)
    return displacement, force, velocity


# --------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------
def build(cfg: FrameTestConfig, column: ColumnUnderTest) -> Built:
    """Reference, partitioned NS, fast side and hook for ``column`` under ``cfg``."""
    time_slow, ground_accel = slow_record(cfg)
    dt_slow, dt_fast, ratio = 1.0 / cfg.slow_rate, 1.0 / cfg.fast_rate, cfg.ratio
    model = column.model

    true_frame = three_storey_two_bay_frame(cfg.mass, model, column.true_column)
    damping = true_frame.rayleigh_damping(cfg.rayleigh_zeta, (1, 2))[0]
    ref_structure, ref_params = true_frame.to_structure(damping=damping)
    reference_integrator = AlphaOS(ref_structure)
    guess_frame = three_storey_two_bay_frame(cfg.mass, model, column.initial_column)
    part = partition_column(guess_frame, storey=1, column=-1, damping=damping)
    integrator = AlphaOS(part.structure)
    ns_params = part.params
    ns_params_true = partition_column(true_frame, storey=1, column=-1, damping=damping).params

    comp_module, comp_params = make_compensation(cfg, column.actuator)
    tr_module, tr_params = make_transition(cfg, integrator, ns_params, ground_accel)
    disp_sensor, force_sensor, vel_sensor = make_sensors(cfg)
    identifier = column.identifier
    id_every = cfg.identifier_every
    actuator_step = act.ideal_actuator_step if cfg.transfer_system == "ideal" else act.actuator_step

    fast_params = {
        "actuator": column.actuator,
        "specimen": column.specimen,
        "compensation": comp_params,
        "transition": tr_params,
        "sensor_displacement": disp_sensor,
        "sensor_force": force_sensor,
        "sensor_velocity": vel_sensor,
        "identifier": identifier.params,
    }
    keys = jax.random.split(jax.random.PRNGKey(cfg.seed), 3)
    initial_fast_state = {
        "actuator": act.actuator_init(column.actuator, model, column.specimen),
        "compensation": comp_module.init(comp_params) if comp_module is not None else (),
        "transition": tr_module.init(tr_params),
        "sensor_displacement": sensors.sensor_init(disp_sensor, keys[0]),
        "sensor_force": sensors.sensor_init(force_sensor, keys[1]),
        "sensor_velocity": sensors.sensor_init(vel_sensor, keys[2]),
        "identifier": identifier.initial_state,
        "measured_displacement": jnp.zeros(()),
        "identifier_displacement": jnp.zeros(()),
        "identifier_velocity": jnp.zeros(()),
        "previous_target": jnp.zeros(()),
    }

    def fast_chunk(fp, fs, target):
        # DDMRT: the NS answer of this step is not known yet; it predicts it from the
        # targets received so far (the previous one is the newest it has).
        newest = fs["previous_target"] if cfg.transition == "ddmrt" else target
        tr_state, tr_out = tr_module.step(fp["transition"], fs["transition"], newest)
        # sensor noise for the whole chunk in one draw per channel (same statistics as
        # one draw per sample; much cheaper inside the compiled loop)
        zeros = jnp.zeros(ratio)
        sd, noise_x = sensors.sensor_step(fp["sensor_displacement"], fs["sensor_displacement"], zeros, dt_fast)
        sf, noise_f = sensors.sensor_step(fp["sensor_force"], fs["sensor_force"], zeros, dt_fast)
        sv, noise_v = sensors.sensor_step(fp["sensor_velocity"], fs["sensor_velocity"], zeros, dt_fast)

        def fast_step(carry, inputs):
            x_target, nx, nf, nv, tick = inputs
            if comp_module is not None:
                comp_state, x_command = comp_module.step(
                    fp["compensation"], carry["compensation"], x_target, carry["measured_displacement"], dt_fast)
            else:
                comp_state, x_command = (), x_target
            act_state, out = actuator_step(fp["actuator"], model, fp["specimen"], carry["actuator"], x_command,
                                           dt_fast)
            x_m = read_channel(fp["sensor_displacement"], out["x_measured"] + nx)
            f_m = read_channel(fp["sensor_force"], out["restoring_force"] + nf)
            v_m = read_channel(fp["sensor_velocity"], out["v"] + nv)
            # the identifier's displacement: with noisy sensors, the velocity channel
            # integrated at the fast rate (trapezoid) — its noise integrates to ~1e-6 m over
            # a record, while the LVDT's white noise adds spurious |Δx| travel (~σ_x per
            # sample) that biases hysteretic observers (lugre-frame on Kobe: σ3 6 % off
            # with the LVDT signal); with ideal sensors, the LVDT itself.
            if cfg.sensor_noise:
                x_id = carry["identifier_displacement"] + 0.5 * (carry["identifier_velocity"] + v_m) * dt_fast
            else:
                x_id = x_m
            if id_every == 1:
                id_state = identifier.step(fp["identifier"], carry["identifier"], x_id, v_m, f_m, dt_fast)
            else:  # the identifier samples every id_every-th fast step (one branch runs)
                id_state = jax.lax.cond(
                    tick % id_every == id_every - 1,
                    lambda s: identifier.step(fp["identifier"], s, x_id, v_m, f_m, dt_fast * id_every),
                    lambda s: s, carry["identifier"])
            new = dict(carry, compensation=comp_state, actuator=act_state, identifier=id_state,
                       measured_displacement=x_m, identifier_displacement=x_id, identifier_velocity=v_m)
            log = {"target": x_target, "command": x_command, "measured": x_m, "force": f_m,
                   "true_force": out["restoring_force"], "limit": out["limit_code"]}
            return new, log

        carry = dict(fs, transition=tr_state, previous_target=jnp.asarray(target, jnp.float64),
                     sensor_displacement=sd, sensor_force=sf, sensor_velocity=sv)
        carry, log = jax.lax.scan(fast_step, carry, (tr_out.samples, noise_x, noise_f, noise_v, jnp.arange(ratio)))
        return carry, log, log["force"][-1]  # ZOH: the force measured at the end of the slow step

    structure = part.structure

    def apply_estimate(params, estimate):
        """Push θ̂ into every numerical column; the α-OS splitting stiffness of the
        interface follows the identified initial stiffness."""
        params = set_column_params(structure, params, model, column.with_estimate(estimate))
        k_interface = jnp.zeros_like(params.interface_stiffness).at[0, 0].set(column.interface_stiffness(estimate))
        return with_changes(params, interface_stiffness=k_interface)

    def update(ns_p, hook, fs, feedback, k):
        hook_state, hook_guards = hook
        estimate, relative_std, converged = identifier.estimate(identifier.params, fs["identifier"])
        hook_state, ns_p, applied = hook_step(hook_guards, hook_state, ns_p, estimate, relative_std, converged,
                                              (k + 1) * dt_slow, k, apply_estimate)
        log = {"applied": applied, "estimate": estimate, "relative_std": relative_std}
        log.update(identifier.extra_log(identifier.params, fs["identifier"]))
        return ns_p, (hook_state, hook_guards), log

    def ns_step(ns_p, ns_state, feedback, ag):
        force = jnp.zeros(3).at[0].set(feedback)
        ns_state, target, out = integrator.step_and_predict(ns_p, ns_state, ag, force, dt_slow)
        return ns_state, target[0], {"displacement": out.displacement, "velocity": out.velocity,
                                     "acceleration": out.acceleration}

    return Built(cfg, column, time_slow, ground_accel, integrator, ns_params, ns_params_true,
                 reference_integrator, ref_params, SlowStepFunctions(fast_chunk, ns_step, update), fast_params,
                 initial_fast_state)


def _values(column_params, names):
    return [float(getattr(column_params, n)) for n in names]


def initial_loop_state(built: Built, updating: str | None = None) -> LoopState:
    """Initial loop state for ``updating`` (default: the config's). The comparison modes
    keep the hook frozen for ever (``freeze_until_s = inf``); ``oracle`` starts the NS
    from the true column parameters. All share the loop compiled for the config."""
    cfg = built.config
    updating = cfg.updating if updating is None else updating
    if updating not in cfg.UPDATING_MODES:
        raise ParameterError(f"updating = {updating!r}: expected one of {', '.join(cfg.UPDATING_MODES)}")
    if updating in cfg.IDENTIFYING_MODES and updating != cfg.updating:
        raise ParameterError(f"this loop was built with the {cfg.updating!r} identifier; build another for "
                             f"{updating!r}")
    dt_slow = 1.0 / cfg.slow_rate
    oracle = updating == "oracle"
    ns_params = built.ns_params_true if oracle else built.ns_params
    column = built.column.true_column if oracle else built.column.initial_column
    ns_init = _cached("ns_init", built, lambda: jax.jit(lambda p: built.integrator.init(p, dt_slow)))
    ns_state = ns_init(ns_params)  # α-OS is unconditionally stable: no time-step check to skip
    target = built.integrator.predicted_displacement(ns_params, ns_state, dt_slow)[0]
    hook_state = hook_init(_values(column, built.column.param_names))
    guards = built.column.guards
    if updating not in cfg.IDENTIFYING_MODES:
        guards = dataclasses.replace(guards, freeze_until_s=np.inf)
    return LoopState(ns_state, built.initial_fast_state, jnp.asarray(target), ns_params, (hook_state, guards))


_CACHE: dict = {}


def _cache_key(kind, built: Built):
    # the variants (identifier on/off, oracle) share one compiled loop per identifier
    identifying = built.config.updating if built.config.updating in built.config.IDENTIFYING_MODES else None
    return (kind, dataclasses.replace(built.config, updating=identifying or built.config.IDENTIFYING_MODES[0]))


def _cached(kind, built, make):
    key = _cache_key(kind, built)
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def compiled_fused_runner(built: Built, initial: LoopState | None = None):
    """The fused loop compiled ahead of time for this configuration (cached)."""
    def make():
        start = initial_loop_state(built) if initial is None else initial
        return make_fused_runner(built.functions).lower(built.fast_params, start,
                                                        jnp.asarray(built.ground_accel)).compile()
    return _cached("fused", built, make)


def slow_stepper(built: Built):
    """The jitted single slow step of the step-wise engine (cached)."""
    return _cached("stepwise", built, lambda: make_slow_stepper(built.functions))


def simulate_reference(built: Built):
    """Monolithic frame with the true columns: floor displacements (N, 3) [m] and the
    tested column's force [N] (the last column of storey 1)."""
    dt_slow = 1.0 / built.config.slow_rate
    integ = built.reference_integrator

    def reference(params, ground_accel):
        _, out = integ.simulate(params, ground_accel, dt_slow, state=integ.init(params, dt_slow))
        return out.displacement, out.column_forces[0][:, -1]

    floors, column_force = _cached("reference", built, lambda: jax.jit(reference))(
        built.reference_params, jnp.asarray(built.ground_accel))
    return np.asarray(floors), np.asarray(column_force)


def run_loop(built: Built, engine: str = "fused", updating: str | None = None, progress=None):
    """Run the hybrid loop; returns (final LoopState, logs as NumPy, wall seconds of the
    run alone — the fused loop is compiled beforehand)."""
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
        stepper = slow_stepper(built)

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
# metrics and the whole scenario (what `rths-ident run` does)
# --------------------------------------------------------------------------------------
class VariantResult(NamedTuple):
    """One run of the loop (one updating mode) with its metrics."""

    updating: str
    metrics: dict
    logs: dict
    wall_s: float


def variant_metrics(built: Built, logs: dict, reference_floors, reference_force) -> dict:
    cfg, column = built.config, built.column
    names = column.param_names
    floors = np.asarray(logs["ns"]["displacement"])
    target = np.asarray(logs["fast"]["target"]).ravel()
    measured = np.asarray(logs["fast"]["measured"]).ravel()
    force_slow = np.asarray(logs["fast"]["force"])[:, -1]
    estimates = np.asarray(logs["update"]["estimate"])
    true = np.array(_values(column.true_column, names))
    final = estimates[-1]
    out = {
        "J2_percent": float(metrics.j2_tracking_error(target, measured)),
        "J4_percent": {f"floor{i + 1}": float(metrics.j4_global_error(reference_floors[:, i], floors[:, i]))
                       for i in range(3)},
        "J4_force_percent": float(metrics.j4_global_error(reference_force, force_slow)),
        "tau_ms": float(metrics.fei_delay(target, measured, cfg.fast_rate) * 1e3),
        "params_final": dict(zip(names, map(float, final))),
        "param_error_percent": dict(zip(names, map(float, 100 * np.abs(final / true - 1)))),
        "convergence_time_s": {
            name: finite_or_none(metrics.convergence_time(built.time_slow, estimates[:, i], true[i], tol=0.02))
            for i, name in enumerate(names)
        },
        "updates_applied": int(np.sum(logs["update"]["applied"])),
        "actuator_limit_code": int(np.max(logs["fast"]["limit"])),
    }
    if column.identifier.has_covariance:
        out["param_std_percent"] = dict(zip(names, map(float, 100 * np.asarray(logs["update"]["relative_std"])[-1])))
    out.update(column.extra_metrics(logs["update"]))
    return out


def run_scenario(cfg: FrameTestConfig, build_scenario: Callable, engine: str = "fused", compare: bool = True,
                 progress=None) -> dict:
    """Run the configured variant and (``compare``) ``none`` and ``oracle`` for the
    side-by-side plots. Returns the JSON keys of ``rths-ident run`` (for the configured
    variant), ``variants`` (metrics of each) and ``_arrays`` (what the plots need)."""
    start_all = _time.perf_counter()
    built = build_scenario(cfg)
    reference_floors, reference_force = simulate_reference(built)
    order = [cfg.updating] + ([m for m in COMPARISON_MODES if m != cfg.updating] if compare else [])
    results = {}
    for mode in order:
        _, logs, wall = run_loop(built, engine, updating=mode, progress=progress if mode == cfg.updating else None)
        results[mode] = VariantResult(mode, variant_metrics(built, logs, reference_floors, reference_force),
                                      logs, wall)
    main = results[cfg.updating]
    names = built.column.param_names
    duration = float(built.time_slow[-1])
    out = dict(main.metrics)
    out.update({
        "scenario": cfg.SCENARIO,
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
        "params_true": dict(zip(names, _values(built.column.true_column, names))),
        "params_initial": dict(zip(names, _values(built.column.initial_column, names))),
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
