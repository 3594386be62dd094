"""One RTHS of an SDOF specimen as a pure function (θ, specimen) → J2, ``vmap``-able over
specimens and candidates and differentiable with ``jax.grad``: the ``sdof`` test
(:mod:`rths_ident.scenarios.sdof`, seed 003 §2.3) with its specimen and its compensator's
gains as the function's arguments.

The study (:class:`SDOFStudy`) holds the test's slow step as the runner compiles it — its
fast side, its numerical substructure (:mod:`rths_ident.structures.scaled_sdof`), its
record — built from the test file by :func:`rths_ident.scenarios.sdof_calibration.build_study`;
this module maps it over a population. No online identifier, no model updating.

J2 = sqrt(Σ (x_m − x_t)² / Σ x_t²) · 100 [%] over every fast sample (seed 000 Table 4.1,
:func:`rths_ident.metrics.j2_tracking_error`), accumulated inside the loop (the chunk's
log is reduced to two sums per slow step).

A run **fails** when an actuator limit (stroke, velocity, force) is hit or a state is
not finite; its J2 is then ``inf`` for the searches (never a small number).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.calibration.gains import GainSpace
from rths_ident.calibration.sample import Specimens
from rths_ident.hybrid.fast_side.fast_chunk import FastSide
from rths_ident.hybrid.loop.engine import SlowStepFunctions, run_fused
from rths_ident.models import LinearParams
from rths_ident.structures.scaled_sdof import scaled_sdof_params


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


class SDOFStudy(NamedTuple):
    """Everything the pure J2 function closes over (built once per compensator)."""

    settings: StudySettings
    space: GainSpace
    side: FastSide
    functions: SlowStepFunctions  # the test's slow step, its fast chunk's log reduced (reduce_chunk)
    ground_accel: jax.Array
    template_fast_params: dict
    template_fast_state: dict
    initial: Any  # the test's LoopState at rest (its NS state, first target and hook)


def reduce_chunk(chunk):
    """The fast chunk with its log reduced to the J2 sums of the slow step."""

    def fast_chunk(fp, fs, target):
        fs, log, force = chunk(fp, fs, target)
        err = log["measured"] - log["target"]
        return fs, {"error2": jnp.sum(err**2), "target2": jnp.sum(log["target"] ** 2)}, force

    return fast_chunk


def specimen_arrays(study: SDOFStudy, specimens: Specimens) -> dict:
    """The per-specimen leaves the J2 function maps over (arrays of shape (n,))."""
    ns = scaled_sdof_params(specimens.mass, specimens.period, specimens.damping_ratio, specimens.experimental_share,
                            specimens.lab_stiffness, study.settings.length_scale)
    return {"ns": ns,
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
    initial = study.initial._replace(fast_state=fs, ns_params=specimen["ns"])
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
