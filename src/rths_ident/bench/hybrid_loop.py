"""Speed of the virtual RTHS loop (``rths-ident bench``), measured side by side.

* the flagship ``lugre-frame`` through the fused engine (one compiled ``lax.scan``) and
  the step-wise engine (one jitted slow step per Python call) — ratio and real-time
  factors;
* batch throughput: the fused loop ``vmap``-ed over a batch of uncertain specimens
  (column parameters scattered ±20 %), in specimen-seconds simulated per wall second;
* the cost of each fast-side component per fast step, each in its own ``lax.scan``.

Compilation is excluded (ahead-of-time compile, then best-of-``repeats`` timings).
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.hybrid import actuator as act
from rths_ident.hybrid import sensors
from rths_ident.hybrid.engine import run_fused
from rths_ident.hybrid.hybrid_test import (
    compiled_fused_runner,
    initial_loop_state,
    run_loop,
    slow_step_functions,
)
from rths_ident.hybrid.scenarios import lugre_frame as lf
from rths_ident.hybrid.virtual_site import fast_params as fast_side_params
from rths_ident.hybrid.virtual_site import initial_fast_state
from rths_ident.models import ElementInputs, ModifiedLuGre


def _best(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def engines(duration: float | None = None, repeats: int = 2, stepwise_duration: float | None = None) -> dict:
    """Fused vs step-wise on the flagship (``duration`` s of El Centro; None = all of it)."""
    cfg = lf.LugreFrameConfig(duration=duration)
    built = lf.build(cfg)
    initial = initial_loop_state(built)
    ag = jnp.asarray(built.ground_accel)
    params = fast_side_params(built.fast_side)
    fused = compiled_fused_runner(built, initial)
    fused_s = _best(lambda: fused(params, initial, ag), repeats)
    # step-wise on a shorter stretch if asked (it is the slow path): the site and the
    # native NS behind their protocols, compiled by a first run
    sw_built = built if stepwise_duration is None else built._replace(
        ground_accel=built.ground_accel[: int(round(stepwise_duration * cfg.slow_rate))],
        time_slow=built.time_slow[: int(round(stepwise_duration * cfg.slow_rate))])
    run_loop(sw_built._replace(ground_accel=sw_built.ground_accel[:2]), "stepwise")  # compile
    sw_s = min(run_loop(sw_built, "stepwise")[1] for _ in range(max(1, repeats - 1)))
    sim_fused = float(built.time_slow[-1])
    sim_sw = float(sw_built.time_slow[-1])
    return {
        "duration_s": sim_fused,
        "fused_wall_s": fused_s,
        "fused_realtime_factor": sim_fused / fused_s,
        "stepwise_duration_s": sim_sw,
        "stepwise_wall_s": sw_s,
        "stepwise_realtime_factor": sim_sw / sw_s,
        "fused_over_stepwise": (sim_fused / fused_s) / (sim_sw / sw_s),
        "fast_steps_per_s_fused": sim_fused * cfg.fast_rate / fused_s,
    }


def batch(n_specimens: int = 16, duration: float = 5.0, repeats: int = 2, seed: int = 0) -> dict:
    """The fused loop vmap-ed over ``n_specimens`` columns with scattered parameters."""
    cfg = lf.LugreFrameConfig(duration=duration)
    built = lf.build(cfg)
    initial = initial_loop_state(built)
    ag = jnp.asarray(built.ground_accel)
    base_params = fast_side_params(built.fast_side)
    rng = np.random.default_rng(seed)
    scatter = rng.uniform(0.8, 1.2, size=(n_specimens, 3))
    spec = base_params["specimen"]
    specimens = dataclasses.replace(spec)  # validated copy, then batched leaves below
    specimens = jax.tree_util.tree_map(lambda leaf: jnp.full((n_specimens,), leaf), specimens)
    specimens = dataclasses.replace(
        spec, sigma0=spec.sigma0 * scatter[:, 0], Fc=spec.Fc * scatter[:, 1], sigma3=spec.sigma3 * scatter[:, 2],
        sigma1=specimens.sigma1, sigma2=specimens.sigma2,
    )
    fast_params = dict(base_params, specimen=specimens)
    axes = jax.tree_util.tree_map(lambda _: None, base_params)
    axes["specimen"] = jax.tree_util.tree_map(lambda _: 0, spec)
    # the actuator state holds the specimen state: batch the whole initial state too
    initial_b = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (n_specimens,) + jnp.shape(leaf)), initial)
    runner = jax.jit(jax.vmap(lambda fp, st: run_fused(slow_step_functions(built), fp, st, ag), in_axes=(axes, 0)))
    compiled = runner.lower(fast_params, initial_b).compile()
    wall = _best(lambda: compiled(fast_params, initial_b), repeats)
    single = compiled_fused_runner(built, initial)
    wall_single = _best(lambda: single(base_params, initial, ag), repeats)
    sim = float(built.time_slow[-1])
    return {
        "n_specimens": n_specimens,
        "duration_s": sim,
        "batch_wall_s": wall,
        "single_wall_s": wall_single,
        "specimen_seconds_per_wall_second": n_specimens * sim / wall,
        "batch_speedup_over_sequential": n_specimens * wall_single / wall,
    }


def components(n_steps: int = 8000, repeats: int = 3) -> dict:
    """Microseconds per fast step of each fast-side component (own ``lax.scan`` each)."""
    cfg = lf.LugreFrameConfig(duration=1.0)
    built = lf.build(cfg)
    fp, fs = fast_side_params(built.fast_side), initial_fast_state(built.fast_side, cfg.seed)
    dt = 1.0 / cfg.fast_rate
    t = jnp.arange(n_steps) * dt
    x = 0.04 * jnp.sin(2 * np.pi * 1.0 * t) * t / t[-1]
    v = jnp.gradient(x) / dt
    spec = fp["specimen"]
    _, force = jax.lax.scan(lambda s, i: ModifiedLuGre.step(spec, s, i, dt), ModifiedLuGre.init(spec),
                            ElementInputs(x, v))
    from rths_ident.estimators import lugre_identifier  # noqa: PLC0415
    from rths_ident.hybrid.compensation import CompensatorInputs, damb  # noqa: PLC0415

    transfer = act.TransferSystemParams(actuator=fp["actuator"], specimen=spec, specimen_model=ModifiedLuGre)
    cases = {
        "specimen (modified LuGre step)": lambda: jax.lax.scan(
            lambda s, i: ModifiedLuGre.step(spec, s, i, dt), ModifiedLuGre.init(spec), ElementInputs(x, v)),
        "actuator + specimen (RK4)": lambda: jax.lax.scan(
            lambda s, i: act.actuator_step(transfer, s, i, dt), fs["actuator"], act.ActuatorInputs(x)),
        "sensor channel": lambda: jax.lax.scan(
            lambda s, i: sensors.sensor_step(fp["sensor_displacement"], s, i, dt), fs["sensor_displacement"],
            sensors.SensorInputs(x)),
        "dAMB compensation": lambda: jax.lax.scan(
            lambda s, i: damb.step(damb.DAMBParams(), s, i, dt), damb.init(damb.DAMBParams()),
            CompensatorInputs(x, 0.99 * x)),
        "LuGre identifier (constrained RLS)": lambda: jax.lax.scan(
            lambda s, a: lugre_identifier.step(fp["identifier"], s, a[0], a[1], a[2], dt), fs["identifier"],
            (x, v, force)),
    }
    out = {}
    for name, fn in cases.items():
        compiled = jax.jit(fn).lower().compile()
        out[name] = 1e6 * _best(compiled, repeats) / n_steps
    return out
