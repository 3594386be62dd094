"""A maRTHS study: the nominal plant and M random plants on one record (digest §13 C).

Every run is the project's fused engine (:func:`rths_ident.hybrid.loop.engine.run_fused`,
compiled once per control law and record length): the NS of :mod:`.substructure` as
``ns_step``, the fast side of :mod:`.site` as ``fast_chunk``; no identifier (the
model-updating hook never fires). The random plants differ only in pytree leaves (the
true plant's matrices), so they share the compiled loop.

Execution (same numbers either way): one run after another (``batch=0``), or batches of
``batch`` runs as one ``jax.vmap``-ed compiled call (:func:`iter_batches`; the last batch
is padded with copies of its last plant so every batch reuses one compiled program).
Each run's metrics are computed as soon as its batch returns and its time history is
dropped, except, for the plots, the first ``keep_histories`` ones (copied out of their
batch): memory is one batch of histories, whatever the number of plants. What a study
keeps of each run (J1–J10, the realisability report: a few hundred numbers) is streamed
to the study's test record as the run finishes (:mod:`.study_record`), so a study
stopped halfway keeps its finished runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
import time as _time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.metrics import nrms_error_percent
from rths_ident.benchmarks.marths import daq as board
from rths_ident.benchmarks.marths import metrics as bmetrics
from rths_ident.benchmarks.marths.controller import LQGWeights, design_kalman, design_lqg
from rths_ident.benchmarks.marths.decentralised_damb import damb_pair_params
from rths_ident.benchmarks.marths.force_estimation import reduced_specimen
from rths_ident.benchmarks.marths.ideal_partition import INTERFACE_NAMES, UPPER_NAMES, reference_response
from rths_ident.benchmarks.marths.model import marths_model
from rths_ident.benchmarks.marths.plant import NOMINAL_PLANT
from rths_ident.benchmarks.marths.realisability import realisability_report
from rths_ident.benchmarks.marths.site import LAWS, SiteParams, make_chunk, site_init, stack_plants, true_plant
from rths_ident.benchmarks.marths.substructure import ns_init, ns_params, ns_step
from rths_ident.benchmarks.marths.uncertainty import plant_as_dict, sample_plants
from rths_ident.protocols import Estimate
from rths_ident.hybrid.loop.engine import LoopState, SlowStepFunctions, make_fused_runner, run_fused

__all__ = ["RECORDS", "StudyConfig", "ground_motion", "run_study", "run_chunk", "chunk_summaries", "iter_batches", "run_batch", "run_once",
           "batch_initial_state",
           "LOOP_RATE_HZ"]

#: the benchmark runs at 1024 Hz (§3.6.3 item 4)
LOOP_RATE_HZ = 1024.0
#: short names → shipped records of the benchmark package
RECORDS = {"elcentro": "elcentro_1940_marths", "kobe": "kobe_1995", "morgan": "morgan_hill_1984"}


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """record: elcentro | kobe | morgan; scale: the record's factor (0.40 default);
    controller: lqg | damb | ideal; uncertain: number of random plants M (≥ 0);
    seed: the plant draws' seed (sensor noise: seed + run); duration [s] (None: all);
    convention: paper | official (J conventions, :mod:`.metrics`); saturation_v [V];
    noise: sensor noise and quantization on/off; batch: runs per vmap-ed compiled call
    (0: one by one); threads: batches (or single runs) computed side by side on this
    machine (0: one per CPU core; XLA runs each compiled call on its caller's thread);
    dask: run the chunks on a Dask cluster, ``"local"`` or ``tcp://HOST:PORT``
    (:mod:`.distributed`). The numbers depend on none of them."""

    record: str = "elcentro"
    scale: float = 0.4
    controller: str = "lqg"
    uncertain: int = 20
    seed: int = 123
    duration: float | None = None
    convention: str = "paper"
    saturation_v: float = 3.8
    noise: bool = True
    weights: LQGWeights = LQGWeights()
    batch: int = 0
    threads: int = 0
    dask: str | None = None


    def __post_init__(self):
        if self.record not in RECORDS:
            raise ParameterError(f"record must be one of {', '.join(RECORDS)}; got {self.record!r}")
        if self.controller not in LAWS:
            raise ParameterError(f"controller must be one of {', '.join(LAWS)}; got {self.controller!r}")
        if not (np.isfinite(self.scale) and self.scale > 0):
            raise ParameterError(f"scale must be a factor > 0; got {self.scale!r}")
        if int(self.uncertain) != self.uncertain or self.uncertain < 0:
            raise ParameterError(f"uncertain must be a whole number of plants >= 0; got {self.uncertain!r}")
        if self.duration is not None and not (self.duration > 0):
            raise ParameterError(f"duration must be > 0 s; got {self.duration!r}")
        if int(self.batch) != self.batch or self.batch < 0:
            raise ParameterError(f"batch must be a whole number of runs per compiled call >= 0; got {self.batch!r}")
        if int(self.threads) != self.threads or self.threads < 0:
            raise ParameterError(f"threads must be a whole number >= 0 (0: one per CPU core); got {self.threads!r}")
        if self.dask is not None:
            from rths_ident.dask_cluster import check_address  # noqa: PLC0415

            check_address(self.dask)
        if self.convention not in bmetrics.CONVENTIONS:
            raise ParameterError(f"convention must be one of {bmetrics.CONVENTIONS}; got {self.convention!r}")


@functools.cache
def quiet_start(record: str) -> float:
    """Time [s] of the first non-zero sample of ``record`` (the benchmark's records start
    with 5 s of zeros); before it nothing moves."""
    from rths_ident.datasets import load_ground_motion  # noqa: PLC0415

    t, ag = load_ground_motion(RECORDS[record])
    return float(t[np.flatnonzero(np.asarray(ag))[0]])


def ground_motion(record: str, scale: float, duration: float | None = None,
                  rate: float = LOOP_RATE_HZ) -> np.ndarray:
    """ẍ_g [m/s²] at t_1, t_2, … on the loop's grid (linear interpolation, the record's
    own zeros included), scaled."""
    from rths_ident.datasets import load_ground_motion  # noqa: PLC0415
    from rths_ident.datasets.processing import resample_ground_motion  # noqa: PLC0415

    t, ag = load_ground_motion(RECORDS[record])
    _, a = resample_ground_motion(t, scale * np.asarray(ag, dtype=float), 1.0 / rate)
    a = a[1:]
    if duration is not None:
        a = a[: int(round(duration * rate))]
    return a


def _no_identifier(params, state):
    empty = jnp.zeros(0)
    return Estimate(empty, empty, jnp.asarray(False), jnp.asarray(True))


def _never(hook_state, estimate, k):
    return hook_state, jnp.asarray(False)


def _keep(params, theta):
    return params


_RUNNERS: dict = {}


def _runner(law: str, dt: float):
    """The fused loop for ``law`` (jitted once; retraced only for a new record length)."""
    if (law, dt) not in _RUNNERS:
        def ns(params, state, feedback, ag):
            return ns_step(params, state, feedback, ag)
        functions = SlowStepFunctions(make_chunk(law, dt), _no_identifier, _never, _keep, ns)
        _RUNNERS[(law, dt)] = make_fused_runner(functions)
    return _RUNNERS[(law, dt)]


def _site_params(cfg: StudyConfig, model, dt: float, plant) -> SiteParams:
    return SiteParams(plant=true_plant(plant, dt), kalman=design_kalman(dt, process_std=cfg.weights.process_std),
                      lqg=design_lqg(dt, cfg.weights), damb=damb_pair_params(1.0 / dt) if cfg.controller == "damb"
                      else (), daq=board.default_daq(cfg.saturation_v, noise=cfg.noise, quantization=cfg.noise),
                      specimen=reduced_specimen(model))


def run_once(cfg: StudyConfig, plant, ground_accel, run_seed: int) -> dict:
    """One vRTHS on ``plant``; returns the logs (NumPy; fast logs and the NS's)."""
    model = marths_model()
    dt = 1.0 / LOOP_RATE_HZ
    site = _site_params(cfg, model, dt, plant)
    nsp = ns_params(model, dt)
    initial = LoopState(ns_init(nsp), site_init(site, run_seed), jnp.zeros(2), nsp, ())
    _, logs = _runner(cfg.controller, dt)(site, initial, jnp.asarray(ground_accel))
    logs = jax.device_get(logs)
    out = {k: np.asarray(v) for k, v in logs["fast"].items()}
    out.update({k: np.asarray(v) for k, v in logs["ns"].items()})
    return out


#: what a batch's runs do not share: the true plant, and of the initial loop state all
#: but the NS's parameters (:func:`batch_initial_state`)
_SITE_AXES = SiteParams(plant=0, kalman=None, lqg=None, damb=None, daq=None, specimen=None)
_INITIAL_AXES = LoopState(ns_state=0, fast_state=0, slow_input=0, ns_params=None, hook_state=None)


def _batched_runner(law: str, dt: float):
    """The fused loop ``vmap``-ed over runs: the true plant and the initial state (noise
    seed) per run, the rest of the site and the NS's matrices shared (jitted once per
    law). Shared matrices matter: the NS's modal projections (29×3 loads, 6×29 outputs)
    and per-mode constants are then read once per step for the whole batch, instead of
    one stacked copy per run."""
    key = ("batch", law, dt)
    if key not in _RUNNERS:
        functions = SlowStepFunctions(make_chunk(law, dt), _no_identifier, _never, _keep,
                                      lambda params, state, feedback, ag: ns_step(params, state, feedback, ag))
        _RUNNERS[key] = jax.jit(jax.vmap(lambda site, initial, ag: run_fused(functions, site, initial, ag),
                                         in_axes=(_SITE_AXES, _INITIAL_AXES, None)))
    return _RUNNERS[key]


def batch_initial_state(site: SiteParams, nsp, seeds: list[int]) -> LoopState:
    """The initial loop state of a batch (axes :data:`_INITIAL_AXES`): the NS at rest,
    each run's site state from its noise seed (leading axis: run), the NS's parameters
    once (shared)."""
    n = len(seeds)
    stacked = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *[site_init(site, seed) for seed in seeds])
    at_rest = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (n,) + jnp.shape(leaf)), ns_init(nsp))
    return LoopState(at_rest, stacked, jnp.zeros((n, 2)), nsp, ())


def run_batch(cfg: StudyConfig, plants: list, ground_accel, run_seeds: list[int], size: int | None = None) -> list[dict]:
    """``len(plants)`` vRTHS as one vmap-ed call, padded to ``size`` runs (copies of the
    last plant, results dropped); the logs of each run like :func:`run_once`'s."""
    if not plants or len(plants) != len(run_seeds):
        raise ParameterError(f"run_batch needs one seed per plant and at least one plant; got {len(plants)} plants "
                             f"and {len(run_seeds)} seeds")
    size = len(plants) if size is None else size
    if size < len(plants):
        raise ParameterError(f"run_batch: size must be >= the number of plants ({len(plants)}); got {size}")
    model = marths_model()
    dt = 1.0 / LOOP_RATE_HZ
    padded = list(plants) + [plants[-1]] * (size - len(plants))
    seeds = list(run_seeds) + [run_seeds[-1]] * (size - len(plants))
    site = _site_params(cfg, model, dt, padded[0])
    site = site._replace(plant=stack_plants([true_plant(p, dt) for p in padded]))
    initial = batch_initial_state(site, ns_params(model, dt), seeds)
    _, logs = _batched_runner(cfg.controller, dt)(site, initial, jnp.asarray(ground_accel))
    logs = jax.device_get(logs)
    merged = dict(logs["fast"], **logs["ns"])
    return [{k: np.asarray(v[i]) for k, v in merged.items()} for i in range(len(plants))]


def study_plants(cfg: StudyConfig) -> list:
    """The nominal plant, then ``cfg.uncertain`` draws from ``cfg.seed``; run i's sensor
    noise is seeded by ``cfg.seed + i``."""
    return [NOMINAL_PLANT] + sample_plants(cfg.uncertain, cfg.seed)


def _references(cfg: StudyConfig):
    model = marths_model()
    dt = 1.0 / LOOP_RATE_HZ
    ag = ground_motion(cfg.record, cfg.scale, cfg.duration)
    ref = reference_response(model, ag, dt)
    ref_interface = model.psi(ref, INTERFACE_NAMES)
    ref_interface_tk = np.vstack([np.zeros((1, 2)), ref_interface[:-1]])  # at t_k (module metrics doc)
    return ag, ref_interface_tk, model.psi(ref, UPPER_NAMES)


def run_summary(cfg: StudyConfig, logs: dict, ref_interface_tk, ref_upper) -> dict:
    """What a study keeps of one run: J1–J10, the J2 of the estimated strokes and the
    realisability report."""
    nrms = "std" if cfg.convention == "official" else "rms"
    return {
        "J": bmetrics.run_indices(LOOP_RATE_HZ, logs, ref_interface_tk, ref_upper, cfg.convention),
        # the paper's "NRMS with η̂_m" (3.2 % / 13 % in the lab; §5.4): η̂_m against η_ns
        "J2_estimated": [float(v) for v in np.atleast_1d(nrms_error_percent(logs["eta_target"], logs["eta_estimated"],
                                                                            nrms))],
        "realisability": realisability_report(logs["command_v"], logs["actuator_force"], logs["stroke"],
                                              1.0 / LOOP_RATE_HZ, cfg.saturation_v),
    }


def study_threads(cfg: StudyConfig) -> int:
    """How many batches run side by side: ``cfg.threads``, or one per CPU core."""
    return cfg.threads if cfg.threads > 0 else max(1, os.cpu_count() or 1)


def iter_batches(cfg: StudyConfig, first: int, count: int, keep_histories: int = 0, references=None):
    """Runs ``first … first+count-1`` of the study (0: nominal), one by one
    (``cfg.batch == 0``) or in vmap-ed batches of ``cfg.batch``; yields, in run order
    as the batches return, (their run indices, their :func:`run_summary` list, the
    histories of those with index < ``keep_histories``). The histories kept are copies:
    they do not hold the batch's arrays, which are dropped once summarised.

    :func:`study_threads` batches are computed side by side (a thread each: a compiled
    call runs on its caller's thread and releases the GIL), at most that many in flight
    so memory stays bounded; the first batch runs alone (it compiles the program)."""
    plants = study_plants(cfg)
    if not (0 <= first and count >= 1 and first + count <= len(plants)):
        raise ParameterError(f"run_chunk: runs {first}…{first + count - 1} outside the study's 0…{len(plants) - 1}")
    ag, ref_interface_tk, ref_upper = _references(cfg) if references is None else references
    step = cfg.batch if cfg.batch > 0 else 1

    def work(indices):
        if cfg.batch > 0:
            batch_logs = run_batch(cfg, [plants[i] for i in indices], ag, [cfg.seed + i for i in indices], cfg.batch)
        else:
            batch_logs = [run_once(cfg, plants[i], ag, cfg.seed + i) for i in indices]
        summaries = [run_summary(cfg, logs, ref_interface_tk, ref_upper) for logs in batch_logs]
        histories = [{k: np.array(v, copy=True) for k, v in logs.items()}
                     for i, logs in zip(indices, batch_logs) if i < keep_histories]
        return indices, summaries, histories

    batches = [list(range(start, min(start + step, first + count))) for start in range(first, first + count, step)]
    yield work(batches[0])
    rest = iter(batches[1:])
    with ThreadPoolExecutor(max_workers=study_threads(cfg)) as pool:
        in_flight = deque(pool.submit(work, b) for b in itertools.islice(rest, study_threads(cfg)))
        try:
            while in_flight:
                done = in_flight.popleft().result()
                following = next(rest, None)
                if following is not None:
                    in_flight.append(pool.submit(work, following))
                yield done
        finally:  # stopped early (an exception, a closed generator): drop what is queued
            for future in in_flight:
                future.cancel()


def run_chunk(cfg: StudyConfig, first: int, count: int, keep_histories: int = 0, references=None):
    """Runs ``first … first+count-1`` of the study (:func:`iter_batches`). Returns (their
    :func:`run_summary` list, the histories of those with index < ``keep_histories``).
    A pure function of its arguments: what a cluster worker runs (:mod:`.distributed`)."""
    summaries, histories = [], []
    for _, batch_summaries, batch_histories in iter_batches(cfg, first, count, keep_histories, references):
        summaries += batch_summaries
        histories += batch_histories
    return summaries, histories


class _StudySink:
    """Where a study's finished runs go, in any order: the summaries by run (small: J,
    realisability), the test record (a row per run, once each; the kept histories
    attached before the first row), ``on_run(run, summary)`` and ``progress(done,
    total)``."""

    def __init__(self, total: int, n_keep: int, recorder=None, on_run=None, progress=None):
        self.total, self.n_keep = total, n_keep
        self.recorder, self.on_run, self.progress = recorder, on_run, progress
        self.summaries: dict[int, dict] = {}
        self.histories: list[dict] = []
        self._pending: list[tuple[int, dict]] = []  # rows waiting for the kept histories

    def add(self, indices: list[int], summaries: list[dict], histories: list[dict] = ()) -> None:
        for logs in histories:
            if self.recorder is not None:
                self.recorder.attach_history(len(self.histories), logs)
            self.histories.append(logs)
        for run, summary in zip(indices, summaries):
            if run in self.summaries:  # a retried task's second answer
                continue
            self.summaries[run] = summary
            self._pending.append((run, summary))
        if len(self.histories) >= self.n_keep:
            for run, summary in self._pending:
                if self.recorder is not None:
                    self.recorder.add_run(run, summary)
                if self.on_run is not None:
                    self.on_run(run, summary)
            self._pending.clear()
        if self.progress is not None:
            self.progress(len(self.summaries), self.total)

    def ordered(self) -> list[dict]:
        missing = sorted(set(range(self.total)) - set(self.summaries))
        if missing:
            raise RuntimeError(f"the study ended without runs {missing}")
        return [self.summaries[i] for i in range(self.total)]


def chunk_summaries(cfg: StudyConfig, first: int, count: int) -> list:
    """The per-run summaries of runs ``first`` … ``first + count − 1`` (what a cluster
    worker sends back: :func:`run_chunk` without the histories)."""
    return run_chunk(cfg, first, count)[0]


def run_study(cfg: StudyConfig, keep_histories: int = 2, executor=None, test_record=None, progress=None,
              on_run=None, test_file: str | None = None) -> dict:
    """Nominal + ``cfg.uncertain`` random plants. Returns the study's result (JSON keys
    of ``rths-ident run marths`` and ``_arrays`` for the plots: the first
    ``keep_histories`` runs' histories, no other).

    ``executor`` (e.g. :class:`~rths_ident.dask_cluster.DaskExecutor`)
    runs the chunks elsewhere: ``executor.iter_chunks(chunk_summaries, cfg, chunks)`` yields
    ``(first run, summaries)`` per chunk as each completes, in any order; the kept runs
    run here first. With ``cfg.dask`` set and no executor, one is opened for the study
    and closed after it.

    ``test_record``: a path: the study's record (:mod:`.study_record`), a row per run as
    it finishes; stopped by an exception, the record keeps the finished runs and the
    error. ``progress(done, total)`` is called after each batch or chunk (e.g.
    a study's progress line); ``on_run(run, summary)`` after each run's row; ``test_file``:
    the test file's text the record keeps."""
    if executor is None and cfg.dask is not None and cfg.uncertain + 1 > keep_histories:
        from rths_ident.dask_cluster import DaskExecutor  # noqa: PLC0415

        with DaskExecutor(cfg.dask) as cluster:
            return run_study(cfg, keep_histories, cluster, test_record, progress, on_run, test_file)
    start = _time.perf_counter()
    model = marths_model()
    dt = 1.0 / LOOP_RATE_HZ
    references = _references(cfg)
    ag, ref_interface_tk, ref_upper = references
    t = np.arange(1, ag.size + 1) * dt
    plants = study_plants(cfg)
    n_keep = min(keep_histories, len(plants))
    recorder = None
    if test_record is not None:
        from rths_ident.benchmarks.marths.study_record import StudyRecorder  # noqa: PLC0415

        recorder = StudyRecorder(test_record, cfg, plants, (t, ref_interface_tk, ref_upper), test_file=test_file)
    with recorder if recorder is not None else contextlib.nullcontext():
        sink = _StudySink(len(plants), n_keep, recorder, on_run, progress)
        if executor is None:
            for indices, summaries, histories in iter_batches(cfg, 0, len(plants), n_keep, references):
                sink.add(indices, summaries, histories)
        else:
            if n_keep:
                for indices, summaries, histories in iter_batches(cfg, 0, n_keep, n_keep, references):
                    sink.add(indices, summaries, histories)
            size = max(cfg.batch, 1)
            chunks = [(s, min(size, len(plants) - s)) for s in range(n_keep, len(plants), size)]
            for first, summaries in executor.iter_chunks(chunk_summaries, cfg, chunks):
                sink.add(list(range(first, first + len(summaries))), summaries)
        result = _study_result(cfg, model, plants, sink.ordered(), t)
        result["wall_s"] = _time.perf_counter() - start
        if recorder is not None:
            recorder.finish({k: v for k, v in result.items() if not k.startswith("_")})
    result["_arrays"] = {"time": t, "reference_interface": ref_interface_tk, "reference_upper": ref_upper,
                         "histories": sink.histories}
    return result


def _study_result(cfg: StudyConfig, model, plants: list, summaries: list[dict], t) -> dict:
    """The study's JSON keys from its per-run summaries (sorted by run)."""
    runs = [s["J"] for s in summaries]
    j2_estimated = [s["J2_estimated"] for s in summaries]
    reports = [s["realisability"] for s in summaries]
    nominal, uncertain = runs[0], runs[1:]
    return {
        "scenario": "marths",
        "record": RECORDS[cfg.record],
        "scale": cfg.scale,
        "controller": cfg.controller,
        "convention": cfg.convention,
        "loop_rate_hz": LOOP_RATE_HZ,
        "sim_duration_s": float(t[-1]),
        "batch": cfg.batch,
        "dask": cfg.dask,
        "modal_frequencies_hz": [float(f) for f in model.frequencies_hz[:5]],
        "rayleigh": {"a0_per_s": model.rayleigh[0], "a1_s": model.rayleigh[1]},
        "J_nominal": nominal,
        "J_uncertain_mean": bmetrics.average_indices(uncertain, cfg.convention) if uncertain else None,
        "J_reported": bmetrics.reported_indices(nominal, uncertain, cfg.convention),
        "J_runs": runs,
        "J2_estimated_nominal": j2_estimated[0],
        "J2_estimated_uncertain_mean": ([float(v) for v in np.mean(j2_estimated[1:], axis=0)]
                                        if uncertain else None),
        "plants": [plant_as_dict(p) for p in plants],
        "plant_seed": cfg.seed,
        # the package's test: every run's commands within the saturation
        "realisable": all(r["commands_within_saturation"] for r in reports),
        "limits_respected": all(r["limits_respected"] for r in reports),
        "realisability": reports,
    }
