"""Several records in one study (``--record elcentro,kobe`` / ``all``)."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.record_studies import (
    RecordStudies,
    parse_records,
    record_test_record_path,
    run_record_studies,
)
from rths_ident.benchmarks.marths.study import StudyConfig, run_study
from rths_ident.benchmarks.marths.study_record import study_rows


def test_record_names_are_parsed_and_checked():
    assert parse_records("all") == ("elcentro", "kobe", "morgan")
    assert parse_records("kobe_1995, elcentro") == ("kobe", "elcentro")
    with pytest.raises(ParameterError, match="'northridge' is not a maRTHS record.*elcentro, kobe, morgan"):
        parse_records("elcentro,northridge")
    with pytest.raises(ParameterError, match="twice"):
        parse_records("kobe,kobe_1995")


def test_the_studies_differ_by_their_record_only():
    with pytest.raises(ParameterError, match="differ by their record only"):
        RecordStudies((StudyConfig(record="elcentro"), StudyConfig(record="kobe", uncertain=3)))
    with pytest.raises(ParameterError, match="two records"):
        RecordStudies((StudyConfig(),))
    assert RecordStudies.for_records(("kobe", "morgan"), uncertain=1).record == "kobe, morgan"


def test_record_file_names():
    assert record_test_record_path("runs/test_record.h5", "kobe").as_posix() == "runs/test_record-kobe.h5"


@pytest.mark.slow
def test_each_record_gives_the_numbers_of_its_own_study(tmp_path):
    """Two records in one call: per record the same J1–J10 per run as that record's
    study alone, and a readable test record each with one row per run."""
    settings = dict(controller="lqg", uncertain=1, duration=7.0)
    together = run_record_studies(RecordStudies.for_records(("elcentro", "morgan"), **settings),
                                  test_record=tmp_path / "study.h5")
    assert together["records"] == ["elcentro", "morgan"]
    for record in ("elcentro", "morgan"):
        alone = run_study(StudyConfig(record=record, **settings))
        mine = together["by_record"][record]
        assert mine["record"] == alone["record"] and mine["plants"] == alone["plants"]
        for run_a, run_b in zip(mine["J_runs"], alone["J_runs"]):
            for name in run_a:
                np.testing.assert_allclose(run_a[name], run_b[name], rtol=1e-12, err_msg=f"{record} {name}")
        rows = study_rows(tmp_path / f"study-{record}.h5")
        assert [row["J"] for row in rows] == mine["J_runs"]
    # the records differ: not the same study twice
    assert together["by_record"]["elcentro"]["J_nominal"]["J5"] != together["by_record"]["morgan"]["J_nominal"]["J5"]
    assert together["limits_respected"] == all(r["limits_respected"] for r in together["by_record"].values())


@pytest.mark.slow
def test_records_share_one_dask_cluster_and_give_the_local_numbers(monkeypatch):
    """``--dask local`` with two records: one cluster is opened for both studies, and
    each record's J1–J10 per run are those of the same study on this machine."""
    pytest.importorskip("distributed")
    from rths_ident import dask_cluster as distributed  # noqa: PLC0415

    opened = []

    class CountedExecutor(distributed.DaskExecutor):
        def __enter__(self):
            opened.append(self)
            return super().__enter__()

    monkeypatch.setattr(distributed, "DaskExecutor", CountedExecutor)
    settings = dict(controller="lqg", uncertain=2, duration=6.0)
    remote = run_record_studies(RecordStudies.for_records(("elcentro", "kobe"), dask="local", **settings))
    local = run_record_studies(RecordStudies.for_records(("elcentro", "kobe"), **settings))
    assert len(opened) == 1
    for record in ("elcentro", "kobe"):
        for run_remote, run_local in zip(remote["by_record"][record]["J_runs"], local["by_record"][record]["J_runs"]):
            for name in run_local:
                np.testing.assert_allclose(run_remote[name], run_local[name], rtol=1e-10, atol=1e-12,
                                           err_msg=f"{record} {name}")
