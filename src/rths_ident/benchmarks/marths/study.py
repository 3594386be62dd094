"""A maRTHS study: the nominal plant and M random plants on one record (digest §13 C).

Every run is the project's fused engine (:func:`rths_ident.hybrid.engine.run_fused`,
compiled once per control law and record length): the NS of :mod:`.substructure` as
``ns_step``, the fast side of :mod:`.site` as ``fast_chunk``; no identifier (the
model-updating hook never fires). The random plants differ only in pytree leaves (the
true plant's matrices), so they share the compiled loop; runs are sequential, and only
the metrics and, for the plots, the nominal and first uncertain histories are kept.
"""

from __future__ import annotations

import dataclasses
import time as _time

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident._params import ParameterError
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
from rths_ident.benchmarks.marths.site import LAWS, SiteParams, make_chunk, site_init, true_plant
from rths_ident.benchmarks.marths.substructure import ns_init, ns_params, ns_step
from rths_ident.benchmarks.marths.uncertainty import plant_as_dict, sample_plants
from rths_ident.estimators.online_identifier import Estimate
from rths_ident.hybrid.engine import LoopState, SlowStepFunctions, make_fused_runner

__all__ = ["RECORDS", "StudyConfig", "ground_motion", "run_study", "LOOP_RATE_HZ"]

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
    noise: sensor noise and quantization on/off."""

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
        if self.convention not in bmetrics.CONVENTIONS:
            raise ParameterError(f"convention must be one of {bmetrics.CONVENTIONS}; got {self.convention!r}")


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
    return Estimate(empty, empty, jnp.asarray(False))


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


def run_study(cfg: StudyConfig, keep_histories: int = 2) -> dict:
    """Nominal + ``cfg.uncertain`` random plants. Returns the study's result (JSON keys
    of ``rths-ident run marths`` and ``_arrays`` for the plots)."""
    start = _time.perf_counter()
    model = marths_model()
    dt = 1.0 / LOOP_RATE_HZ
    ag = ground_motion(cfg.record, cfg.scale, cfg.duration)
    ref = reference_response(model, ag, dt)
    ref_interface = model.psi(ref, INTERFACE_NAMES)
    ref_interface_tk = np.vstack([np.zeros((1, 2)), ref_interface[:-1]])  # at t_k (module metrics doc)
    ref_upper = model.psi(ref, UPPER_NAMES)
    plants = [NOMINAL_PLANT] + sample_plants(cfg.uncertain, cfg.seed)
    runs, reports, histories, j2_estimated = [], [], [], []
    nrms = "std" if cfg.convention == "official" else "rms"
    for i, plant in enumerate(plants):
        logs = run_once(cfg, plant, ag, cfg.seed + i)
        runs.append(bmetrics.run_indices(LOOP_RATE_HZ, logs, ref_interface_tk, ref_upper, cfg.convention))
        # the paper's "NRMS with η̂_m" (3.2 % / 13 % in the lab; §5.4): η̂_m against η_ns
        j2_estimated.append(np.atleast_1d(nrms_error_percent(logs["eta_target"], logs["eta_estimated"], nrms)))
        reports.append(realisability_report(logs["command_v"], logs["actuator_force"], logs["stroke"], dt,
                                            cfg.saturation_v))
        if i < keep_histories:
            histories.append(logs)
    nominal, uncertain = runs[0], runs[1:]
    t = np.arange(1, ag.size + 1) * dt
    return {
        "scenario": "marths",
        "record": RECORDS[cfg.record],
        "scale": cfg.scale,
        "controller": cfg.controller,
        "convention": cfg.convention,
        "loop_rate_hz": LOOP_RATE_HZ,
        "sim_duration_s": float(t[-1]),
        "modal_frequencies_hz": [float(f) for f in model.frequencies_hz[:5]],
        "rayleigh": {"a0_per_s": model.rayleigh[0], "a1_s": model.rayleigh[1]},
        "J_nominal": nominal,
        "J_uncertain_mean": bmetrics.average_indices(uncertain, cfg.convention) if uncertain else None,
        "J_reported": bmetrics.reported_indices(nominal, uncertain, cfg.convention),
        "J_runs": runs,
        "J2_estimated_nominal": [float(v) for v in j2_estimated[0]],
        "J2_estimated_uncertain_mean": ([float(v) for v in np.mean(j2_estimated[1:], axis=0)]
                                        if uncertain else None),
        "plants": [plant_as_dict(p) for p in plants],
        "plant_seed": cfg.seed,
        # the package's test: every run's commands within the saturation
        "realisable": all(r["commands_within_saturation"] for r in reports),
        "limits_respected": all(r["realisable"] for r in reports),
        "realisability": reports,
        "wall_s": _time.perf_counter() - start,
        "_arrays": {"time": t, "reference_interface": ref_interface_tk, "reference_upper": ref_upper,
                    "histories": histories},
    }
