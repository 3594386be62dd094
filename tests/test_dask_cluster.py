"""A maRTHS study on a Dask LocalCluster (2 worker processes on 127.0.0.1) gives the
single-machine numbers."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.dask_cluster import DaskExecutor, check_address
from rths_ident.benchmarks.marths.study import StudyConfig, run_study
from rths_ident.benchmarks.marths.study_record import study_rows
from rths_ident.records import read_test_record

pytest.importorskip("distributed")


@pytest.mark.slow
def test_local_cluster_gives_the_single_machine_numbers_even_when_a_worker_dies(tmp_path):
    """Nominal here, four draws as four chunks on two workers. After the first chunk's
    row, one worker process exits (``os._exit``, as a crash would): its running task
    goes to the other worker (or the nanny's new one). J1–J10 per run as run locally;
    the record gets a row per run as its chunk completes, each with its run index, once
    each, equal to the JSON's runs."""
    cfg = StudyConfig(controller="lqg", uncertain=4, duration=6.0)
    local = run_study(cfg, keep_histories=1)
    order, killed = [], []
    with DaskExecutor("local", n_workers=2, timeout_s=120) as cluster:
        assert len(cluster.client.scheduler_info()["workers"]) == 2

        def kill_a_worker(run, summary):
            order.append(run)
            if run != 0 and not killed:
                victim = sorted(cluster.client.scheduler_info()["workers"])[0]
                killed.append(victim)
                cluster.client.run(os._exit, 1, workers=[victim], on_error="ignore")

        remote = run_study(cfg, keep_histories=1, executor=cluster, test_record=tmp_path / "dask.h5",
                           on_run=kill_a_worker)
        deadline = time.monotonic() + 10.0  # the scheduler notices the lost worker within ms
        while killed and killed[0] in cluster.client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert killed and killed[0] not in cluster.client.scheduler_info()["workers"]  # it did die
    assert order[0] == 0 and sorted(order) == [0, 1, 2, 3, 4]
    for run_local, run_remote in zip(local["J_runs"], remote["J_runs"]):
        for name in run_local:
            np.testing.assert_allclose(run_remote[name], run_local[name], rtol=1e-10, atol=1e-12, err_msg=name)
    assert remote["realisability"] == local["realisability"]
    record = read_test_record(tmp_path / "dask.h5")
    assert record.complete and record.steps["run"].tolist() == order
    for row, json_run in zip(study_rows(record), remote["J_runs"]):
        for name in json_run:
            np.testing.assert_allclose(row["J"][name], json_run[name], rtol=1e-12, atol=1e-12, err_msg=name)


def test_cluster_address_is_checked_before_work():
    assert check_address("local") == "local"
    assert check_address("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    for bad in ("127.0.0.1:8786", "tcp://nowhere", "cluster", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:port"):
        with pytest.raises(ParameterError, match=r"--dask must be 'local' or .* PORT an integer in 1…65535; got"):
            check_address(bad)
    with pytest.raises(ParameterError, match="--dask"):
        StudyConfig(dask="somewhere")
