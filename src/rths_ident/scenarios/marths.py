"""Scenario ``marths``: the multi-axial RTHS benchmark (seed 004; docs/benchmarks/marths.md).

The 3-storey, 3-bay frame of the benchmark package; the central first-storey frame is
the physical substructure, driven at joint 4 in translation and rotation by two
actuators through a rigid coupler; the transfer system is the identified 2×2 plant
(nominal and ``--uncertain`` random draws, Table 2); the control is the sample LQG
(``--controller lqg``), our dAMB per actuator (``damb``) or a perfect transfer
(``ideal``: the partition's own error). Each run is the project's fused engine with the
benchmark's pieces as its ``fast_chunk`` and ``ns_step`` (:mod:`rths_ident.benchmarks.marths.study`).

JSON keys: ``modal_frequencies_hz``, ``J_nominal``, ``J_uncertain_mean`` (``J1`` … ``J10``,
a list per component), ``J_reported`` (the convention's average), ``J_runs``, ``plants``
(the draws used), ``realisable`` (the package's test: commands within ±3.8 V in every run),
``limits_respected`` and ``realisability`` (force, velocity and stroke too).

The test record is the study's (:mod:`rths_ident.benchmarks.marths.study_record`): a row
per run as it finishes, so a study stopped halfway keeps its finished runs
(``rths-ident show`` summarises them).
"""

from __future__ import annotations

import numpy as np

from pathlib import Path

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.record_studies import RecordStudies, parse_records, run_record_studies
from rths_ident.benchmarks.marths.metrics import CONVENTIONS
from rths_ident.benchmarks.marths.site import LAWS
from rths_ident.benchmarks.marths.study import RECORDS, StudyConfig, quiet_start, run_study
from rths_ident.declaration import Field
from rths_ident.runner.events import StudyRun
from rths_ident.runner.options import RunOptions
from rths_ident.scenarios import fields
from rths_ident.scenarios.kinds import kind_names

SCENARIO = "marths"
#: the engines it runs on (its substructure is native: the fused loop)
ENGINES = ("fused",)


def _record_list(value) -> bool:
    """``elcentro,kobe`` or ``all`` (checked in full by ``parse_records``)."""
    return isinstance(value, str) and ("," in value or value.strip().lower() == "all")


CONFIG = StudyConfig

#: the test-file fields of a ``marths`` study (units per field; rths-ident new --from marths)
FIELDS = [
    *fields.test_fields(kind_names),
    Field("record.ground_motion", "record", "the benchmark's record: elcentro | kobe | morgan, several separated "
          "by commas, or all", kind=str, choices=tuple(RECORDS), open_choices=_record_list,
          open_doc="several separated by commas, or all", option="--record"),
    Field("record.scale", "scale", "factor on the record (the paper's El Centro × 0.40)", low=1e-9, option="--scale"),
    Field("record.duration", "duration", "seconds of the record to run (leave out: all of it)", unit="s", low=1e-9,
          optional=True, option="--duration"),
    Field("control.law", "controller", "the sample LQG, our dAMB per actuator, or a perfect transfer system",
          kind=str, choices=LAWS, option="--controller"),
    Field("control.saturation", "saturation_v", "the board's command saturation", unit="V", low=1e-9),
    Field("study.uncertain", "uncertain", "random plants besides the nominal one", kind=int, low=0,
          option="--uncertain"),
    Field("study.batch", "batch", "runs per vmap-ed compiled call (0: one by one; the same numbers)", kind=int,
          low=0, option="--batch"),
    Field("study.threads", "threads", "batches computed side by side on this machine (0: one per CPU core; the "
          "same numbers)", kind=int, low=0, option="--threads"),
    Field("study.dask", "dask", "run the study's batches on a Dask cluster: local (2 worker processes on "
          "127.0.0.1) or tcp://HOST:PORT of a running scheduler (the same numbers)", kind=str, optional=True,
          option="--dask"),
    Field("indices.convention", "convention", "J1–J10 as the paper defines them, or as the package's scorer "
          "computes them", kind=str, choices=CONVENTIONS, option="--convention"),
    Field("sensors.noise", "noise", "sensor noise and quantization (false: ideal sensors)", kind=bool,
          option="--no-noise", flag=False),
    Field("sensors.seed", "seed", "seed of the plant draws (sensor noise: seed + run)", kind=int, option="--seed"),
    *fields.run_fields(engines=ENGINES, compare=False, realtime=False),
]


def config_from_values(values: dict) -> StudyConfig | RecordStudies:
    """A :class:`~rths_ident.benchmarks.marths.study.StudyConfig` from a test file's
    checked values; several records (``elcentro,kobe`` or ``all``): a
    :class:`~rths_ident.benchmarks.marths.record_studies.RecordStudies`."""
    values = dict(values)
    records = parse_records(values.pop("record", None) or "elcentro")
    duration = values.get("duration")
    for record in records:  # J1–J10 of a test that never moves are undefined: told before the study
        if duration is not None and duration <= quiet_start(record):
            raise ParameterError(f"--duration {duration:g}: the {record} record is zero for its first "
                                 f"{quiet_start(record):g} s (the benchmark's padding), so nothing moves and "
                                 f"J1–J10 are undefined; expected a duration > {quiet_start(record):g} s")
    if len(records) > 1:
        return RecordStudies.for_records(records, **values)
    return StudyConfig(record=records[0], **values)


def run_scenario(cfg: StudyConfig | RecordStudies, options: RunOptions = RunOptions()) -> dict:
    """The study (nominal + uncertain plants), its record at ``options.test_record`` (a
    row per run as it finishes: :mod:`rths_ident.benchmarks.marths.study_record`);
    several records: a study each, their records beside it (:mod:`.record_studies`); a
    runs event after each finished batch (``options.events``). ``compare`` and
    ``realtime`` do not apply."""
    if options.engine != "fused":
        raise ParameterError("marths runs on the fused engine only (its substructure is native)")
    events = options.events
    if isinstance(cfg, RecordStudies):
        factory = None if events is None else events.runs_callback
        result = run_record_studies(cfg, test_record=options.test_record, progress_factory=factory,
                                    test_file=options.test_file,
                                    on_run_factory=None if events is None else _study_runs(events))
    else:
        result = run_study(cfg, test_record=options.test_record,
                           progress=None if events is None else events.runs_callback(cfg.record),
                           test_file=options.test_file,
                           on_run=None if events is None else _study_runs(events)(cfg.record))
    result["engine"] = options.engine
    return result


def _study_runs(events):
    """``label -> on_run(run, summary)`` emitting each finished run's J1–J10 (the mean
    over the actuators or DOFs) as a :class:`~rths_ident.runner.events.StudyRun`."""
    units = {name: "ms" if name in ("J1", "J4") else "%" for name in _INDEX_NAMES}

    def for_label(label: str):
        def on_run(run: int, summary: dict) -> None:
            values = {name: float(np.mean(summary["J"][name])) for name in _INDEX_NAMES if name in summary["J"]}
            events.emit(StudyRun(label, int(run), values, units))

        return on_run

    return for_label


def _fmt(values) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


_INDEX_NAMES = ("J1", "J2", "J3", "J4", "J5", "J6", "J7", "J8", "J9", "J10")

#: what the values of each index are, in the order the report shows them (a / b …)
COMPONENTS = {**{name: "actuator 1 / actuator 2" for name in ("J1", "J2", "J3", "J4")},
              **{name: "x4 / θ4 (interface)" for name in ("J5", "J6", "J7", "J9")},
              **{name: "x2 / θ2 / x3 / θ3 (upper storeys)" for name in ("J8", "J10")}}


def components_line() -> str:
    """The legend of the J table's columns ``a / b``."""
    groups: dict[str, list[str]] = {}
    for name, text in COMPONENTS.items():
        groups.setdefault(text, []).append(name)
    return "  values per component — " + "; ".join(f"{_names(names)}: {text}" for text, names in groups.items())


def _names(names: list[str]) -> str:
    if len(names) > 2 and all(int(b[1:]) == int(a[1:]) + 1 for a, b in zip(names, names[1:])):
        return f"{names[0]}–{names[-1]}"
    return ", ".join(names)


def records_report(result: dict) -> str:
    """The lines of a study over several records: the indices side by side, one column
    per record (mean over the uncertain plants; the nominal plant's without them)."""
    by_record = result["by_record"]
    studies = list(by_record.values())
    which = "uncertain mean" if studies[0]["J_uncertain_mean"] else "nominal plant"
    lines = [f"marths — {len(by_record)} records ×{result['scale']:g}, controller {result['controller']}, "
             f"{result['uncertain']} uncertain plant{'' if result['uncertain'] == 1 else 's'} each, "
             f"convention {result['convention']}",
             "  modes [Hz]: " + ", ".join(f"{f:.2f}" for f in result["modal_frequencies_hz"]),
             components_line(),
             (f"  {which}:".ljust(18) + "".join(f"{name:<28}" for name in by_record)).rstrip()]
    for name in _INDEX_NAMES:
        unit = "ms" if name in ("J1", "J4") else "%"
        row = [_fmt((s["J_uncertain_mean"] or s["J_nominal"])[name]) for s in studies]
        lines.append((f"  {name:>3} [{unit}]".ljust(18) + "".join(f"{text:<28}" for text in row)).rstrip())
    for record, study in by_record.items():
        lines.append(f"  {record} ({study['record']}, {study['sim_duration_s']:.2f} s):")
        lines += ["    " + line for line in realisability_lines(study["realisability"])]
    lines.append(f"  wall {result['wall_s']:.1f} s")
    return "\n".join(lines)


def report(result: dict) -> str:
    """The lines ``rths-ident run marths`` prints."""
    if "by_record" in result:
        return records_report(result)
    fmt = _fmt

    lines = [f"marths — {result['record']} ×{result['scale']:g}, {result['sim_duration_s']:.2f} s, "
             f"controller {result['controller']}, {len(result['plants']) - 1} uncertain plants, "
             f"convention {result['convention']}",
             "  modes [Hz]: " + ", ".join(f"{f:.2f}" for f in result["modal_frequencies_hz"]),
             components_line()]
    mean = result["J_uncertain_mean"]
    for name in _INDEX_NAMES:
        unit = "ms" if name in ("J1", "J4") else "%"
        extra = f"   uncertain mean {fmt(mean[name])}" if mean else ""
        lines.append(f"  {name:>3} [{unit}] nominal {fmt(result['J_nominal'][name])}{extra}")
    lines += ["  " + line for line in realisability_lines(result["realisability"])]
    lines.append(f"  wall {result['wall_s']:.1f} s")
    return "\n".join(lines)


#: how the report shows each monitored quantity: (label, factor from SI, unit shown)
_SHOWN = {"command_v": ("command", 1.0, "V"), "force_n": ("force", 1e-3, "kN"),
          "velocity_m_s": ("velocity", 1e3, "mm/s"), "stroke_m": ("stroke", 1e3, "mm")}


def realisability_lines(reports: list[dict]) -> list[str]:
    """Two lines over a study's runs (their realisability ``reports``): the package's
    test (commands within the saturation: "realisable") and the actuators' force,
    velocity and stroke limits, each with the runs that pass or exceed it and the largest
    peak over runs and actuators, then what that means."""
    n = len(reports)
    command = reports[0]["command_v"]["limit"]
    within = sum(r["commands_within_saturation"] for r in reports)
    limits_ok = sum(r["limits_respected"] for r in reports)
    first = (f"commands within ±{command:g} V (the benchmark package's test, 'realisable'): {within} of {n} runs; "
             f"largest {limit_peaks(reports, ('command_v',))}")
    second = (f"actuator limits (force, velocity, stroke) respected in {limits_ok} of {n} runs; largest over runs "
              "and actuators: " + limit_peaks(reports, ("force_n", "velocity_m_s", "stroke_m")))
    if within == n and limits_ok == n:
        verdict = "realisable: commands and actuator limits within bounds in every run"
    elif within == n:
        verdict = (f"the commands are realisable, but the actuators' limits are exceeded in {n - limits_ok} of {n} "
                   "runs: not realisable on the benchmark's actuators as they are")
    else:
        verdict = f"NOT realisable: the commands saturate in {n - within} of {n} runs"
    return [first, second, f"→ {verdict}"]


def limit_peaks(reports: list[dict], names=tuple(_SHOWN)) -> str:
    """Each monitored quantity's largest peak over the runs' realisability ``reports``
    against its limit, e.g. ``force 30.1 kN > 9.34 kN (exceeded in 21 of 21 runs)``."""
    parts = []
    for name in names:
        label, factor, unit = _SHOWN[name]
        peak = max(max(r[name]["peak"]) for r in reports) * factor
        limit = reports[0][name]["limit"] * factor
        over = sum(not r[name]["within"] for r in reports)
        text = f"{label} {peak:.3g} {unit} {'>' if over else '≤'} {limit:.3g} {unit}"
        parts.append(text + (f" (exceeded in {over} of {len(reports)} runs)" if over else ""))
    return "; ".join(parts)


def plot(result: dict, out_dir) -> list[Path]:
    """Tracking, estimated vs reference, J bars over the plants (the paper's Figs. 23–25);
    several records: those per record (``marths_tracking-kobe.png`` …) and the indices
    of every record side by side (``marths_records.png``)."""
    # matplotlib only when plotting
    from rths_ident.benchmarks.marths.plots import plot_marths, plot_records  # noqa: PLC0415

    if "by_record" in result:
        return plot_records(result, out_dir)
    return plot_marths(result, out_dir)
