"""The test record of a maRTHS study (:mod:`rths_ident.records`): one row per finished run.

A study of many plants must not hold every run's time history, and a study stopped
halfway (killed, a worker lost for good, Ctrl-C) must keep the runs it finished. The
record is therefore written as the study goes (``docs/records.md``, "maRTHS studies"):

* at :class:`StudyRecorder` open: the configuration (:class:`~.study.StudyConfig`,
  the runs planned, every plant draw, the noise-seed rule, the realisability limits)
  and the reference response (attached as ``reference``);
* the kept runs' whole time histories (the nominal run first), attached as
  ``histories/run_<i>`` before the first row (HDF5 adds no dataset in SWMR mode);
* one row per finished run under ``/steps``, flushed at once: its index ``run`` (0 is
  the nominal plant), its noise ``seed``, J1–J10, J2 of η̂_m, the plant draw and the
  realisability summary. Rows come in the order runs finish (on a Dask cluster, any
  order); a run already recorded is not recorded again (a retried task);
* at the end, the study's JSON (the ``--json`` output) as the metrics and
  ``complete = True``.

:func:`study_rows` reads the rows back, sorted by run, as the study's per-run summaries
(the same dictionaries as :func:`~.study.run_summary`, plus ``run``, ``seed`` and
``plant``).
"""

from __future__ import annotations

import dataclasses
import time as _time

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.ideal_partition import INTERFACE_NAMES, UPPER_NAMES
from rths_ident.benchmarks.marths.metrics import INDEX_NAMES
from rths_ident.benchmarks.marths.realisability import LIMITS
from rths_ident.benchmarks.marths.uncertainty import plant_as_dict
from rths_ident.records import TestRecordWriter, read_test_record

__all__ = ["KIND", "ROW_UNITS", "HISTORY_UNITS", "StudyRecorder", "is_study_record", "study_rows"]

#: the record's ``kind``
KIND = "marths study"

_ACTUATORS = {"actuator1": "m", "actuator2": "m"}
_INTERFACE = {"x4": "m", "theta4": "rad"}
_UPPER = {name: ("rad" if name.startswith("theta") else "m") for name in UPPER_NAMES}
_J_UNITS = {name: "ms" if name in ("J1", "J4") else "%" for name in INDEX_NAMES}

#: units of a row (paths under /steps)
ROW_UNITS = {
    "time": "s (wall time since the study started, when the row was written)",
    "run": "1 (run index: 0 nominal plant, i ≥ 1 the i-th random draw)",
    "seed": "1 (the run's sensor-noise seed: plant seed + run)",
    **{f"J/{name}": unit for name, unit in _J_UNITS.items()},
    "J2_estimated": "%",
    "plant/column_poles_hz": "Hz",
    "plant/zeros_hz/H11": "Hz", "plant/zeros_hz/H21": "Hz", "plant/zeros_hz/H12": "Hz", "plant/zeros_hz/H22": "Hz",
    "plant/gains": "1 (Eq. 25 gain K_ij in s-units: H_ij(0) is dimensionless)",
    "plant/frame_pole_hz": {"real": "Hz", "imag": "Hz"},
    **{f"realisability/{name}/peak": unit for name, (_, unit) in LIMITS.items()},
    **{f"realisability/{name}/within": "1 (bool: both actuators within the limit)" for name in LIMITS},
    "realisability/commands_within_saturation": "1 (bool: the package's realisability test)",
    "realisability/limits_respected": "1 (bool: every limit respected)",
}

#: units of a run's time history (the fused engine's fast and NS logs, N steps at 1024 Hz)
HISTORY_UNITS = {
    "psi_target": _INTERFACE, "psi_estimated": _INTERFACE, "psi_interface": _INTERFACE,
    "eta_target": _ACTUATORS, "eta_measured": _ACTUATORS, "eta_estimated": _ACTUATORS, "stroke": _ACTUATORS,
    "command_v": {"actuator1": "V", "actuator2": "V"},
    "actuator_force": {"actuator1": "N", "actuator2": "N"},
    "load_cell": {"actuator1": "N", "actuator2": "N"},
    "feedback": {"force_x4": "N", "moment_theta4": "N·m"},
    "psi_upper": _UPPER,
}

#: units of the attached reference (the monolithic frame's response)
REFERENCE_UNITS = {"time": "s", "interface": dict(zip(INTERFACE_NAMES, _INTERFACE.values())), "upper": _UPPER}


def study_record_config(cfg, plants: list) -> dict:
    """What the record keeps as its configuration: the study's settings, the runs
    planned and every plant draw (run i uses ``plants[i]``)."""
    return {
        "scenario": "marths",
        "study": dataclasses.asdict(cfg),
        "runs_planned": len(plants),
        "plants": [plant_as_dict(p) for p in plants],
        "plant_seed": cfg.seed,
        "noise_seeds": "run i: plant_seed + i",
        "realisability_limits": {name: {"limit": float(cfg.saturation_v) if name == "command_v" else limit,
                                        "unit": unit} for name, (limit, unit) in LIMITS.items()},
    }


class StudyRecorder:
    """The record of one study as it goes (module doc); a context manager: an exception
    leaving the block is recorded as an error event (Ctrl-C as a stop event counting the
    finished runs), the rows so far stay.

    path: the ``.h5`` file; cfg: the :class:`~.study.StudyConfig`; plants: the study's
    plants (nominal first); references: ``(time [s], ψ at node 4 (N, 2), ψ of the upper
    storeys (N, 4))`` of the reference frame; clock: the wall clock of the rows' time;
    test_file: the test file's text the record keeps."""

    def __init__(self, path, cfg, plants: list, references, clock=_time.perf_counter, test_file: str | None = None):
        self._clock = clock
        self._started = clock()
        self._plants = list(plants)
        self._seed = int(cfg.seed)
        self._recorded: set[int] = set()
        time_base = {"rows": "one row per finished run, in the order the runs finished",
                     "time": "steps/time: wall seconds since the study started, when the row was written"}
        config = study_record_config(cfg, plants)
        if test_file is not None:
            config["test_file"] = test_file  # rths-ident run RECORD.h5 runs the study again
        self.writer = TestRecordWriter.open(path, config, ROW_UNITS, kind=KIND, time_base=time_base, flush_every=1)
        t, interface, upper = references
        self.writer.attach("reference", {"time": t, "interface": interface, "upper": upper}, REFERENCE_UNITS)
        self.writer.event("start", f"study of {len(plants)} runs (nominal + {len(plants) - 1} random plants)")

    @property
    def runs_recorded(self) -> int:
        return len(self._recorded)

    def attach_history(self, run: int, logs: dict) -> None:
        """Run ``run``'s whole time history (``run_once``'s logs), before the first row."""
        missing = sorted(set(logs) - set(HISTORY_UNITS))
        if missing:
            raise ParameterError(f"study record: no unit for the history datasets {', '.join(missing)}")
        self.writer.attach(f"histories/run_{int(run)}", logs, {k: HISTORY_UNITS[k] for k in logs})

    def add_run(self, run: int, summary: dict) -> bool:
        """Append run ``run``'s row (``summary``: :func:`~.study.run_summary`'s) and flush;
        False, and nothing written, when the run is already recorded (a retried task)."""
        run = int(run)
        if not 0 <= run < len(self._plants):
            raise ParameterError(f"study record: run {run} outside the study's 0…{len(self._plants) - 1}")
        if run in self._recorded:
            return False
        plant = plant_as_dict(self._plants[run])
        report = summary["realisability"]
        row = {
            "time": self._clock() - self._started,
            "run": np.int64(run),
            "seed": np.int64(self._seed + run),
            "J": {name: np.asarray(summary["J"][name], dtype=float) for name in INDEX_NAMES},
            "J2_estimated": np.asarray(summary["J2_estimated"], dtype=float),
            "plant": {"column_poles_hz": np.asarray(plant["column_poles_hz"], dtype=float),
                      "zeros_hz": {k: np.asarray(v, dtype=float) for k, v in plant["zeros_hz"].items()},
                      "gains": np.asarray(plant["gains"], dtype=float),
                      "frame_pole_hz": np.asarray(plant["frame_pole_hz"], dtype=float)},
            "realisability": {
                **{name: {"peak": np.asarray(report[name]["peak"], dtype=float),
                          "within": np.bool_(report[name]["within"])} for name in LIMITS},
                "commands_within_saturation": np.bool_(report["commands_within_saturation"]),
                "limits_respected": np.bool_(report["limits_respected"]),
            },
        }
        self.writer.append(row)
        self._recorded.add(run)
        return True

    def finish(self, metrics: dict) -> None:
        """The study ran to its end: its JSON as the metrics, ``complete = True``."""
        self.writer.finish(metrics)

    def close(self) -> None:
        self.writer.close()

    def __enter__(self) -> "StudyRecorder":
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if isinstance(exc, KeyboardInterrupt) and not self.writer.closed:  # the operator's stop, counted in runs
            done = len(self._recorded)
            self.writer.event("stop", f"stopped by the operator (Ctrl-C) after {done} of {len(self._plants)} runs "
                              f"(the finished runs are kept; missing runs: {len(self._plants) - done})",
                              step=done)
        return self.writer.__exit__(exc_type, exc, traceback)


def is_study_record(record) -> bool:
    """Whether a :class:`~rths_ident.records.TestRecord` is a maRTHS study's."""
    return record.kind == KIND


def study_rows(record) -> list[dict]:
    """The finished runs of a study record (a path or a
    :class:`~rths_ident.records.TestRecord`), sorted by run: ``run``, ``seed``,
    ``J`` (J1–J10, lists per component), ``J2_estimated``, ``plant`` (as in the JSON's
    ``plants``) and ``realisability`` (as in the JSON's, limits from the configuration)."""
    if not hasattr(record, "steps"):
        record = read_test_record(record)
    if not is_study_record(record):
        raise ParameterError(f"{record.path} is not a maRTHS study record (kind {record.kind!r})")
    steps, n = record.steps, record.n_steps
    limits = record.config["realisability_limits"]
    rows = []
    for k in np.argsort(steps["run"][:n], kind="stable") if n else []:
        report = {name: {"peak": [float(v) for v in steps[f"realisability/{name}/peak"][k]],
                         "limit": limits[name]["limit"], "unit": limits[name]["unit"],
                         "within": bool(steps[f"realisability/{name}/within"][k])} for name in LIMITS}
        report["commands_within_saturation"] = bool(steps["realisability/commands_within_saturation"][k])
        # records written before 2026-11-24 call it "realisable"
        respected = steps.get("realisability/limits_respected", steps.get("realisability/realisable"))
        report["limits_respected"] = bool(respected[k])
        rows.append({
            "run": int(steps["run"][k]),
            "seed": int(steps["seed"][k]),
            "J": {name: [float(v) for v in steps[f"J/{name}"][k]] for name in INDEX_NAMES},
            "J2_estimated": [float(v) for v in steps["J2_estimated"][k]],
            "plant": {"column_poles_hz": steps["plant/column_poles_hz"][k].tolist(),
                      "zeros_hz": {h: steps[f"plant/zeros_hz/{h}"][k].tolist() for h in ("H11", "H21", "H12", "H22")},
                      "gains": steps["plant/gains"][k].tolist(),
                      "frame_pole_hz": steps["plant/frame_pole_hz"][k].tolist()},
            "realisability": report,
        })
    return rows


def format_study_summary(record) -> str:
    """The text ``rths-ident show`` prints for a maRTHS study's record
    (:mod:`rths_ident.benchmarks.marths.study_record`): status, runs finished of those
    planned, the mean J1–J10 per component of the finished runs (nominal and uncertain
    apart), realisability, events, configuration and what is attached."""
    from rths_ident.benchmarks.marths.metrics import INDEX_NAMES  # noqa: PLC0415
    from rths_ident.records.summary import fields, inline, ranges  # noqa: PLC0415

    rows = study_rows(record)
    planned = int(record.config.get("runs_planned", 0))
    done = [row["run"] for row in rows]
    uncertain = [row for row in rows if row["run"] != 0]
    lines = [f"test record {record.path}"]
    lines += fields([
        ("kind", record.kind),
        ("created (UTC)", record.created_utc),
        ("status", _study_status(record, len(rows))),
        ("runs", f"{len(rows)} of {planned} finished (nominal {'done' if 0 in done else 'not done'}, "
                 f"{len(uncertain)} of {max(planned - 1, 0)} random plants)"
                 + ("" if len(rows) == planned else f"; missing runs {ranges(sorted(set(range(planned)) - set(done)))}")),
        ("software", ", ".join(f"{k} {v}" for k, v in record.software.items() if k != "platform")),
    ])
    lines.append("configuration")
    lines += fields((key, inline(value)) for key, value in record.config["study"].items())
    lines.append("J of the finished runs per component (J1, J4 [ms]; others [%])")
    nominal = next((row["J"] for row in rows if row["run"] == 0), None)
    table = []
    for name in INDEX_NAMES:
        text = "nominal " + (" / ".join(f"{v:.2f}" for v in nominal[name]) if nominal else "—")
        if uncertain:
            mean = np.mean([row["J"][name] for row in uncertain], axis=0)
            text += f"   mean of {len(uncertain)} uncertain " + " / ".join(f"{v:.2f}" for v in mean)
        table.append((name, text))
    lines += fields(table)
    saturation = sum(row["realisability"]["commands_within_saturation"] for row in rows)
    limits = sum(row["realisability"]["limits_respected"] for row in rows)
    lines.append("realisability")
    lines += fields([("commands within saturation", f"{saturation} of {len(rows)} runs"),
                      ("every limit respected", f"{limits} of {len(rows)} runs")])
    lines.append("events")
    lines += fields((f"{e.kind}" + ("" if e.step is None else f" @ row {e.step}"), e.message) for e in record.events)
    histories = sorted({path.split("/")[1] for path in record.attached if path.startswith("histories/")})
    lines.append("attached")
    lines += fields([("histories", ", ".join(histories) or "none"),
                      ("reference", "yes" if "reference/time" in record.attached else "no")])
    return "\n".join(lines)


def _study_status(record, rows: int) -> str:
    """Whether the study ran to its end, and if not, why (rows, not slow steps)."""
    errors = record.errors()
    if record.complete or not errors:
        return record.status()
    return f"not complete: stopped by an error after {rows} finished runs: {errors[0].message}"
