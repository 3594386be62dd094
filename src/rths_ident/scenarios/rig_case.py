"""What the seed 002 rig scenarios (``rig-sdof``, ``rig-bridge``) share: a case (numerical
part, load, seed 002's numbers), the envelope check, the monolithic reference, the hybrid
run on a site, the comparison and the report with seed 002's numbers beside ours.

A run, in order (digest 002 §6 A, B, F):

1. **stability** — Ω_e = Δt·√(K_e/m) ≤ 2 at the interface (:class:`TimeStepError`
   otherwise) and ρ of the partitioned scheme with the specimen's K_e;
2. **envelope** — a numerical dry run (the monolithic Lagrange reference with the
   identified specimen): max interface |u| ≤ stroke, max |λ| ≤ force limit, dominant
   response frequency ≤ 3.5 Hz (the thesis' f_s/2, its 0.143 s cycle); with
   ``envelope="enforce"`` (default) a flagged case does not touch the rig;
3. **hybrid** — :class:`~rths_ident.structures.partitioned_newmark.PartitionedNewmark`
   against the site (``--site``) through the step-wise engine; a rig fault ends the run
   with the completed steps kept (``result["aborted"]``, the site's record);
4. **comparison** — RMS and peak error against the reference, lag by cross-correlation,
   per-step timing (device vs numerical, seed 002 Table 4-1).

Loads: external forces on the numerical DOFs and base excitation as seed 002 eq. 6-1:
f_i = s·M_i·ẍ_g on the numerical DOFs, the specimen's mass added at the interface DOF
(its base is fixed in the lab), s = −1 (relative coordinates, default) or +1 (the
thesis' sign; for these linear cases it only mirrors the response). With the load on the
interface DOF, λ of the monolithic reference is the specimen's restoring force
M_e ü + C_e u̇ + K_e u — what the rig measures.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Callable, ClassVar

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.figure_views import STYLES
from rths_ident.hybrid.loop.engine import LoopAborted, run_stepwise
from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor
from rths_ident.runner.events import TestStarted
from rths_ident.declaration import Field
from rths_ident.runner.options import RunOptions
from rths_ident.scenarios import components, fields
from rths_ident.scenarios.config import InterlockSettings, check_interlock_settings
from rths_ident.scenarios.kinds import kind_names
from rths_ident.rigs.calibration import KINEMATIC_MODELS, SEED002_FORCE_LIMIT_N, SEED002_STROKE_LIMIT_M, ServoKinematics
from rths_ident.rigs.emulator import VirtualSpecimen
from rths_ident.rigs.errors import RigError, RigUnavailable
from rths_ident.rigs.hardware_site import MODES, RigLimits, ServoRigCalibration
from rths_ident.rigs.site_spec import open_site, parse_site, site_field
from rths_ident.structures.partitioned_newmark import (
    PartitionedNewmark,
    check_partitioned_time_step,
    coupled_with_specimen,
    monolithic_newmark,
    spectral_radius,
)
from rths_ident.structures.stability import TimeStepError

#: seed 002 §4.4: 0.143 s per cycle → f_s = 7 Hz → f_max = 3.5 Hz
FREQUENCY_LIMIT_HZ = 3.5
#: seed 002 §5.3: below ≈ 2 mm the force resolution is reached
AMPLITUDE_FLOOR_M = 0.002
ENVELOPE_MODES = ("enforce", "warn")
INERTIA_MODES = ("rig", "numerical")
LOAD_SIGNS = ("relative", "thesis")


@dataclasses.dataclass(frozen=True)
class RigCase:
    """One of seed 002's test cases: numerical part, interface, load, seed 002's numbers."""

    name: str
    description: str
    mass: np.ndarray  # (n, n) kg
    damping: np.ndarray  # (n, n) N·s/m
    stiffness: np.ndarray  # (n, n) N/m
    interface_dof: int
    displacement0: np.ndarray  # (n,) m (the interface value is also the specimen's)
    steps: int
    external_force: Callable[[float], np.ndarray] | None = None  # t -> (n,) N
    ground_accel: Callable[[np.ndarray], np.ndarray] | None = None  # t (array) -> m/s²
    dof_names: tuple = ("u",)
    #: seed 002's numbers: (label, value, unit, source) rows; source "[T]" thesis, "[D]" digest
    seed002: tuple = ()


@dataclasses.dataclass(frozen=True)
class RigTestConfig(InterlockSettings):
    """A rig scenario run (SI). ``site``: a ``--site`` string; ``kinematics``: servo
    angle from displacement, exact ``asin`` (default) or the thesis' ``arc``."""

    SCENARIO: ClassVar[str] = "rig-test"
    CASES: ClassVar[tuple] = ()
    CASE_STEPS: ClassVar[dict] = {}  # case -> its number of steps

    case: str = ""
    site: str = "emulator"
    kinematics: str = "asin"
    envelope: str = "enforce"
    rig_mode: str = "pseudo-dynamic"
    dt: float = 0.01
    steps: int | None = None  # None: the case's
    seed: int = 0
    load_sign: str = "relative"
    specimen_inertia: str = "rig"  # "numerical": M_e moves into the NS interface mass (pseudo-dynamic practice)
    specimen_mass: float = 0.356  # the virtual specimen (emulator, direct) and the reference: Table 5-4
    specimen_damping: float = 5.43
    specimen_stiffness: float = 1540.0
    stroke_limit: float = SEED002_STROKE_LIMIT_M
    force_limit: float = SEED002_FORCE_LIMIT_N
    # what run_command reads of every scenario config
    updating: ClassVar[str] = "none"
    ns: ClassVar[str] = "partitioned-newmark"

    def bad(self, field: str, expected: str):
        raise ParameterError(f"{self.SCENARIO} {field} = {getattr(self, field)!r}: expected {expected}")

    def __post_init__(self):
        if self.case not in self.CASES:
            self.bad("case", " | ".join(self.CASES))
        parse_site(self.site)
        if self.kinematics not in KINEMATIC_MODELS:
            self.bad("kinematics", " | ".join(KINEMATIC_MODELS))
        if self.envelope not in ENVELOPE_MODES:
            self.bad("envelope", " | ".join(ENVELOPE_MODES))
        if self.rig_mode not in MODES:
            self.bad("rig_mode", " | ".join(MODES))
        if self.specimen_inertia not in INERTIA_MODES:
            self.bad("specimen_inertia", " | ".join(INERTIA_MODES))
        if self.load_sign not in LOAD_SIGNS:
            self.bad("load_sign", " | ".join(LOAD_SIGNS))
        if not (np.isfinite(self.dt) and 0 < self.dt <= 1.0):
            self.bad("dt", "a time step in (0, 1] s")
        if self.steps is not None and (int(self.steps) != self.steps or self.steps < 2):
            self.bad("steps", "an integer ≥ 2")
        for name in ("specimen_mass", "specimen_damping", "specimen_stiffness", "stroke_limit", "force_limit"):
            if not (np.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                self.bad(name, "a finite number ≥ 0")
        check_interlock_settings(self)

    # run_command's progress bar and banner
    @property
    def record(self) -> str:
        return f"seed 002 {self.case}"

    @property
    def slow_rate(self) -> float:
        return 1.0 / self.dt

    @property
    def duration(self) -> float | None:
        return None if self.steps is None else self.steps * self.dt

    @property
    def slow_steps(self) -> int:
        """Steps of the run (the progress bar's total)."""
        return self.steps if self.steps is not None else self.CASE_STEPS[self.case]


def rig_fields(cases: tuple, extra: list[Field] = ()) -> list[Field]:
    """The test-file fields of a rig test (seed 002's rig; ``cases``: the kind's cases)."""
    return [
        *fields.test_fields(kind_names),
        Field("case.name", "case", "seed 002's case", kind=str, choices=cases, option="--case"),
        Field("rates.slow", "slow_rate", "the test's rate (Δt = 1/rate; seed 002: 100 Hz)", unit="Hz", low=1.0,
              option="--slow-rate", default=100.0),
        Field("record.duration", "duration", "seconds to run (leave out: the case's own length)", unit="s",
              low=1e-9, optional=True, option="--duration"),
        *extra,
        site_field(lambda kind: kind.rig, option="--site"),
        Field("specimen.inertia", "specimen_inertia", "the specimen's mass M_e measured on the rig, or carried by the "
              "numerical model (pseudo-dynamic practice)", kind=str, choices=INERTIA_MODES,
              option="--specimen-inertia"),
        Field("specimen.mass", "specimen_mass", "M_e of the virtual specimen (emulator, direct) and the reference "
              "(seed 002 Table 5-4)", unit="kg", low=0.0),
        Field("specimen.damping", "specimen_damping", "C_e (Table 5-4)", unit="N·s/m", low=0.0),
        Field("specimen.stiffness", "specimen_stiffness", "K_e (Table 5-4)", unit="N/m", low=0.0),
        Field("rig.kinematics", "kinematics", "servo angle from displacement: exact asin or the thesis' arc",
              kind=str, choices=KINEMATIC_MODELS, option="--kinematics"),
        Field("rig.mode", "rig_mode", "pseudo-dynamic (as slow as the rig needs) or real-time (paced to Δt; an "
              "overrun aborts)", kind=str, choices=MODES, option="--rig-mode"),
        Field("rig.envelope", "envelope", "a case whose reference exceeds the rig's limits is refused (enforce) or "
              "run (warn; the site stops it safely)", kind=str, choices=ENVELOPE_MODES, option="--envelope"),
        Field("rig.stroke_limit", "stroke_limit", "the rig's stroke", unit="m", low=0.0),
        Field("rig.force_limit", "force_limit", "the rig's force", unit="N", low=0.0),
        Field("rig.load_sign", "load_sign", "sign convention of the ground load (relative: −M ẍ_g; thesis: as "
              "printed)", kind=str, choices=LOAD_SIGNS),
        Field("sensors.seed", "seed", "the emulated board's noise seed", kind=int, option="--seed"),
        *fields.interlock_fields("the rig's", velocity_limits=False,
                                 measured_stroke="1.05 × the rig's stroke limit: the command is held to the stroke, "
                                 "a reading at it is not a fault"),
        *fields.run_fields(engines=("stepwise",), compare=False, realtime=False),
    ]


def config_from_values(config_class, values: dict):
    """A rig config from a test file's checked values: the rate sets Δt, a duration the
    number of steps."""
    values = dict(values)
    rate, duration = values.pop("slow_rate", None), values.pop("duration", None)
    if rate is not None:
        values["dt"] = 1.0 / rate
    if duration is not None:
        values["steps"] = int(round(duration / values.get("dt", 0.01)))
    values.setdefault("case", config_class.CASES[0])
    return config_class(**values)


def _loads(case: RigCase, cfg: RigTestConfig, t: np.ndarray):
    """Monolithic loads (steps+1, n+1), hybrid ground influence (n,) and ẍ_g(t)."""
    n = case.mass.shape[0]
    ag = np.zeros_like(t) if case.ground_accel is None else np.asarray(case.ground_accel(t), dtype=float)
    sign = -1.0 if cfg.load_sign == "relative" else 1.0
    influence = sign * np.diag(case.mass).copy()
    influence[case.interface_dof] += sign * cfg.specimen_mass  # eq. 6-1: the specimen's mass at the interface
    loads = np.zeros((t.size, n + 1))
    loads[:, :n] = np.outer(ag, influence)
    if case.external_force is not None:
        loads[:, :n] += np.array([case.external_force(ti) for ti in t])
    return loads, influence, ag


def reference(case: RigCase, cfg: RigTestConfig, steps: int) -> dict:
    """The monolithic Lagrange reference with the configured specimen (eq. 6-1 loads)."""
    m, c, k, b = coupled_with_specimen(case.mass, case.damping, case.stiffness, [case.interface_dof],
                                       cfg.specimen_mass, cfg.specimen_damping, cfg.specimen_stiffness)
    t = cfg.dt * np.arange(steps + 1)
    loads, _, _ = _loads(case, cfg, t)
    u0 = np.append(case.displacement0, case.displacement0[case.interface_dof])
    out = monolithic_newmark(m, c, k, b, loads, cfg.dt, displacement0=u0)
    n = case.mass.shape[0]
    return {"time": out["time"], "displacement": out["displacement"][:, :n],
            "specimen_force": out["multiplier"][:, 0]}


def dominant_frequency(t: np.ndarray, x: np.ndarray) -> float:
    """Frequency [Hz] of the largest spectral peak of x (mean removed, Hann window)."""
    x = (x - x.mean()) * np.hanning(x.size)
    spectrum = np.abs(np.fft.rfft(x, n=8 * x.size))
    freqs = np.fft.rfftfreq(8 * x.size, d=t[1] - t[0])
    return float(freqs[np.argmax(spectrum[1:]) + 1])


def envelope_check(case: RigCase, cfg: RigTestConfig, ref: dict) -> dict:
    """Seed 002's pre-run checks on the reference (digest §6 F); ``flags`` lists the violations."""
    u = ref["displacement"][:, case.interface_dof]
    max_u = float(np.max(np.abs(u)))
    max_force = float(np.max(np.abs(ref["specimen_force"])))
    frequency = dominant_frequency(ref["time"], u)
    flags = []
    if max_u > cfg.stroke_limit:
        flags.append(f"stroke: max interface |u| = {max_u * 1e3:.2f} mm > {cfg.stroke_limit * 1e3:g} mm")
    if max_force > cfg.force_limit:
        flags.append(f"force: max |λ| = {max_force:.2f} N > {cfg.force_limit:g} N")
    if frequency > FREQUENCY_LIMIT_HZ:
        flags.append(f"frequency: dominant {frequency:.2f} Hz > {FREQUENCY_LIMIT_HZ:g} Hz")
    return {"max_interface_displacement_m": max_u, "max_specimen_force_N": max_force,
            "dominant_frequency_hz": frequency, "below_amplitude_floor": bool(max_u < AMPLITUDE_FLOOR_M),
            "flags": flags}


def _lag(t, reference_u, hybrid_u, max_lag: float = 0.2) -> float:
    """Lag [s] of hybrid behind reference maximising their cross-correlation (±max_lag)."""
    dt = t[1] - t[0]
    n = reference_u.size
    largest = min(int(max_lag / dt), n // 2)
    shifts = range(-largest, largest + 1)

    def corr(s):
        if s >= 0:
            return float(np.dot(reference_u[: n - s], hybrid_u[s:]))
        return float(np.dot(reference_u[-s:], hybrid_u[: n + s]))

    return min(shifts, key=lambda s: -corr(s)) * dt


def compare(t, reference_u, hybrid_u) -> dict:
    """RMS and peak errors [m], RMS error as % of the reference peak, lag [s]."""
    n = hybrid_u.shape[0]
    ref = reference_u[:n]
    error = hybrid_u - ref
    peak = float(np.max(np.abs(ref)))
    return {"rms_error_m": float(np.sqrt(np.mean(error**2))), "max_error_m": float(np.max(np.abs(error))),
            "rms_error_percent_of_peak": float(np.sqrt(np.mean(error**2)) / peak * 100.0) if peak > 0 else None,
            "peak_reference_m": peak, "peak_hybrid_m": float(np.max(np.abs(hybrid_u))),
            "lag_s": _lag(t[:n], ref, hybrid_u) if n > 3 else None}


def first_peaks(t, u, count: int = 2) -> list:
    """(time, value) of the first ``count`` sampled positive maxima (as seed 002 reads them)."""
    i = np.flatnonzero((u[1:-1] > u[:-2]) & (u[1:-1] >= u[2:]) & (u[1:-1] > 0)) + 1
    return [(float(t[j]), float(u[j])) for j in i[:count]]


#: units of a rig run's test record (one row per slow step; the interface DOF(s) in columns)
RIG_RECORD_UNITS = {"fast/target": "m", "fast/measured": "m", "fast/force": "N", "fast/device_time": "s",
                    "ns/displacement": "m", "ns/velocity": "m/s", "ground_accel": "m/s^2"}


def _open_rig_record(path, case: RigCase, cfg: RigTestConfig, steps: int, test_file: str | None = None):
    """The crash-safe test record of a rig run (:mod:`rths_ident.records`): one row per
    slow step — target, measured displacement and force at the interface, the NS's
    displacements — so ``rths-ident fit RECORD --model linear`` identifies the specimen."""
    import dataclasses as _dc  # noqa: PLC0415

    from rths_ident.records import TestRecordWriter  # noqa: PLC0415

    units = dict(RIG_RECORD_UNITS)
    units["ns/displacement"] = {name: "m" for name in case.dof_names}
    units["ns/velocity"] = {name: "m/s" for name in case.dof_names}
    config = {"scenario": cfg.SCENARIO, "case": case.name, "settings": _dc.asdict(cfg), "steps": steps}
    if test_file is not None:
        config["test_file"] = test_file  # rths-ident run RECORD.h5 runs the test again
    # one "fast" sample per slow step: the rig is read once per step
    time_base = {"slow_rate_hz": 1.0 / cfg.dt, "fast_rate_hz": 1.0 / cfg.dt, "samples_per_step": 1,
                 "time": "steps/time[k] = t_k = k·Δt (step 0 measures the initial state, seed 002 Eq. 2-35)"}
    return TestRecordWriter.open(path, config, units, kind="run", time_base=time_base)


def _record_row(step_log: dict, ground_accel: float) -> dict:
    fast, ns = step_log["fast"], step_log["ns"]
    # one sample per step at one interface DOF: shape (samples_per_step,) = (1,)
    return {"time": float(ns["time"]),
            "fast": {"target": np.atleast_1d(fast["target"]), "measured": np.atleast_1d(fast["displacement"]),
                     "force": np.atleast_1d(fast["force"]), "device_time": np.atleast_1d(fast["device_time"])},
            "ns": {"displacement": np.asarray(ns["displacement"]), "velocity": np.asarray(ns["velocity"])},
            "ground_accel": float(ground_accel)}


def _watch_info(case: RigCase, cfg: RigTestConfig, steps: int, ref: dict) -> dict:
    """What the live page draws of a rig test (:class:`~rths_ident.runner.events.TestStarted`):
    one sample per slow step at the interface DOF, the response per DOF against the
    reference, the rig's stroke and force limits."""
    reference = np.asarray(ref["displacement"], dtype=float)  # step k at t_k = k·Δt
    return {"test": cfg.SCENARIO, "scenario": cfg.SCENARIO, "record": case.name, "updating": None,
            "compensation": None, "transition": None, "engine": "stepwise", "paced": False,
            "slow_rate_hz": 1.0 / cfg.dt, "fast_rate_hz": 1.0 / cfg.dt, "samples_per_step": 1, "steps": int(steps),
            "time_first_s": 0.0, "params": [], "guards": None,
            "response_names": list(case.dof_names), "reference": np.round(reference, 9).tolist(),
            "limits": {"stroke_m": float(cfg.stroke_limit), "force_N": float(cfg.force_limit)}, "views": STYLES,
            "command_is_displacement": False}  # the board's command is in its own units, not metres


def run_rig_test(case: RigCase, cfg: RigTestConfig, options: RunOptions = RunOptions()) -> dict:
    """Stability, envelope, reference, hybrid run, comparison (module doc).
    ``test_record``: a path where the run is recorded as it goes (each slow step; an
    abort keeps the completed steps and the error)."""
    steps = cfg.steps if cfg.steps is not None else case.steps
    ns_mass = case.mass.copy()
    rig_mass = cfg.specimen_mass
    if cfg.specimen_inertia == "numerical":  # the NS carries M_e; the rig shows C_e u̇ + K_e u
        ns_mass[case.interface_dof, case.interface_dof] += cfg.specimen_mass
        rig_mass = 0.0
    interface_mass = float(ns_mass[case.interface_dof, case.interface_dof])
    try:
        omega_e = check_partitioned_time_step(cfg.dt, cfg.specimen_stiffness, interface_mass)
    except TimeStepError as exc:  # refused before anything runs: the user's Δt
        raise ParameterError(f"{cfg.SCENARIO} --case {case.name}: {exc}") from exc
    rho = spectral_radius(ns_mass, case.damping, case.stiffness, [case.interface_dof], cfg.specimen_stiffness,
                          cfg.dt)
    # with the specimen's measured rate terms (the virtual specimen's differences): an explicit, lagged mass
    rho_specimen = spectral_radius(ns_mass, case.damping, case.stiffness, [case.interface_dof],
                                   cfg.specimen_stiffness, cfg.dt, specimen_mass=rig_mass,
                                   specimen_damping=cfg.specimen_damping)
    if rho_specimen > 1.0 + 1e-9:
        hint = (" Use --specimen-inertia numerical (the NS carries M_e, as a pseudo-dynamic test does)"
                if cfg.specimen_inertia == "rig" and cfg.specimen_mass > 0 else "")
        raise ParameterError(
            f"{cfg.SCENARIO} --case {case.name}: the partitioned scheme with the specimen's measured force "
            f"(M_e = {rig_mass:g} kg, C_e = {cfg.specimen_damping:g} N·s/m explicit, against an interface mass of "
            f"{interface_mass:g} kg) is unstable: ρ = {rho_specimen:.4f} > 1.{hint}")
    ref = reference(case, cfg, steps)
    envelope = envelope_check(case, cfg, ref)
    result = {"scenario": cfg.SCENARIO, "case": case.name, "description": case.description, "site": cfg.site,
              "dt_s": cfg.dt, "steps": steps, "rig_mode": cfg.rig_mode, "kinematics": cfg.kinematics,
              "omega_e": omega_e, "spectral_radius": rho, "spectral_radius_with_specimen_rates": rho_specimen,
              "specimen_inertia": cfg.specimen_inertia, "envelope": envelope, "dof_names": list(case.dof_names),
              "interface_dof": case.interface_dof, "aborted": None}
    if envelope["flags"] and cfg.envelope == "enforce":
        raise ParameterError(f"{cfg.SCENARIO} --case {case.name} is outside the rig's envelope ("
                             + "; ".join(envelope["flags"]) + "): not run on the rig. Use --envelope warn to run "
                             "anyway (the site's limits then stop it safely when reached)")
    t = cfg.dt * np.arange(steps + 1)
    _, influence, ag = _loads(case, cfg, t)
    ns = PartitionedNewmark(ns_mass, case.damping, case.stiffness, [case.interface_dof], cfg.dt,
                            displacement0=case.displacement0, external_force=case.external_force,
                            ground_influence=influence, specimen_stiffness=cfg.specimen_stiffness)
    specimen = VirtualSpecimen(rig_mass, cfg.specimen_damping, cfg.specimen_stiffness, cfg.dt)
    calibration = ServoRigCalibration(kinematics=ServoKinematics(model=cfg.kinematics))
    limits = RigLimits(stroke=cfg.stroke_limit, force=cfg.force_limit)
    numerical_time = []

    progress = options.step_callback(steps)
    record = (None if options.test_record is None
              else _open_rig_record(options.test_record, case, cfg, steps, options.test_file))

    def timed_on_step(k, step_log):
        if record is not None:
            record.append(_record_row(step_log, ag[k]))
        if progress is not None:
            progress(k, step_log)

    started = time.perf_counter()
    interlocks = components.rig_interlocks(cfg)
    with _site_or_why(cfg, record, specimen=specimen, calibration=calibration, limits=limits,
                      interlocks=interlocks.site_part()) as site:
        result["where"] = getattr(site, "where", cfg.site)
        timed_ns = _TimedSubstructure(ns, numerical_time)
        if record is not None:
            record.event("start", f"site {result['where']}", step=0, time=0.0)
        if options.events is not None:
            options.events.emit(TestStarted(cfg.SCENARIO, _watch_info(case, cfg, steps, ref)))
        try:
            # the site checks what it measures; the loop the NS, the identifier and the watchdog
            monitor = InterlockMonitor(interlocks.loop_part(), cfg.dt, time_offset=-cfg.dt)  # step k: t = k·Δt
            logs = run_stepwise(site, timed_ns, ag, on_step=timed_on_step, stop=options.stop,
                                monitor=monitor)
        except LoopAborted as aborted:
            logs = aborted.logs
            result["aborted"] = str(aborted)  # the engine's sentence: what failed, at which step, how the rig was left
            trip = aborted.trip
            if trip is not None:
                result["interlock"] = trip.as_dict()
            if record is not None:
                if trip is not None:
                    record.event("interlock", trip.message(), step=aborted.slow_index,
                                 time=aborted.slow_index * cfg.dt)
                record.event("error", str(aborted), step=aborted.slow_index,
                             time=aborted.slow_index * cfg.dt)
        except BaseException as exc:  # Ctrl-C (the operator's stop: the site was brought to rest), a bug
            if record is not None:
                step = getattr(exc, "slow_index", len(numerical_time))
                if isinstance(exc, KeyboardInterrupt):
                    record.event("stop", str(exc) or f"stopped by the operator (Ctrl-C) at slow step {step}",
                                 step=step, time=step * cfg.dt)
                else:
                    record.event("error", f"{type(exc).__name__}: {exc}", step=step, time=step * cfg.dt)
                record.close()
            raise
        site_record = site.record() if hasattr(site, "record") else {}
        result["site_events"] = list(getattr(site, "events", []))
    result["wall_s"] = time.perf_counter() - started
    completed = int(logs["ns"]["displacement"].shape[0]) if logs else 0
    result["completed_steps"] = completed
    if completed:
        u_h = logs["ns"]["displacement"]
        result["comparison"] = {name: compare(t, ref["displacement"][:, i], u_h[:, i])
                                for i, name in enumerate(case.dof_names)}
        result["max_measured_force_N"] = float(np.max(np.abs(logs["fast"]["force"])))
        device = logs["fast"].get("device_time")
        result["timing_ms"] = {"numerical_mean": 1e3 * float(np.mean(numerical_time[:completed])),
                               "device_mean": None if device is None else 1e3 * float(np.mean(device)),
                               "step_mean": 1e3 * result["wall_s"] / completed}
    result["_series"] = {"time": t, "reference": ref, "logs": logs, "site_record": site_record}
    if record is not None:
        if result["aborted"]:
            record.close()
        else:
            record.finish({"completed_steps": completed, "comparison": result.get("comparison", {})})
    return result


@contextlib.contextmanager
def _site_or_why(cfg, record, **site_options):
    """:func:`~rths_ident.rigs.site_spec.open_site` for the test; a rig that cannot be
    reached when the test starts (a port that does not exist or is not a board, no
    hello) is :class:`~rths_ident.rigs.errors.RigUnavailable` — nothing moved — and the
    record, if one was opened, says why and is closed."""
    opened = False
    try:
        with open_site(cfg.site, cfg.dt, seed=cfg.seed, mode=cfg.rig_mode, **site_options) as site:
            opened = True
            yield site
    except (RigError, OSError) as exc:
        if opened:
            raise
        message = f"--site {cfg.site}: the rig could not be reached, nothing moved: {exc}"
        if record is not None:
            record.event("error", message, step=0, time=0.0)
            record.close()
        raise RigUnavailable(message) from exc
    except KeyboardInterrupt:
        if not opened and record is not None:  # Ctrl-C while the board was being reached: nothing moved
            record.event("stop", "stopped by the operator (Ctrl-C) while the rig was being reached: nothing moved",
                         step=0, time=0.0)
            record.close()
        raise


class _TimedSubstructure:
    """The NS with the wall time of each step appended to ``times`` (Table 4-1's 'numerical')."""

    def __init__(self, ns, times: list):
        self.ns, self.times = ns, times
        self.dt, self.n_interface = ns.dt, ns.n_interface

    def initial_target(self):
        return self.ns.initial_target()

    def step(self, feedback, ground_accel):
        start = time.perf_counter()
        out = self.ns.step(feedback, ground_accel)
        self.times.append(time.perf_counter() - start)
        return out

    def apply_parameters(self, estimate):
        self.ns.apply_parameters(estimate)

    def close(self):
        self.ns.close()


def format_report(result: dict) -> str:
    """The text ``rths-ident run`` prints for a rig scenario."""
    env = result["envelope"]
    lines = [f"{result['scenario']} --case {result['case']} — {result['description']}",
             f"  site {result['site']} ({result.get('where', '')}), Δt {result['dt_s']:g} s, {result['steps']} steps, "
             f"{result['rig_mode']}, kinematics {result['kinematics']}",
             f"  stability: Ω_e = Δt·√(K_e/m) = {result['omega_e']:.3f} (limit 2), spectral radius ρ = "
             f"{result['spectral_radius']:.4f} (K_e explicit), {result['spectral_radius_with_specimen_rates']:.4f} "
             f"(with the measured C_e u̇ + M_e ü; specimen inertia: {result['specimen_inertia']})",
             f"  envelope (reference dry run): max interface |u| {env['max_interface_displacement_m'] * 1e3:.2f} mm, "
             f"max |λ| {env['max_specimen_force_N']:.2f} N, dominant {env['dominant_frequency_hz']:.2f} Hz → "
             + ("FLAGGED: " + "; ".join(env["flags"]) if env["flags"] else "within the rig's limits")]
    rows = result.get("seed002_side_by_side", [])
    if rows:
        lines.append(f"  {'quantity':34s} {'seed 002':>16s}  {'ours: reference':>16s}  {'ours: hybrid':>16s}")
        for label, value, unit, source, ours_ref, ours_hyb in rows:
            lines.append(f"  {label:34s} {_cell(value, unit) + ' ' + source:>16s}  {_cell(ours_ref, unit):>16s}  "
                         f"{_cell(ours_hyb, unit):>16s}")
    for name, c in result.get("comparison", {}).items():
        lag = "—" if c["lag_s"] is None else f"{c['lag_s'] * 1e3:.0f} ms"
        lines.append(f"  hybrid vs reference {name}: RMS error {c['rms_error_m'] * 1e3:.3f} mm "
                     f"({c['rms_error_percent_of_peak']:.2f} % of peak), max error {c['max_error_m'] * 1e3:.3f} mm, "
                     f"lag {lag}")
    ident = result.get("identification")
    if ident:
        lines.append(f"  identification (log decrement): δ {ident['delta']:.4f}, ζ {ident['zeta']:.4f}, T_d "
                     f"{ident['T_d']:.4f} s, ω_n {ident['omega_n']:.4f} rad/s → M_e {ident['M_e']:.3f} kg, C_e "
                     f"{ident['C_e']:.3f} N·s/m; M_e moves {ident['dM_e_per_dt']:.2f} kg per Δt of T_d")
        lines.append(f"  identification (least squares, K_e held {ident['K_e']:.0f} N/m): M_e {ident['ls_m']:.3f} kg, "
                     f"C_e {ident['ls_c']:.3f} N·s/m (NRMSE {ident['ls_nrmse']:.2f} %); all free: M_e "
                     f"{ident['free_m']:.3f}, K_e {ident['free_k']:.1f} (= K_e − M_e ω²: collinear in free vibration)")
    if "timing_ms" in result:
        tm = result["timing_ms"]
        device = "—" if tm["device_mean"] is None else f"{tm['device_mean']:.1f} ms"
        lines.append(f"  per step: numerical {tm['numerical_mean']:.3f} ms, device wait {device}, whole step "
                     f"{tm['step_mean']:.2f} ms (seed 002 Table 4-1: 90 + 52 = 143 ms)")
    if result.get("aborted"):
        lines.append(f"  ABORTED after {result['completed_steps']} completed steps: {result['aborted']}")
    return "\n".join(lines)


def _cell(value, unit) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, tuple):
        return f"{value[1] * 1e3:.3f} mm @ {value[0]:.2f} s"
    return f"{value:.4g} {unit}".strip()


def plot(result: dict, out_dir) -> list:
    """Reference vs hybrid displacement(s) and the specimen force (reference λ vs measured)."""
    from pathlib import Path  # noqa: PLC0415

    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    series = result["_series"]
    t, ref, logs = series["time"], series["reference"], series["logs"]
    names = result["dof_names"]
    fig = Figure(figsize=(9, 2.6 * (len(names) + 1)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(names) + 1, 1, sharex=True)
    for i, name in enumerate(names):
        ax = axes[i]
        ax.plot(t, ref["displacement"][:, i] * 1e3, "k-", lw=1.2, label="reference (monolithic Lagrange)")
        if logs:
            th = logs["ns"]["time"]
            ax.plot(th, logs["ns"]["displacement"][:, i] * 1e3, "r--", lw=1.0, label=f"hybrid ({result['site']})")
        if i == result["interface_dof"]:
            ax.axhline(1e3 * RigLimits().stroke, color="0.6", ls=":", lw=0.8)
            ax.axhline(-1e3 * RigLimits().stroke, color="0.6", ls=":", lw=0.8, label="stroke limit")
        ax.set_ylabel(f"{name} [mm]")
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    ax = axes[-1]
    ax.plot(t, ref["specimen_force"], "k-", lw=1.2, label="λ reference")
    if logs:
        ax.plot(logs["ns"]["time"], logs["fast"]["force"][:, 0], "r.", ms=2, label="measured force")
    ax.set_ylabel("specimen force [N]")
    ax.set_xlabel("time [s]")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.suptitle(f"{result['scenario']} --case {result['case']}: {result['description']}", fontsize=10)
    fig.tight_layout()
    path = out / f"{result['scenario']}_{result['case']}.png"
    fig.savefig(path, dpi=110)
    return [path]
