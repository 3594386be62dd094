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

from rths_ident._params import ParameterError
from rths_ident.benchmarks.marths.study import RECORDS, StudyConfig, run_study

SCENARIO = "marths"
DESCRIPTION = "the multi-axial RTHS benchmark (seed 004): 2×2 actuator plant, coupler, LQG or dAMB, J1–J10"
OPTIONS = ("controller", "scale", "uncertain", "convention", "batch", "threads", "dask")
#: common settings of other scenarios that do not apply here
NOT_APPLICABLE = ("compensation", "transition", "fast_rate", "slow_rate", "identifier_rate", "transfer_system",
                  "updating", "ddmrt_adaptive", "record_dt", "record_units")
_LONG_NAMES = {long: short for short, long in RECORDS.items()}


def config_from_options(common: dict, options: dict) -> StudyConfig:
    """A :class:`~rths_ident.benchmarks.marths.study.StudyConfig` from the command line."""
    for name in NOT_APPLICABLE:
        if common.get(name) is not None:
            raise ParameterError(f"--{name.replace('_', '-')} does not apply to marths (it runs at 1024 Hz with "
                                 "--controller lqg|damb|ideal)")
    record = common.get("record") or "elcentro"
    record = _LONG_NAMES.get(record, record)
    values = {"record": record, "duration": common.get("duration"), "noise": common.get("sensor_noise", True)}
    if common.get("seed") is not None:
        values["seed"] = common["seed"]
    values.update({k: v for k, v in options.items() if v is not None})
    return StudyConfig(**values)


def run_scenario(cfg: StudyConfig, engine: str = "fused", compare: bool = True, progress=None, test_record=None,
                 show_progress: bool = False) -> dict:
    """The study (nominal + uncertain plants), its record at ``test_record`` (a row per
    run as it finishes: :mod:`rths_ident.benchmarks.marths.study_record`);
    ``show_progress``: a line per finished batch on stderr (runs done, elapsed, ETA).
    ``compare`` and ``progress`` (per slow step) do not apply."""
    if engine != "fused":
        raise ParameterError("marths runs on the fused engine only (its substructure is native)")
    from rths_ident.benchmarks.marths.progress import StudyProgress  # noqa: PLC0415

    result = run_study(cfg, test_record=test_record, progress=StudyProgress() if show_progress else None)
    result["engine"] = engine
    return result


def report(result: dict) -> str:
    """The lines ``rths-ident run marths`` prints."""
    def fmt(values):
        return " / ".join(f"{v:.2f}" for v in values)

    lines = [f"marths — {result['record']} ×{result['scale']:g}, {result['sim_duration_s']:.2f} s, "
             f"controller {result['controller']}, {len(result['plants']) - 1} uncertain plants, "
             f"convention {result['convention']}",
             "  modes [Hz]: " + ", ".join(f"{f:.2f}" for f in result["modal_frequencies_hz"])]
    mean = result["J_uncertain_mean"]
    for name in ("J1", "J2", "J3", "J4", "J5", "J6", "J7", "J8", "J9", "J10"):
        unit = "ms" if name in ("J1", "J4") else "%"
        extra = f"   uncertain mean {fmt(mean[name])}" if mean else ""
        lines.append(f"  {name:>3} [{unit}] nominal {fmt(result['J_nominal'][name])}{extra}")
    lines.append(f"  realisable (commands within ±{result['realisability'][0]['command_v']['limit']:g} V): "
                 f"{result['realisable']}; force/velocity/stroke limits respected: {result['limits_respected']}")
    lines.append(f"  wall {result['wall_s']:.1f} s")
    return "\n".join(lines)


def plot(result: dict, out_dir) -> list[Path]:
    """Tracking, estimated vs reference, J bars over the plants (the paper's Figs. 23–25)."""
    from rths_ident.benchmarks.marths.plots import plot_marths  # noqa: PLC0415 (matplotlib only when plotting)

    return plot_marths(result, out_dir)
