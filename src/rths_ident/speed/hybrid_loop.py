"""Speed of the virtual RTHS loop (``rths-ident bench``), measured side by side.

* the flagship ``lugre-frame`` through the fused engine (one compiled ``lax.scan``) and
  the step-wise engine (one jitted slow step per Python call) — ratio and real-time
  factors; the ``bw-frame`` scenario (degrading Bouc–Wen columns, joint-UKF updating)
  through the fused engine;
* batch throughput: the fused loop ``vmap``-ed over batches of uncertain specimens
  (column parameters scattered ±20 %), seconds per simulation against one run at a time
  (the maRTHS study's batches: :mod:`rths_ident.speed.marths_batch`);
* the cost of each fast-side component per fast step, each in its own ``lax.scan``, as
  the loop uses it (sensor noise drawn per slow step for its ``ratio`` samples, the
  identifier once every ``identifier_every`` fast steps), with XLA's own count of the
  floating-point operations of one step (``cost_analysis``).

Compilation is excluded (ahead-of-time compile). Every figure is timed ``repeats`` times
and reported as min and median (:class:`Timing`): on a shared machine the min is the
machine's speed, the spread its load.
"""

from __future__ import annotations

import dataclasses
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side import sensors
from rths_ident.hybrid.loop.engine import run_fused
from rths_ident.hybrid.loop.assembled import (
    compiled_fused_runner,
    initial_loop_state,
    run_loop,
    slow_step_functions,
)
from rths_ident.scenarios import bw_frame as bw
from rths_ident.scenarios import lugre_frame as lf
from rths_ident.hybrid.fast_side.fast_chunk import fast_params as fast_side_params
from rths_ident.hybrid.fast_side.fast_chunk import initial_fast_state
from rths_ident.models import ElementInputs, ModifiedLuGre


class Timing(NamedTuple):
    """Seconds of ``repeats`` timed calls: min and median."""

    min: float
    median: float

    def per(self, count: float) -> "Timing":
        return Timing(self.min / count, self.median / count)


def _timed(fn, repeats: int) -> Timing:
    seconds = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        seconds.append(time.perf_counter() - start)
    return Timing(float(np.min(seconds)), float(np.median(seconds)))


def _flops(compiled) -> float:
    """XLA's count of floating-point operations (incl. transcendentals) of a compiled
    program without loops; NaN when the backend gives none."""
    analysis = compiled.cost_analysis()
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    analysis = analysis or {}
    return float(analysis.get("flops", np.nan)) + float(analysis.get("transcendentals", 0.0))


def engines(duration: float | None = None, repeats: int = 3, stepwise_duration: float | None = None) -> dict:
    """Fused vs step-wise on the flagship (``duration`` s of El Centro; None = all of it)."""
    cfg = lf.LugreFrameConfig(duration=duration)
    built = lf.build(cfg)
    fused = fused_engine(built, cfg.fast_rate, repeats)
    # step-wise on a shorter stretch if asked (it is the slow path): the site and the
    # native NS behind their protocols, compiled by a first run
    sw_built = built if stepwise_duration is None else built._replace(
        ground_accel=built.ground_accel[: int(round(stepwise_duration * cfg.slow_rate))],
        time_slow=built.time_slow[: int(round(stepwise_duration * cfg.slow_rate))])
    run_loop(sw_built._replace(ground_accel=sw_built.ground_accel[:2]), "stepwise")  # compile
    sw_walls = [run_loop(sw_built, "stepwise")[1] for _ in range(max(1, repeats - 1))]
    sw_s = Timing(float(np.min(sw_walls)), float(np.median(sw_walls)))
    sim_sw = float(sw_built.time_slow[-1])
    return {
        **fused,
        "stepwise_duration_s": sim_sw,
        "stepwise_wall_s": sw_s.min,
        "stepwise_realtime_factor": sim_sw / sw_s.min,
        "stepwise_realtime_factor_median": sim_sw / sw_s.median,
        "fused_over_stepwise": fused["fused_realtime_factor"] / (sim_sw / sw_s.min),
        "fast_steps_per_s_fused": fused["duration_s"] * cfg.fast_rate / fused["fused_wall_s"],
    }


def fused_engine(built, fast_rate: float, repeats: int = 3) -> dict:
    """The fused loop of a built scenario ``built`` (a :class:`~rths_ident.hybrid.loop.assembled.HybridTest`,
    its configured variant) timed ``repeats`` times after an ahead-of-time compile:
    wall seconds (min, median), × real time and µs per fast step (``fast_rate`` [Hz])."""
    initial = initial_loop_state(built)
    ag = jnp.asarray(built.ground_accel)
    params = fast_side_params(built.fast_side)
    fused = compiled_fused_runner(built, initial)
    wall = _timed(lambda: fused(params, initial, ag), repeats)
    simulated = float(built.time_slow[-1])
    return {
        "duration_s": simulated,
        "repeats": repeats,
        "fused_wall_s": wall.min,
        "fused_wall_median_s": wall.median,
        "fused_realtime_factor": simulated / wall.min,
        "fused_realtime_factor_median": simulated / wall.median,
        "fused_us_per_fast_step": 1e6 * wall.min / (simulated * fast_rate),
    }


def bw_frame_engine(duration: float | None = None, repeats: int = 3) -> dict:
    """The ``bw-frame`` scenario's fused loop (``duration`` s of El Centro; None = all of
    it): :func:`fused_engine`."""
    cfg = bw.BWFrameConfig(duration=duration)
    return fused_engine(bw.build(cfg), cfg.fast_rate, repeats)


def per_simulation(single, batched: dict, repeats: int, threads: int | None = None) -> dict:
    """Wall seconds per simulation one by one (``single()``: one run) and in vmap-ed
    batches (``batched[n]()``: n runs in one call), timed side by side, min and median of
    ``repeats``; ``speedup`` = one-by-one seconds per simulation / batched (min over
    min, median over median). ``threads`` (default: one per CPU core; 1: skipped): each
    batch also called on that many threads at once (a compiled call runs on its
    caller's thread), seconds per simulation over the ``threads × n`` runs
    (``"threaded"``; the one-by-one figure stays one run on one thread)."""
    threads = max(1, os.cpu_count() or 1) if threads is None else threads
    one = _timed(single, repeats)
    out = {"one_by_one_s_per_sim": {"min": one.min, "median": one.median}, "batches": {}, "threaded": {},
           "threads": threads}

    def figures(t: Timing) -> dict:
        return {"s_per_sim_min": t.min, "s_per_sim_median": t.median,
                "speedup_min": one.min / t.min, "speedup_median": one.median / t.median}

    for n, call in batched.items():
        out["batches"][int(n)] = figures(_timed(call, repeats).per(n))
    if threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for n, call in batched.items():
                def side_by_side(call=call):
                    return [future.result() for future in [pool.submit(call) for _ in range(threads)]]
                out["threaded"][int(n)] = figures(_timed(side_by_side, repeats).per(threads * n))
    return out


def scattered_specimens(spec, scatter):
    """The column parameters ``spec`` (:class:`~rths_ident.models.ModifiedLuGre` params)
    for a batch: σ0, F_C and σ3 times ``scatter[:, 0..2]`` (n × 3 factors), the other
    parameters repeated (leading axis: batch member)."""
    scatter = np.asarray(scatter, dtype=float)
    if scatter.ndim != 2 or scatter.shape[1] != 3:
        raise ValueError(f"scatter must be an n × 3 array of factors on (sigma0, Fc, sigma3); got shape "
                         f"{scatter.shape}")
    full = jax.tree_util.tree_map(lambda leaf: jnp.full((scatter.shape[0],), leaf), spec)
    return dataclasses.replace(full, sigma0=spec.sigma0 * scatter[:, 0], Fc=spec.Fc * scatter[:, 1],
                               sigma3=spec.sigma3 * scatter[:, 2])


def batched_fused_runner(built):
    """The fused loop of ``built`` (a lugre-frame :class:`~rths_ident.hybrid.loop.assembled.HybridTest`)
    ``vmap``-ed over specimens: jitted ``(fast_params, initial) -> (final, logs)`` where
    ``fast_params["specimen"]`` and every leaf of ``initial`` carry a leading batch axis
    (the actuator state holds the specimen's), the rest is shared; same record."""
    ag = jnp.asarray(built.ground_accel)
    base = fast_side_params(built.fast_side)
    axes = jax.tree_util.tree_map(lambda _: None, base)
    axes["specimen"] = jax.tree_util.tree_map(lambda _: 0, base["specimen"])
    functions = slow_step_functions(built)
    return jax.jit(jax.vmap(lambda fp, st: run_fused(functions, fp, st, ag), in_axes=(axes, 0)))


def batch(sizes=(1, 8, 32), duration: float = 5.0, repeats: int = 3, seed: int = 0) -> dict:
    """The fused loop vmap-ed over batches of ``sizes`` columns with scattered
    parameters (±20 % on σ0, F_C, σ3) vs one run at a time: :func:`per_simulation`."""
    cfg = lf.LugreFrameConfig(duration=duration)
    built = lf.build(cfg)
    initial = initial_loop_state(built)
    ag = jnp.asarray(built.ground_accel)
    base_params = fast_side_params(built.fast_side)
    runner = batched_fused_runner(built)
    rng = np.random.default_rng(seed)
    calls = {}
    for n in sizes:
        fast_params = dict(base_params, specimen=scattered_specimens(base_params["specimen"],
                                                                     rng.uniform(0.8, 1.2, size=(n, 3))))
        initial_b = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (n,) + jnp.shape(leaf)), initial)
        compiled = runner.lower(fast_params, initial_b).compile()
        calls[n] = (lambda c, f, i: lambda: c(f, i))(compiled, fast_params, initial_b)
    single = compiled_fused_runner(built, initial)
    out = per_simulation(lambda: single(base_params, initial, ag), calls, repeats)
    out["duration_s"] = float(built.time_slow[-1])
    return out


def _per_slow_step(step, state, xs, chunk: int):
    """``lax.scan`` of ``step`` over ``xs`` the way the fused loop runs a fast-side
    component: an outer scan over slow steps of an inner scan over ``chunk`` samples."""
    n = jax.tree_util.tree_leaves(xs)[0].shape[0]
    chunks = jax.tree_util.tree_map(lambda a: jnp.reshape(a, (n // chunk, chunk) + a.shape[1:]), xs)
    return jax.lax.scan(lambda s, c: jax.lax.scan(step, s, c), state, chunks)


def components(n_steps: int = 8000, repeats: int = 5) -> dict:
    """Per fast step of each fast-side component as the fused loop runs it (own
    scans each, an inner scan per slow step as in the engine): ``{name: {"us_min",
    "us_median", "flops"}}`` — microseconds per fast step and XLA's flop count of one
    fast step's worth of the component."""
    cfg = lf.LugreFrameConfig(duration=1.0)
    built = lf.build(cfg)
    side = built.fast_side
    fp, fs = fast_side_params(side), initial_fast_state(side, cfg.seed)
    dt, ratio, every = 1.0 / cfg.fast_rate, cfg.ratio, cfg.identifier_every
    n_steps = max(ratio, n_steps // ratio * ratio)
    t = jnp.arange(n_steps) * dt
    x = 0.04 * jnp.sin(2 * np.pi * 1.0 * t) * t / t[-1]
    v = jnp.gradient(x) / dt
    spec = fp["specimen"]
    _, force = jax.lax.scan(lambda s, i: ModifiedLuGre.step(spec, s, i, dt), ModifiedLuGre.init(spec),
                            ElementInputs(x, v))
    from rths_ident.estimators import lugre_identifier  # noqa: PLC0415
    from rths_ident.hybrid.fast_side.compensation import CompensatorInputs, damb  # noqa: PLC0415
    from rths_ident.protocols import IdentifierInputs  # noqa: PLC0415

    def transfer(integrator):
        actuator = dataclasses.replace(fp["actuator"], integrator=integrator)
        discretisation = act.discretise_jit(actuator, dt / actuator.substeps) if integrator == "exact" else None
        return act.TransferSystemParams(actuator=actuator, specimen=spec, specimen_model=ModifiedLuGre,
                                        discretisation=discretisation)

    exact, rk4 = transfer("exact"), transfer("rk4")
    actuator_state = act.actuator_init(exact)
    damb_params = damb.DAMBParams()
    id_x, id_v, id_f = (a[every - 1::every] for a in (x, v, force))  # one sample per identifier period
    zeros = sensors.SensorInputs(jnp.zeros(ratio))
    # name: (the scan over the record; one step's worth as a function of its inputs (so XLA
    # cannot fold it to constants) and those inputs, for the flop count; fast steps per call)
    x1, v1 = x[1], v[1]
    cases = {
        "specimen (modified LuGre step)": (
            lambda: _per_slow_step(lambda s, i: ModifiedLuGre.step(spec, s, i, dt), ModifiedLuGre.init(spec),
                                   ElementInputs(x, v), ratio),
            lambda s, a, b: ModifiedLuGre.step(spec, s, ElementInputs(a, b), dt), (ModifiedLuGre.init(spec), x1, v1),
            1),
        "actuator + specimen (exact, default)": (
            lambda: _per_slow_step(lambda s, i: act.actuator_step(exact, s, i, dt), actuator_state,
                                   act.ActuatorInputs(x), ratio),
            lambda p, s, a: act.actuator_step(p, s, act.ActuatorInputs(a), dt), (exact, actuator_state, x1), 1),
        "actuator + specimen (RK4)": (
            lambda: _per_slow_step(lambda s, i: act.actuator_step(rk4, s, i, dt), actuator_state,
                                   act.ActuatorInputs(x), ratio),
            lambda p, s, a: act.actuator_step(p, s, act.ActuatorInputs(a), dt), (rk4, actuator_state, x1), 1),
        "sensor noise (one channel, per slow step)": (
            lambda: jax.lax.scan(lambda s, _: sensors.sensor_step(fp["sensor_displacement"], s, zeros, dt),
                                 fs["sensor_displacement"], None, length=n_steps // ratio),
            lambda p, s: sensors.sensor_step(p, s, zeros, dt), (fp["sensor_displacement"], fs["sensor_displacement"]),
            ratio),
        "dAMB compensation": (
            lambda: _per_slow_step(lambda s, i: damb.step(damb_params, s, i, dt), damb.init(damb_params),
                                   CompensatorInputs(x, 0.99 * x), ratio),
            lambda p, s, a, b: damb.step(p, s, CompensatorInputs(a, b), dt),
            (damb_params, damb.init(damb_params), x1, v1 * dt), 1),
        f"LuGre identifier (constrained RLS, every {every})": (
            lambda: _per_slow_step(lambda s, a: lugre_identifier.step(fp["identifier"], s, a, dt * every),
                                   fs["identifier"], IdentifierInputs(id_x, id_v, id_f), ratio // every),
            lambda p, s, a, b, c: lugre_identifier.step(p, s, IdentifierInputs(a, b, c), dt * every),
            (fp["identifier"], fs["identifier"], id_x[1], id_v[1], id_f[1]), every),
    }
    out = {}
    for name, (scan, one, inputs, per) in cases.items():
        compiled = jax.jit(scan).lower().compile()
        timing = _timed(compiled, repeats).per(n_steps / 1e6)
        out[name] = {"us_min": timing.min, "us_median": timing.median,
                     "flops": _flops(jax.jit(one).lower(*inputs).compile()) / per}
    return out
