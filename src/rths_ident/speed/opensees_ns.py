"""The OpenSeesPy numerical substructure's cost per slow step, and what the loop adds.

* seed 000 Case 4's RC frame (:mod:`rths_ident.structures.rc_frame`, 28 DOF with the
  tested column removed), linear and nonlinear (fiber sections), stepped by
  :class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure` over the
  whole El Centro record at Δt_n = 0.02 s: wall time per step and the ratio to real time
  (Δt_n / step time);
* the ``rc-frame`` step-wise loop with that NS against the NS alone and the virtual site
  alone: what the coordination adds on top of OpenSees and the fast side;
* the same linear NS in a ``rths-ident serve ns`` child process on loopback
  (``--ns opensees-tcp``): each slow step's wall time (FEEDBACK out → TARGET back,
  median, p99 and mean over the record) against the in-process step's, the difference of
  the medians being the loopback round trip with the coding of both ends; and the
  step-wise loop with it. (The lines above report means per step: a step's time has a
  heavy tail on a shared machine.)

Times are min and median over ``repeats`` (time.perf_counter, after a warm-up run).
"""

from __future__ import annotations

import statistics
import time

import numpy as np


def _ns(nonlinear: bool, integrator: str, ground_accel, dt: float):
    import functools  # noqa: PLC0415

    from rths_ident.structures.opensees_substructure import OpenSeesSubstructure  # noqa: PLC0415
    from rths_ident.structures.rc_frame import INTERFACE_NODE, build_rc_frame  # noqa: PLC0415

    return OpenSeesSubstructure(functools.partial(build_rc_frame, nonlinear=nonlinear), (INTERFACE_NODE, 1), dt,
                                ground_accel=np.concatenate([[0.0], ground_accel]), integrator=integrator)


def _time_ns(nonlinear: bool, integrator: str, ground_accel, dt: float, repeats: int) -> list[float]:
    walls = []
    for _ in range(repeats):
        ns = _ns(nonlinear, integrator, ground_accel, dt)
        ns.initial_target()
        feedback = np.zeros(1)
        start = time.perf_counter()
        for ag in ground_accel:
            ns.step(feedback, ag)
        walls.append((time.perf_counter() - start) / len(ground_accel))
        ns.close()
    return walls


def _step_times(ns, ground_accel) -> np.ndarray:
    """Wall time [s] of each ``ns.step`` over the record (zero feedback)."""
    ns.initial_target()
    feedback = np.zeros(1)
    times = np.empty(len(ground_accel))
    try:
        for k, ag in enumerate(ground_accel):
            start = time.perf_counter()
            ns.step(feedback, ag)
            times[k] = time.perf_counter() - start
    finally:
        ns.close()
    return times


def _tcp(cfg, ground_accel, repeats: int) -> dict:
    """The rc-frame OpenSees NS in a server child process vs in process (module doc)."""
    import dataclasses  # noqa: PLC0415

    from rths_ident.hybrid.loop.assembled import run_loop  # noqa: PLC0415
    from rths_ident.transport.ns_server_process import NSServerProcess  # noqa: PLC0415
    from rths_ident.scenarios import rc_frame, remote_ns  # noqa: PLC0415

    record = np.concatenate([[0.0], ground_accel])
    local, remote, loop_walls = [], [], []
    with NSServerProcess() as server:
        host, port = server.address
        cfg_tcp = dataclasses.replace(cfg, ns="opensees-tcp", ns_address=f"{host}:{port}")
        _step_times(remote_ns.remote_substructure(cfg_tcp, "none", record), ground_accel[:20])  # server warm-up
        for _ in range(repeats):  # interleaved, so both see the same machine load
            local.append(_step_times(rc_frame.opensees_substructure(cfg, "none", record), ground_accel))
            remote.append(_step_times(remote_ns.remote_substructure(cfg_tcp, "none", record), ground_accel))
        test = rc_frame.build(cfg_tcp)
        for _ in range(repeats):
            _, wall = run_loop(test, "stepwise", variant="none")
            loop_walls.append(wall / len(ground_accel))
    local, remote = np.concatenate(local), np.concatenate(remote)
    dt = 1.0 / cfg.slow_rate
    loop_step = statistics.median(loop_walls)
    return {"local_step_s_mean": float(np.mean(local)), "remote_step_s_mean": float(np.mean(remote)),
            "local_step_s_median": float(np.median(local)), "local_step_s_p99": float(np.percentile(local, 99)),
            "remote_step_s_median": float(np.median(remote)), "remote_step_s_p99": float(np.percentile(remote, 99)),
            "round_trip_s_median": float(np.median(remote) - np.median(local)),
            "loop_step_s_median": loop_step, "loop_realtime_factor_median": dt / loop_step}


def run(repeats: int = 3, duration: float | None = None) -> dict:
    """Per-step cost of the OpenSees NS (linear, nonlinear) and the loop overhead."""
    from rths_ident.hybrid.loop.assembled import run_loop, virtual_site  # noqa: PLC0415
    from rths_ident.scenarios import rc_frame  # noqa: PLC0415
    from rths_ident.scenarios.components import slow_record  # noqa: PLC0415

    cfg = rc_frame.RCFrameConfig(ns="opensees", duration=duration)
    _, ground_accel = slow_record(cfg)
    dt = 1.0 / cfg.slow_rate
    out: dict = {"slow_step_s": dt, "n_steps": len(ground_accel)}
    for label, nonlinear, integrator in (("linear, alpha-os", False, "alpha-os"),
                                         ("nonlinear, alpha-os", True, "alpha-os"),
                                         ("nonlinear, newmark-fixed-iter (3)", True, "newmark-fixed-iter")):
        walls = _time_ns(nonlinear, integrator, ground_accel, dt, repeats)
        out[label] = {"step_s_min": min(walls), "step_s_median": statistics.median(walls),
                      "realtime_factor_median": dt / statistics.median(walls)}
    # the whole step-wise loop (virtual site + OpenSees NS, linear) vs its two parts alone
    test = rc_frame.build(cfg)
    site_walls, loop_walls = [], []
    for _ in range(repeats):
        site = virtual_site(test)
        target = np.zeros(1)
        start = time.perf_counter()
        for _k in range(len(ground_accel)):
            site.step(target)
        site_walls.append((time.perf_counter() - start) / len(ground_accel))
        _, wall = run_loop(test, "stepwise", variant="none")
        loop_walls.append(wall / len(ground_accel))
    ns_step = out["linear, alpha-os"]["step_s_median"]
    site_step, loop_step = statistics.median(site_walls), statistics.median(loop_walls)
    out["loop"] = {"site_step_s_median": site_step, "loop_step_s_median": loop_step, "ns_step_s_median": ns_step,
                   "coordination_overhead_fraction": (loop_step - site_step - ns_step) / (site_step + ns_step),
                   "realtime_factor_median": dt / loop_step}
    out["tcp"] = _tcp(cfg, ground_accel, repeats)
    return out


def report(r: dict) -> list[str]:
    lines = [f"OpenSeesPy numerical substructure (seed 000 Case 4 RC frame, 28 DOF, Δt_n = {r['slow_step_s']:g} s, "
             f"{r['n_steps']} steps):"]
    for label, v in r.items():
        if isinstance(v, dict) and "step_s_min" in v:
            lines.append(f"  {label:36s} {1e3 * v['step_s_min']:7.3f} / {1e3 * v['step_s_median']:7.3f} ms per step "
                         f"(min / median) → {v['realtime_factor_median']:.0f}× real time")
    loop = r["loop"]
    coordination = loop["loop_step_s_median"] - loop["site_step_s_median"] - loop["ns_step_s_median"]
    lines.append(f"  rc-frame step-wise loop: {1e3 * loop['loop_step_s_median']:.3f} ms per slow step = virtual site "
                 f"{1e3 * loop['site_step_s_median']:.3f} + OpenSees {1e3 * loop['ns_step_s_median']:.3f} "
                 f"+ coordination {1e3 * coordination:.3f} ({100 * loop['coordination_overhead_fraction']:.0f} % "
                 f"of site + OpenSees) → "
                 f"{loop['realtime_factor_median']:.1f}× real time")
    tcp = r.get("tcp")
    if tcp:
        lines.append(f"  linear NS over TCP (serve ns child, loopback, framed): {1e3 * tcp['remote_step_s_median']:.3f} / "
                     f"p99 {1e3 * tcp['remote_step_s_p99']:.3f} ms per slow step vs in process "
                     f"{1e3 * tcp['local_step_s_median']:.3f} / p99 {1e3 * tcp['local_step_s_p99']:.3f} ms → round trip "
                     f"{1e3 * tcp['round_trip_s_median']:.3f} ms (median; means {1e3 * tcp['remote_step_s_mean']:.3f} vs "
                     f"{1e3 * tcp['local_step_s_mean']:.3f} ms)")
        lines.append(f"  rc-frame step-wise loop with the TCP NS: {1e3 * tcp['loop_step_s_median']:.3f} ms per slow step "
                     f"→ {tcp['loop_realtime_factor_median']:.1f}× real time")
    return lines
