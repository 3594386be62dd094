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

from pathlib import Path

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.record_studies import RecordStudies, parse_records, run_record_studies
from rths_ident.benchmarks.marths.study import StudyConfig, run_study

SCENARIO = "marths"
DESCRIPTION = "the multi-axial RTHS benchmark (seed 004): 2×2 actuator plant, coupler, LQG or dAMB, J1–J10"
#: the engines it runs on (its substructure is native: the fused loop)
ENGINES = ("fused",)
OPTIONS = ("controller", "scale", "uncertain", "convention", "batch", "threads", "dask")
#: common settings of other scenarios that do not apply here
NOT_APPLICABLE = ("compensation", "transition", "fast_rate", "slow_rate", "identifier_rate", "transfer_system",
                  "updating", "ddmrt_adaptive", "record_dt", "record_units")


def config_from_options(common: dict, options: dict) -> StudyConfig | RecordStudies:
    """A :class:`~rths_ident.benchmarks.marths.study.StudyConfig` from the command line;
    several records (``--record elcentro,kobe`` or ``all``): a
    :class:`~rths_ident.benchmarks.marths.record_studies.RecordStudies`."""
    for name in NOT_APPLICABLE:
        if common.get(name) is not None:
            raise ParameterError(f"--{name.replace('_', '-')} does not apply to marths (it runs at 1024 Hz with "
                                 "--controller lqg|damb|ideal)")
    records = parse_records(common.get("record") or "elcentro")
    values = {"duration": common.get("duration"), "noise": common.get("sensor_noise", True)}
    if common.get("seed") is not None:
        values["seed"] = common["seed"]
    values.update({k: v for k, v in options.items() if v is not None})
    if len(records) > 1:
        return RecordStudies.for_records(records, **values)
    return StudyConfig(record=records[0], **values)


def run_scenario(cfg: StudyConfig | RecordStudies, engine: str = "fused", compare: bool = True, progress=None,
                 test_record=None, show_progress: bool = False) -> dict:
    """The study (nominal + uncertain plants), its record at ``test_record`` (a row per
    run as it finishes: :mod:`rths_ident.benchmarks.marths.study_record`); several
    records: a study each, their records beside ``test_record`` (:mod:`.record_studies`);
    ``show_progress``: a line per finished batch on stderr (runs done, elapsed, ETA).
    ``compare`` and ``progress`` (per slow step) do not apply."""
    if engine != "fused":
        raise ParameterError("marths runs on the fused engine only (its substructure is native)")
    from rths_ident.benchmarks.marths.progress import StudyProgress  # noqa: PLC0415

    if isinstance(cfg, RecordStudies):
        factory = (lambda record: StudyProgress(label=record)) if show_progress else None
        result = run_record_studies(cfg, test_record=test_record, progress_factory=factory)
    else:
        result = run_study(cfg, test_record=test_record, progress=StudyProgress() if show_progress else None)
    result["engine"] = engine
    return result


def _fmt(values) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


_INDEX_NAMES = ("J1", "J2", "J3", "J4", "J5", "J6", "J7", "J8", "J9", "J10")


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
             (f"  {which}:".ljust(18) + "".join(f"{name:<28}" for name in by_record)).rstrip()]
    for name in _INDEX_NAMES:
        unit = "ms" if name in ("J1", "J4") else "%"
        row = [_fmt((s["J_uncertain_mean"] or s["J_nominal"])[name]) for s in studies]
        lines.append((f"  {name:>3} [{unit}]".ljust(18) + "".join(f"{text:<28}" for text in row)).rstrip())
    for record, study in by_record.items():
        lines.append(f"  {record} ({study['record']}, {study['sim_duration_s']:.2f} s): realisable (commands within "
                     f"±{study['realisability'][0]['command_v']['limit']:g} V) {study['realisable']}")
        lines.append("    largest over runs and actuators: " + limit_peaks(study["realisability"]))
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
             "  modes [Hz]: " + ", ".join(f"{f:.2f}" for f in result["modal_frequencies_hz"])]
    mean = result["J_uncertain_mean"]
    for name in _INDEX_NAMES:
        unit = "ms" if name in ("J1", "J4") else "%"
        extra = f"   uncertain mean {fmt(mean[name])}" if mean else ""
        lines.append(f"  {name:>3} [{unit}] nominal {fmt(result['J_nominal'][name])}{extra}")
    lines.append(f"  realisable (commands within ±{result['realisability'][0]['command_v']['limit']:g} V): "
                 f"{result['realisable']}; force/velocity/stroke limits respected: {result['limits_respected']}")
    lines.append("  largest over runs and actuators: " + limit_peaks(result["realisability"]))
    lines.append(f"  wall {result['wall_s']:.1f} s")
    return "\n".join(lines)


#: how the report shows each monitored quantity: (label, factor from SI, unit shown)
_SHOWN = {"command_v": ("command", 1.0, "V"), "force_n": ("force", 1e-3, "kN"),
          "velocity_m_s": ("velocity", 1e3, "mm/s"), "stroke_m": ("stroke", 1e3, "mm")}


def limit_peaks(reports: list[dict]) -> str:
    """Each monitored quantity's largest peak over the runs' realisability ``reports``
    against its limit, e.g. ``force 30.1 kN > 9.34 kN (exceeded in 21 of 21 runs)``."""
    parts = []
    for name, (label, factor, unit) in _SHOWN.items():
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
