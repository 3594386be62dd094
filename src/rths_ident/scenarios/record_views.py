"""How each kind of test record is shown: its summary (text) and its figures, by the
record's ``kind`` attribute — the one table ``rths-ident show`` reads, so the command
knows no test by name. A kind's view lives with what writes it; a record of a kind not
listed here (a server's) is shown as a run's: the generic summary
(:func:`rths_ident.records.summary.format_summary`) and the figures of what it holds."""

from __future__ import annotations

from typing import Callable, NamedTuple

from rths_ident.registry import Registry

__all__ = ["RecordView", "RECORD_VIEWS", "view_of"]


class RecordView(NamedTuple):
    """summary(record) -> str; plots(record, out_dir) -> list[Path] (None: no figures)."""

    summary: Callable
    plots: Callable | None


def _run_summary(record):
    from rths_ident.records.summary import format_summary  # noqa: PLC0415

    return format_summary(record)


def _run_plots(record, out_dir):
    from rths_ident.runner.plots import plot_test_record  # noqa: PLC0415 (matplotlib only when plotting)

    return plot_test_record(record, out_dir)


def _study_summary(record):
    from rths_ident.benchmarks.marths.study_record import format_study_summary  # noqa: PLC0415

    return format_study_summary(record)


def _study_plots(record, out_dir):
    from rths_ident.benchmarks.marths.plots import plot_study_record  # noqa: PLC0415

    return plot_study_record(record, out_dir)


#: record kind (the ``kind`` attribute a writer gives) -> :class:`RecordView`
RECORD_VIEWS: Registry[RecordView] = Registry("test-record kind", {
    "run": RecordView(_run_summary, _run_plots),
    "marths study": RecordView(_study_summary, _study_plots),
})


def view_of(record) -> RecordView:
    """The view of ``record`` (the generic one for a kind without its own)."""
    return RECORD_VIEWS[record.kind] if record.kind in RECORD_VIEWS else RECORD_VIEWS["run"]
