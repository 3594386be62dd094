"""One RTHS of an SDOF specimen as a pure function (θ, specimen) → J2, through the fused
engine (:func:`~rths_ident.hybrid.loop.engine.run_fused`), ``vmap``-able over specimens and
candidates and differentiable with ``jax.grad``.

The test (seed 003 §2.3, our partition): the SDOF prototype m ẍ + c ẋ + k x = −m ẍ_g
with the stiffness split into a numerical part (1 − α) k and a physical spring α k. The
numerical substructure integrates m, c and (1 − α) k with the explicit Newmark method
(γ = ½, β = 0; stable for ω Δt_n < 2, ω Δt_n ≤ 0.21 here) and sends the target
x_t = λ x (λ: the length scale lab/prototype, default 1/20, so the prototype's
displacements fit the actuator's ±2 in stroke). The fast side (rate transition →
compensator → Carrion–Spencer actuator with control–structure interaction → the lab
spring k_lab → sensors with the thesis' noise powers, or ideal ones) returns the lab force r_lab; the prototype sees
r = r_lab α k / (λ k_lab). No online identifier, no model updating.

J2 = sqrt(Σ (x_m − x_t)² / Σ x_t²) · 100 [%] over every fast sample (seed 000 Table 4.1,
:func:`rths_ident.metrics.j2_tracking_error`), accumulated inside the loop (the chunk's
log is reduced to two sums per slow step).

A run **fails** when an actuator limit (stroke, velocity, force) is hit or a state is
not finite; its J2 is then ``inf`` for the searches (never a small number).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.calibration.gains import GainSpace, gain_space
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS
from rths_ident.calibration.sample import Specimens
from rths_ident.datasets import load_ground_motion, resample_ground_motion
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side import sensors
from rths_ident.hybrid.loop.engine import LoopState, SlowStepFunctions, run_fused
from rths_ident.hybrid.fast_side.rate_transition import predictor_corrector
from rths_ident.estimators.registry import no_identifier
from rths_ident.hybrid.fast_side.fast_chunk import (
    FastSide,
    Strategy,
    fast_params,
    initial_fast_state,
    make_fast_chunk,
    make_identify,
)
from rths_ident.models import LinearElement, LinearParams


class StudySettings(NamedTuple):
    """The calibration test's settings (SI)."""

    record: str = "elcentro_1940"
    record_scale: float = 1.0  # 100 % of the ground motion (seed 003 §2.3 step 1)
    start: float = 0.0  # s: the window of the record used
    duration: float = 6.0  # s (default: the strong-motion part of El Centro; CLI says so)
    fast_rate: float = 4000.0  # Hz, Δt_e⁻¹ (the project's and AMB's filter design rate)
    slow_rate: float = 50.0  # Hz, Δt_n⁻¹
    length_scale: float = 0.05  # λ = lab / prototype displacement
    actuator_substeps: int = 1  # RK4 sub-steps per fast step
    sensor_noise: bool = True  # the thesis' LVDT and load-cell noise (one realisation for all runs)

    def check(self) -> "StudySettings":
        for name in ("duration", "fast_rate", "slow_rate", "length_scale"):
            if not getattr(self, name) > 0:
                raise ParameterError(f"calibration {name} = {getattr(self, name)!r}: expected a positive number")
        ratio = self.fast_rate / self.slow_rate
        if abs(ratio - round(ratio)) > 1e-9:
            raise ParameterError(f"calibration fast_rate/slow_rate = {ratio:g}: expected a whole number")
        return self


def slow_ground_motion(settings: StudySettings) -> np.ndarray:
    """ẍ_g [m/s²] at the end of each slow step of the window (t = Δt_n, 2Δt_n, …)."""
    t, ag = load_ground_motion(settings.record)
    dt = 1.0 / settings.slow_rate
    t, ag = resample_ground_motion(t, ag * settings.record_scale, dt)
    first = int(round(settings.start / dt))
    n = int(round(settings.duration / dt))
    if first + n >= len(t):
        raise ParameterError(f"calibration window start + duration = {settings.start + settings.duration:g} s: "
                             f"expected at most the record's {t[-1] - t[0]:g} s ({settings.record})")
    return ag[first + 1: first + n + 1]


class NSParams(NamedTuple):
    mass: jax.Array  # m [kg]
    damping: jax.Array  # c [N·s/m]
    stiffness: jax.Array  # numerical (1 − α) k [N/m]
    force_scale: jax.Array  # r = force_scale · r_lab
    length_scale: jax.Array  # λ


def ns_params(specimens: Specimens, length_scale: float) -> NSParams:
    """The numerical substructure of each specimen (arrays of shape (n,))."""
    m = jnp.asarray(specimens.mass)
    omega = 2.0 * np.pi / jnp.asarray(specimens.period)
    k = m * omega**2
    alpha = jnp.asarray(specimens.experimental_share)
    lam = jnp.full_like(m, length_scale)
    return NSParams(m, 2.0 * jnp.asarray(specimens.damping_ratio) * m * omega, (1.0 - alpha) * k,
                    alpha * k / (lam * jnp.asarray(specimens.lab_stiffness)), lam)


def make_ns_step(dt: float):
    """Explicit Newmark (γ = ½, β = 0) on the prototype; state (x_k, v_k^pred)."""

    def ns_step(p: NSParams, state, feedback, ground_accel):
        x, v_pred = state
        r = p.force_scale * feedback[0]
        a = (-p.mass * ground_accel - p.damping * v_pred - p.stiffness * x - r) / (p.mass + 0.5 * dt * p.damping)
        v = v_pred + 0.5 * dt * a
        x_next = x + dt * v + 0.5 * dt**2 * a
        target = jnp.reshape(p.length_scale * x_next, (1,))
        return (x_next, v + 0.5 * dt * a), target, {"x": x}

    return ns_step


class SDOFStudy(NamedTuple):
    """Everything the pure J2 function closes over (built once per compensator)."""

    settings: StudySettings
    space: GainSpace
    side: FastSide
    functions: SlowStepFunctions
    ground_accel: jax.Array
    template_fast_params: dict
    template_fast_state: dict


def _reduce_chunk(chunk):
    """The fast chunk with its log reduced to the J2 sums of the slow step."""

    def fast_chunk(fp, fs, target):
        fs, log, force = chunk(fp, fs, target)
        err = log["measured"] - log["target"]
        return fs, {"error2": jnp.sum(err**2), "target2": jnp.sum(log["target"] ** 2)}, force

    return fast_chunk


def build_study(kind: str, settings: StudySettings = StudySettings(),
                actuator: act.CarrionSpencerParams | None = None, actuator_step=act.actuator_step) -> SDOFStudy:
    """The study for compensator ``kind`` behind ``actuator`` (default: the shipped
    Carrion–Spencer actuator, Table 2.1 of seed 000). ``actuator_step``: the transfer
    system's step (:func:`~rths_ident.hybrid.fast_side.actuator.actuator_step` or any function of
    its shape, e.g. :func:`~rths_ident.hybrid.fast_side.actuator.ideal_actuator_step`)."""
    settings = settings.check()
    actuator = act.CarrionSpencerParams(substeps=settings.actuator_substeps) if actuator is None else actuator
    space = gain_space(kind, actuator.loop_gain())
    ratio = int(round(settings.fast_rate / settings.slow_rate))
    comp_params = COMPENSATORS[kind].default_params(settings.fast_rate, actuator.loop_gain())
    ideal = sensors.SensorParams()
    # the same noise realisation (seed 0) in every run: candidates are compared on common
    # random numbers, and the objective stays a smooth function of θ
    displacement, force = ((sensors.SensorParams.thesis_displacement(), sensors.SensorParams.thesis_force())
                           if settings.sensor_noise else (ideal, ideal))
    side = FastSide(
        fast_rate=settings.fast_rate, ratio=ratio,
        transition=Strategy(predictor_corrector, predictor_corrector.PredictorCorrectorParams(
            ratio=ratio, arrival_tick=ratio // 2)),
        transition_predicts_ahead=False, compensation=Strategy(space.module, comp_params),
        actuator_step=actuator_step, actuator=actuator, specimen_model=LinearElement,
        specimen=LinearParams(k=1.0e4), sensor_displacement=displacement, sensor_force=force,
        sensor_velocity=ideal, identifier=no_identifier(), identifier_every=1, sensor_noise=settings.sensor_noise)

    def hook(state, estimate, k):
        return state, jnp.asarray(False)

    functions = SlowStepFunctions(_reduce_chunk(make_fast_chunk(side)), make_identify(side), hook,
                                  lambda params, theta: params, make_ns_step(1.0 / settings.slow_rate))
    return SDOFStudy(settings, space, side, functions, jnp.asarray(slow_ground_motion(settings)),
                     fast_params(side), initial_fast_state(side, 0))


def specimen_arrays(study: SDOFStudy, specimens: Specimens) -> dict:
    """The per-specimen leaves the J2 function maps over (arrays of shape (n,))."""
    return {"ns": ns_params(specimens, study.settings.length_scale),
            "lab_stiffness": jnp.asarray(specimens.lab_stiffness),
            "kappa": jnp.asarray(specimens.initial_delay_factor)}


def run_one(study: SDOFStudy, theta, specimen: dict):
    """One test: θ (the gain space's vector) and one specimen (a slice of
    :func:`specimen_arrays`) → (J2 [%], failed: bool). Pure; ``vmap`` and ``grad`` it."""
    comp_params, comp_state = study.space.build(jnp.asarray(theta), specimen["kappa"],
                                                study.template_fast_params["compensation"],
                                                study.template_fast_state["compensation"])
    fp = dict(study.template_fast_params, compensation=comp_params,
              specimen=LinearParams(m=0.0, c=0.0, k=specimen["lab_stiffness"]))
    fs = dict(study.template_fast_state, compensation=comp_state)
    ns_state = (jnp.zeros(()), jnp.zeros(()))
    initial = LoopState(ns_state, fs, jnp.zeros(1), specimen["ns"], ())
    final, logs = run_fused(study.functions, fp, initial, study.ground_accel)
    error2, target2 = jnp.sum(logs["fast"]["error2"]), jnp.sum(logs["fast"]["target2"])
    j2 = 100.0 * jnp.sqrt(error2 / target2)
    limit_hit = final.fast_state["actuator"].limit_code != 0
    states_finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in
                                       jax.tree_util.tree_leaves(final.fast_state["actuator"][:5])]))
    failed = limit_hit | ~states_finite | ~jnp.isfinite(j2)
    return j2, failed


def make_batch_j2(study: SDOFStudy):
    """Jitted ``(thetas (P, d), specimens) -> (J2 (P, n) [%] with inf where failed, failed (P, n))``:
    a whole population over the whole sample in one compiled call."""

    def one(theta, specimen):
        j2, failed = run_one(study, theta, specimen)
        return jnp.where(failed, jnp.inf, j2), failed

    over_specimens = jax.vmap(one, in_axes=(None, 0))
    return jax.jit(jax.vmap(over_specimens, in_axes=(0, None)))


def score(j2: np.ndarray) -> np.ndarray:
    """The search objective per candidate: mean J2 over the specimens [%]; ``inf`` if any
    specimen's test failed (seed 003 minimises J2; a failed run can never look good)."""
    j2 = np.asarray(j2, dtype=float)
    return np.where(np.all(np.isfinite(j2), axis=-1), np.mean(np.where(np.isfinite(j2), j2, 0.0), axis=-1), np.inf)


def summary(j2: np.ndarray) -> dict:
    """mean / max J2 [%] over a sample (inf if any run failed) and the count of failures."""
    j2 = np.asarray(j2, dtype=float)
    return {"mean": float(np.mean(j2)) if np.all(np.isfinite(j2)) else float("inf"),
            "max": float(np.max(j2)), "failed": int(np.sum(~np.isfinite(j2)))}
