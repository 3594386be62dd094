"""A maRTHS study on a Dask LocalCluster (2 worker processes on 127.0.0.1) gives the
single-machine numbers."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident._params import ParameterError
from rths_ident.benchmarks.marths.distributed import DaskExecutor, check_address
from rths_ident.benchmarks.marths.study import StudyConfig, run_study

pytest.importorskip("distributed")


@pytest.mark.slow
def test_local_cluster_gives_the_single_machine_numbers():
    """Nominal here, two draws as two chunks on two workers: J1–J10 per run as run locally."""
    cfg = StudyConfig(controller="lqg", uncertain=2, duration=6.0)
    local = run_study(cfg, keep_histories=1)
    with DaskExecutor("local", n_workers=2, progress=False, timeout_s=120) as cluster:
        remote = run_study(cfg, keep_histories=1, executor=cluster)
        assert len(cluster.client.scheduler_info()["workers"]) == 2
    assert len(remote["J_runs"]) == 3
    for run_local, run_remote in zip(local["J_runs"], remote["J_runs"]):
        for name in run_local:
            np.testing.assert_allclose(run_remote[name], run_local[name], rtol=1e-10, atol=1e-12, err_msg=name)
    assert remote["realisability"] == local["realisability"]


def test_cluster_address_is_checked_before_work():
    assert check_address("local") == "local"
    assert check_address("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    for bad in ("127.0.0.1:8786", "tcp://nowhere", "cluster"):
        with pytest.raises(ParameterError, match="--dask"):
            check_address(bad)
    with pytest.raises(ParameterError, match="--dask"):
        StudyConfig(dask="somewhere")
