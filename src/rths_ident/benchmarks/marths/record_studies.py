"""Several records in one command: a maRTHS study per record (plants × records).

``rths-ident run marths --record elcentro,kobe,morgan`` (or ``--record all``) runs
:func:`~rths_ident.benchmarks.marths.study.run_study` once per record, one after the
other, with the same settings: the same plant draws (same ``seed``) and the same sensor
noise seeds, so the records differ only by the ground motion. Each record's loop has its
own length, hence its own compiled program (the study compiles it on its first batch).

Each record keeps its own test record (``<stem>-<record><suffix>``, e.g.
``test_record-kobe.h5`` beside the ``--test-record`` path) written a run at a time as
before, so a stop during the third record keeps the first two complete and the third's
finished runs. With ``dask`` set, one cluster serves all the records (its start-up and
the workers' first compilation paid once).
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.study import RECORDS, StudyConfig, run_study

__all__ = ["RecordStudies", "parse_records", "record_test_record_path", "run_record_studies"]


def parse_records(text: str) -> tuple[str, ...]:
    """``"elcentro,kobe"`` → ``("elcentro", "kobe")``; ``"all"`` → every record of
    :data:`~rths_ident.benchmarks.marths.study.RECORDS`; long names (``kobe_1995``) are
    accepted. Unknown or repeated names are an error naming the valid ones."""
    long_to_short = {long: short for short, long in RECORDS.items()}
    if text.strip().lower() == "all":
        return tuple(RECORDS)
    names = [long_to_short.get(name.strip(), name.strip()) for name in text.split(",")]
    for name in names:
        if name not in RECORDS:
            raise ParameterError(f"--record: {name!r} is not a maRTHS record; give one or more of "
                                 f"{', '.join(RECORDS)} separated by commas, or 'all'")
    if len(set(names)) != len(names):
        raise ParameterError(f"--record names a record twice: {text!r}")
    return tuple(names)


@dataclasses.dataclass(frozen=True)
class RecordStudies:
    """One :class:`~rths_ident.benchmarks.marths.study.StudyConfig` per record, the
    other settings equal (:meth:`for_records`)."""

    studies: tuple[StudyConfig, ...]

    def __post_init__(self):
        if len(self.studies) < 2:
            raise ParameterError("RecordStudies needs two records or more (one record is a StudyConfig)")
        first = dataclasses.replace(self.studies[0], record="elcentro")
        if any(dataclasses.replace(s, record="elcentro") != first for s in self.studies[1:]):
            raise ParameterError("the studies of RecordStudies must differ by their record only")

    @classmethod
    def for_records(cls, records: tuple[str, ...], **settings) -> "RecordStudies":
        return cls(tuple(StudyConfig(record=r, **settings) for r in records))

    @property
    def record(self) -> str:
        """The records' short names, ``"elcentro, kobe, morgan"``."""
        return ", ".join(s.record for s in self.studies)


def record_test_record_path(base, record: str) -> Path:
    """``runs/test_record.h5`` → ``runs/test_record-kobe.h5``."""
    base = Path(base)
    return base.with_name(f"{base.stem}-{record}{base.suffix}")


def run_record_studies(cfg: RecordStudies, test_record=None, progress_factory=None, on_run_factory=None,
                       test_file: str | None = None) -> dict:
    """Each record's study (:func:`~rths_ident.benchmarks.marths.study.run_study`).

    Returns ``by_record`` (short name → that study's result, as for one record),
    ``records`` (the records' short names, in order), the shared settings, ``realisable``
    and ``limits_respected`` over every run of every record, ``test_records`` (the
    files written) and ``wall_s`` (the sum). ``progress_factory``: called once per record
    for that study's progress callback (None: no progress); ``on_run_factory``: the same
    for its ``on_run(run, summary)``; ``test_file``: the test
    file's text each record keeps."""
    by_record, paths = {}, []
    with contextlib.ExitStack() as stack:
        executor = None  # a Dask cluster: opened once for all the records
        if cfg.studies[0].dask is not None:
            from rths_ident.dask_cluster import DaskExecutor  # noqa: PLC0415

            executor = stack.enter_context(DaskExecutor(cfg.studies[0].dask))
        for study in cfg.studies:
            path = None if test_record is None else record_test_record_path(test_record, study.record)
            progress = None if progress_factory is None else progress_factory(study.record)
            on_run = None if on_run_factory is None else on_run_factory(study.record)
            by_record[study.record] = run_study(study, executor=executor, test_record=path, progress=progress,
                                                on_run=on_run,
                                                test_file=test_file)
            if path is not None:
                paths.append(str(path))
    first = cfg.studies[0]
    results = list(by_record.values())
    return {
        "scenario": "marths",
        "records": list(by_record),
        "record_names": [r["record"] for r in results],
        "scale": first.scale,
        "controller": first.controller,
        "convention": first.convention,
        "uncertain": first.uncertain,
        "plant_seed": first.seed,
        "modal_frequencies_hz": results[0]["modal_frequencies_hz"],
        "by_record": by_record,
        "realisable": all(r["realisable"] for r in results),
        "limits_respected": all(r["limits_respected"] for r in results),
        "test_records": paths,
        "wall_s": float(sum(r["wall_s"] for r in results)),
    }
