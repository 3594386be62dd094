"""UKF speed: filterpy vs the rths_ident wrapper vs the scan path, side by side.

Two systems, each filtered by the three implementations on the same record:

* ``"duffing"``: forced Duffing oscillator, 2 states, 2 measurements, one RK4 step
  per sample (a small textbook problem: filterpy's overhead is smallest here);
* ``"bouc_wen"``: the joint state–parameter model of
  :class:`~rths_ident.estimators.boucwen_ukf_identifier.BoucWenUKFIdentifier`
  (7 states: x, v, z, k, α, β, γ; restoring force measured; 4 RK4 sub-steps).

Per step = one ``predict`` + one ``update``. Timings are taken after a warm-up run
(compilation excluded), with ``time.perf_counter``, best of ``repeats`` (best of
10 × ``repeats`` for the scan, whose runs are ~100× shorter, so that a shared
machine's preemptions are filtered out as well as for the loops).

Run ``python -m rths_ident.speed.ukf_vs_filterpy`` to print both.
"""

from __future__ import annotations

import time
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.estimators.boucwen_ukf_identifier import _measurement_model, _process_model
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UnscentedKalmanFilter, ukf_init, ukf_scan

__all__ = ["run", "main", "SYSTEMS"]

SYSTEMS = ("duffing", "bouc_wen")


class _Problem(NamedTuple):
    dim_x: int
    dim_z: int
    dt: float
    fx_np: Callable
    hx_np: Callable
    fx_jax: Callable
    hx_jax: Callable
    x0: np.ndarray
    P0: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    sigma: tuple[float, float, float]  # alpha, beta, kappa
    zs: np.ndarray  # (N, m)
    fx_args: dict  # name -> (N,) array
    hx_args: dict  # name -> (N,) array


def _duffing_fx(xp):
    def fx(x, dt, u=0.0):
        def rate(s):
            return xp.array([s[1], -0.2 * s[1] - s[0] - 0.5 * s[0] ** 3 + u])

        k1 = rate(x)
        k2 = rate(x + 0.5 * dt * k1)
        k3 = rate(x + 0.5 * dt * k2)
        k4 = rate(x + dt * k3)
        return x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    return fx


def _duffing_hx(xp):
    return lambda x: xp.array([x[0], x[0] ** 2 + x[1]])


_DUFFING_JAX = (_duffing_fx(jnp), _duffing_hx(jnp))


def _duffing(n_steps: int) -> _Problem:
    dt = 0.05
    rng = np.random.default_rng(0)
    fx, hx = _duffing_fx(np), _duffing_hx(np)
    us = 2.0 * np.sin(0.7 * dt * np.arange(n_steps))
    truth, zs = np.array([1.0, 0.0]), []
    for u in us:
        truth = fx(truth, dt, u=u)
        zs.append(hx(truth) + rng.normal(0.0, 0.05, 2))
    return _Problem(
        2, 2, dt, fx, hx, *_DUFFING_JAX, np.array([0.5, 0.3]), 0.5 * np.eye(2), 1e-3 * np.eye(2),
        0.05**2 * np.eye(2), (0.1, 2.0, 1.0), np.array(zs), {"u": us}, {},
    )  # fmt: skip


def _bouc_wen_numpy(substeps: int = 4):
    """The identifier's filter model in numpy (n = 1, A = 1), for filterpy."""

    def rate(s, p, mass, damping):
        x, v, z, k, alpha, beta, gamma = s
        force = alpha * k * x + (1 - alpha) * k * z
        z_rate = v - beta * abs(v) * z - gamma * v * abs(z)
        return np.array([v, (p - damping * v - force) / mass, z_rate, 0.0, 0.0, 0.0, 0.0])

    def fx(s, dt, force_start, force_end, mass, damping, A, n):
        h = dt / substeps
        for i in range(substeps):
            pa, pm, pb = (force_start + (force_end - force_start) * f / substeps for f in (i, i + 0.5, i + 1))
            k1 = rate(s, pa, mass, damping)
            k2 = rate(s + h / 2 * k1, pm, mass, damping)
            k3 = rate(s + h / 2 * k2, pm, mass, damping)
            k4 = rate(s + h * k3, pb, mass, damping)
            s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return s

    def hx(s, external_force, mass, damping, A, n):
        x, _, z, k, alpha = s[:5]
        return np.array([alpha * k * x + (1 - alpha) * k * z])

    return fx, hx


def _bouc_wen(n_steps: int) -> _Problem:
    dt, mass, k = 1 / 200, 5000.0, 1.34e6
    damping = 2 * 0.02 * np.sqrt(k * mass)
    fx, hx = _bouc_wen_numpy()
    t = np.arange(n_steps + 1) * dt
    p = 25e3 * np.sin(2 * np.pi * 1.1 * t) * np.minimum(t / 2, 1) + 10e3 * np.sin(2 * np.pi * 3.7 * t)
    const = {"mass": mass, "damping": damping, "A": 1.0, "n": 1.0}
    truth = np.array([0.0, 0.0, 0.0, k, 0.04, 30.0, 20.0])
    forces = []
    for i in range(n_steps):
        truth = fx(truth, dt, p[i], p[i + 1], **const)
        forces.append(hx(truth, p[i + 1], **const)[0])
    forces = np.array(forces)
    rng = np.random.default_rng(1)
    std = 0.01 * max(np.std(forces), 1.0)
    zs = (forces + std * rng.standard_normal(n_steps))[:, None]
    theta0 = np.array([1.0e6, 0.08, 20.0, 10.0])
    P0 = np.diag(np.concatenate([[1e-12] * 3, (0.5 * theta0) ** 2]))
    Q = np.diag(np.concatenate([[1e-18, 1e-12, 1e-18], (0.5e-4 * theta0) ** 2]))
    per_step = {name: np.full(n_steps, value) for name, value in const.items()}
    return _Problem(
        7, 1, dt, fx, hx, _process_model(4), _measurement_model(("restoring_force",)),
        np.concatenate([[0.0, 0.0, 0.0], theta0]), P0, Q, np.array([[std**2]]), (1e-2, 2.0, 0.0), zs,
        {"force_start": p[:-1], "force_end": p[1:], **per_step}, {"external_force": p[1:], **per_step},
    )  # fmt: skip


def _configure(f, prob: _Problem):
    f.x = prob.x0.copy()
    f.P = prob.P0.copy()
    f.Q = prob.Q.copy()
    f.R = prob.R.copy()
    return f


def _args_at(args: dict, k: int) -> dict:
    return {name: values[k] for name, values in args.items()}


def _loop(f, prob: _Problem, read_x: bool):
    """predict+update over the record; returns the posterior means when read_x."""
    fx_steps = [_args_at(prob.fx_args, k) for k in range(len(prob.zs))]
    hx_steps = [_args_at(prob.hx_args, k) for k in range(len(prob.zs))]
    means = []
    start = time.perf_counter()
    for z, fa, ha in zip(prob.zs, fx_steps, hx_steps):
        f.predict(**fa)
        f.update(z, **ha)
        if read_x:
            means.append(f.x)
    if not read_x:
        _ = f.x  # wait for the last (asynchronously dispatched) step
    return time.perf_counter() - start, means


def run(n_steps: int = 300, repeats: int = 3, system: str = "bouc_wen") -> dict:
    """Measure filterpy, the wrapper and the scan on ``system`` (one of ``SYSTEMS``).

    Returns a dict with the microseconds per step of each (``filterpy_us``,
    ``wrapper_us`` (no attribute read per step), ``wrapper_read_x_us`` (``ukf.x``
    read every step, the usual loop), ``scan_us``), the speed-ups over filterpy
    (``wrapper_speedup``, ``wrapper_read_x_speedup``, ``scan_speedup``) and the largest
    relative difference of the posterior means from filterpy's over the record
    (``max_relative_state_difference``; relative to |x| plus the standard deviation
    of that state over the record, since states cross zero).
    """
    from filterpy.kalman import MerweScaledSigmaPoints as FilterpyPoints
    from filterpy.kalman import UnscentedKalmanFilter as FilterpyUKF
    if system not in SYSTEMS:
        raise ValueError(f"system must be one of {SYSTEMS}; got {system!r}")
    if int(n_steps) < 2 or int(repeats) < 1:
        raise ValueError(f"need n_steps >= 2 and repeats >= 1; got {n_steps!r}, {repeats!r}")
    prob = (_duffing if system == "duffing" else _bouc_wen)(int(n_steps))
    steps = len(prob.zs)

    def filterpy_filter():
        points = FilterpyPoints(prob.dim_x, *prob.sigma)
        return _configure(FilterpyUKF(prob.dim_x, prob.dim_z, prob.dt, prob.hx_np, prob.fx_np, points), prob)

    def our_filter():
        points = MerweScaledSigmaPoints(prob.dim_x, *prob.sigma)
        ukf = UnscentedKalmanFilter(prob.dim_x, prob.dim_z, prob.dt, prob.hx_jax, prob.fx_jax, points)
        return _configure(ukf, prob)

    _loop(our_filter(), prob, read_x=True)  # warm-up: compiles the kernels
    times = {"filterpy": [], "wrapper": [], "wrapper_read_x": [], "scan": []}
    reference = ours = None
    for _ in range(int(repeats)):
        elapsed, reference = _loop(filterpy_filter(), prob, read_x=True)
        times["filterpy"].append(elapsed)
        elapsed, ours = _loop(our_filter(), prob, read_x=True)
        times["wrapper_read_x"].append(elapsed)
        times["wrapper"].append(_loop(our_filter(), prob, read_x=False)[0])

    points = MerweScaledSigmaPoints(prob.dim_x, *prob.sigma)
    params, state0 = ukf_init(points, prob.x0, prob.P0, prob.Q, prob.R, prob.dt)
    zs = jnp.asarray(prob.zs)
    fx_args = {k: jnp.asarray(v) for k, v in prob.fx_args.items()}
    hx_args = {k: jnp.asarray(v) for k, v in prob.hx_args.items()}
    scanned = jax.block_until_ready(ukf_scan(prob.fx_jax, prob.hx_jax, params, state0, zs, fx_args, hx_args))
    for _ in range(10 * int(repeats)):  # a scan run is short: more repeats, same cost
        start = time.perf_counter()
        jax.block_until_ready(ukf_scan(prob.fx_jax, prob.hx_jax, params, state0, zs, fx_args, hx_args))
        times["scan"].append(time.perf_counter() - start)

    reference = np.array(reference)
    # relative to |x| plus the spread of that state over the record (states cross zero)
    scale = np.abs(reference) + np.std(reference, axis=0)[None, :]
    difference = max(
        float(np.max(np.abs(np.array(ours) - reference) / scale)),
        float(np.max(np.abs(np.asarray(scanned[1].x) - reference) / scale)),
    )
    us = {name: 1e6 * min(values) / steps for name, values in times.items()}
    return {
        "system": system,
        "n_steps": steps,
        "repeats": int(repeats),
        "filterpy_us": us["filterpy"],
        "wrapper_us": us["wrapper"],
        "wrapper_read_x_us": us["wrapper_read_x"],
        "scan_us": us["scan"],
        "wrapper_speedup": us["filterpy"] / us["wrapper"],
        "wrapper_read_x_speedup": us["filterpy"] / us["wrapper_read_x"],
        "scan_speedup": us["filterpy"] / us["scan"],
        "max_relative_state_difference": difference,
    }


def main(n_steps: int = 300, repeats: int = 3) -> list[dict]:
    """Print the measurements for every system; returns them."""
    results = []
    for system in SYSTEMS:
        r = run(n_steps=n_steps, repeats=repeats, system=system)
        results.append(r)
        print(
            f"UKF {system:9s} ({r['n_steps']} steps, best of {r['repeats']}): "
            f"filterpy {r['filterpy_us']:.1f} µs/step | "
            f"wrapper {r['wrapper_us']:.1f} µs ({r['wrapper_speedup']:.1f}×), with x read "
            f"{r['wrapper_read_x_us']:.1f} µs ({r['wrapper_read_x_speedup']:.1f}×) | scan {r['scan_us']:.2f} µs "
            f"({r['scan_speedup']:.0f}×) | max rel. diff {r['max_relative_state_difference']:.1e}"
        )
    return results


if __name__ == "__main__":
    main()
