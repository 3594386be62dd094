"""Throughput of maRTHS studies (``rths-ident bench --only batch``), side by side in one run.

* the compiled loop: one run at a time vs ``vmap``-ed batches of random plants
  (:func:`~rths_ident.speed.hybrid_loop.per_simulation`, compilation excluded);
* whole studies (plant draws, runs, J1–J10 per run): runs per minute one by one, in
  batches, and on a local Dask cluster of 2 worker processes (its start-up and the
  workers' compilation included: what a user waits for).
"""

from __future__ import annotations

import time

import jax.numpy as jnp

from rths_ident.speed.hybrid_loop import per_simulation
from rths_ident.benchmarks.marths import study as st
from rths_ident.benchmarks.marths.model import marths_model
from rths_ident.benchmarks.marths.site import site_init, stack_plants, true_plant
from rths_ident.benchmarks.marths.substructure import ns_init, ns_params
from rths_ident.hybrid.loop.engine import LoopState

__all__ = ["loop", "studies"]


def loop(sizes=(1, 8, 32), duration: float = 5.0, repeats: int = 3, controller: str = "lqg") -> dict:
    """Seconds per simulation of ``duration`` s (El Centro ×0.4), one by one vs batches."""
    cfg = st.StudyConfig(controller=controller, duration=duration, uncertain=max(sizes))
    model, dt = marths_model(), 1.0 / st.LOOP_RATE_HZ
    ag = jnp.asarray(st.ground_motion(cfg.record, cfg.scale, cfg.duration))
    plants = st.study_plants(cfg)
    nsp = ns_params(model, dt)
    site = st._site_params(cfg, model, dt, plants[0])
    initial = LoopState(ns_init(nsp), site_init(site, cfg.seed), jnp.zeros(2), nsp, ())
    single = st._runner(controller, dt).lower(site, initial, ag).compile()
    batched = st._batched_runner(controller, dt)
    calls = {}
    for n in sizes:
        site_b = site._replace(plant=stack_plants([true_plant(p, dt) for p in plants[:n]]))
        initial_b = st.batch_initial_state(site, nsp, [cfg.seed + i for i in range(n)])
        compiled = batched.lower(site_b, initial_b, ag).compile()
        calls[n] = (lambda c, s, i: lambda: c(s, i, ag))(compiled, site_b, initial_b)
    out = per_simulation(lambda: single(site, initial, ag), calls, repeats)
    out.update(duration_s=float(ag.shape[0] * dt), controller=controller)
    return out


def studies(runs: int = 32, batch: int = 32, duration: float = 10.0, cluster: bool = True) -> dict:
    """Runs per minute of a whole study of ``runs`` runs (nominal + draws): one by one
    on one thread, vmap-ed batches of ``batch`` on one thread, batches of
    ``batch // (2·cores)`` on one thread per core (``StudyConfig.threads``), and
    (``cluster``) batches on a local Dask cluster. Each path is compiled by a first study so that compilation is
    excluded, except on the cluster (its workers compile on their first task)."""
    base = dict(controller="lqg", uncertain=runs - 1, duration=duration)
    cores = st.study_threads(st.StudyConfig(threads=0))
    # smaller batches on the threads: the first batch runs alone (it compiles), the rest
    # two at a time (study.iter_batches)
    threaded_batch = max(1, batch // (2 * cores))
    out = {"runs": runs, "duration_s": duration, "batch": batch, "cores": cores, "threaded_batch": threaded_batch}
    for name, extra in (("one_by_one", {"threads": 1}), ("batched", {"batch": batch, "threads": 1}),
                        ("batched_threads", {"batch": threaded_batch, "threads": 0})):
        st.run_study(st.StudyConfig(**dict(base, **extra)), keep_histories=0)  # compiles
        start = time.perf_counter()
        st.run_study(st.StudyConfig(**dict(base, **extra)), keep_histories=0)
        out[f"{name}_runs_per_min"] = 60.0 * runs / (time.perf_counter() - start)
    if cluster:
        from rths_ident.dask_cluster import DaskExecutor  # noqa: PLC0415

        start = time.perf_counter()
        with DaskExecutor("local", n_workers=2) as executor:
            st.run_study(st.StudyConfig(**dict(base, batch=max(1, batch // 2))), keep_histories=0, executor=executor)
        out["local_cluster_runs_per_min"] = 60.0 * runs / (time.perf_counter() - start)
    return out
