"""A study's runs in compiled batches: which fields batch (read from the traced loops),
the batch's rendezvous, and the same numbers as the runs one by one (and on a Dask
cluster)."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from rths_ident.scenarios import study_batches
from rths_ident.scenarios.kinds import shipped_test_file
from rths_ident.scenarios.study import batching, parse_variation, plan_study, run_study
from rths_ident.scenarios.study_batches import LoopBatch, run_batches

TIMING = ("wall_s", "total_wall_s", "realtime_factor", "phase_s")


def _flat(metrics, prefix=""):
    out = {}
    for key, value in metrics.items():
        if key in TIMING:
            continue
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def _assert_same_runs(a: dict, b: dict, rtol: float) -> None:
    assert [r["run"] for r in a["runs"]] == [r["run"] for r in b["runs"]]
    for run_a, run_b in zip(a["runs"], b["runs"]):
        assert run_a["varied"] == run_b["varied"] and run_a["stopped"] == run_b["stopped"]
        flat_a, flat_b = _flat(run_a["metrics"]), _flat(run_b["metrics"])
        assert flat_a.keys() == flat_b.keys()
        for name, value in flat_a.items():
            if isinstance(value, float) and not isinstance(value, bool):
                assert value == pytest.approx(flat_b[name], rel=rtol, abs=1e-300), name
            else:
                assert value == flat_b[name], name


def _fake_runner(test, fingerprint, size):
    """A stand-in for the vmap-ed loop: row i's logs are 2·fast params + ground motion."""
    return lambda fp, initial, ag: (None, {"x": 2.0 * fp + ag, "rows": np.full(len(fp), len(fp))})


def test_a_batch_runs_once_every_member_has_joined_or_withdrawn(monkeypatch):
    """Three runs in a batch of 4 (padded), one of which ends before its loop: the two
    others get their own rows of one call of 4 rows."""
    monkeypatch.setattr(study_batches, "batched_fused_runner", _fake_runner)
    batch = LoopBatch([3, 5, 7], 4, "fingerprint")
    out, calls = {}, []
    original = batch._run

    def counted():
        calls.append(1)
        original()
    batch._run = counted

    def member(index, fp):
        loop = batch.runner_for(index)(f"test {index}")
        out[index] = loop(np.array([fp, fp]), None, np.array([0.5, 0.25]))[1]

    threads = [threading.Thread(target=member, args=(i, v)) for i, v in ((3, 1.0), (7, 4.0))]
    for thread in threads:
        thread.start()
    batch.withdraw(5)
    for thread in threads:
        thread.join(timeout=30)
    assert calls == [1]
    np.testing.assert_array_equal(out[3]["x"], [2.5, 2.25])
    np.testing.assert_array_equal(out[7]["x"], [8.5, 8.25])
    assert int(out[3]["rows"]) == 4  # padded to the batch size: one program for every batch


def test_run_batches_hands_each_run_its_own_row_in_run_order(monkeypatch):
    monkeypatch.setattr(study_batches, "batched_fused_runner", _fake_runner)
    rows = []

    def run_one(index, fused_loop):
        if index == 4:  # a run that ends before its loop (a stopped test): it withdraws
            return {"run": index, "x": None}
        _, logs = fused_loop(f"test {index}")(np.array([float(index)]), None, np.array([1.0]))
        return {"run": index, "x": float(logs["x"][0])}

    run_batches([1, 2, 3, 4, 6], 3, "fingerprint", run_one, rows.append)
    assert [r["run"] for r in rows] == [1, 2, 3, 4, 6]
    assert [r["x"] for r in rows] == [3.0, 5.0, 7.0, None, 13.0]


@pytest.mark.slow
def test_a_field_that_changes_the_loop_runs_the_study_run_by_run_and_says_which():
    plan = plan_study("lugre-frame", shipped_test_file("lugre-frame"),
                      [parse_variation("record.duration=0.3"), parse_variation("specimen.stiffness=1.3e6,1.4e6"),
                       parse_variation("structure.storeys=3,4")])
    decision = batching(plan, 8)
    assert decision.fingerprint is None
    assert decision.note == ("study: run by run — structure.storeys changes the compiled loop (its structure or "
                             "shapes), not only its values")
    assert batching(plan, 0).fingerprint is None and batching(plan, 0).note is None


def test_compensator_gains_batch_and_the_compensator_does_not():
    """The gains are values of the fused loop's arguments (the trace says so); another
    compensator is another program."""
    gains = plan_study("rc-frame", shipped_test_file("rc-frame"),
                       [parse_variation("record.duration=1"), parse_variation("compensation.rho=0.99,1"),
                        parse_variation("compensation.log10_P0=6,10"), parse_variation("compensation.s=0.8,1.2")])
    decision = batching(gains, 8)
    assert decision.fingerprint is not None and decision.note is None
    kinds = plan_study("rc-frame", shipped_test_file("rc-frame"),
                       [parse_variation("record.duration=1"), parse_variation("compensation.kind=damb,polynomial")])
    assert batching(kinds, 8).fingerprint is None


@pytest.mark.slow
def test_batched_runs_give_the_one_by_one_numbers():
    """lugre-frame, the specimen's stiffness, the record's scale and the noise seed
    varied (3 runs, batches of 2: the second padded): every metric of every run equal to
    1e-9 relative to the runs one by one. (The loop identifies and updates: a last-bit
    difference of a vmap-ed program grows along the record, so the record is short.)"""
    plan = plan_study("lugre-frame", shipped_test_file("lugre-frame"),
                      [parse_variation("record.duration=0.4"), parse_variation("specimen.stiffness=1.25e6,1.4e6"),
                       parse_variation("record.scale=0.9:1.1"), parse_variation("sensors.seed=7")],
                      samples=1, seed=3)
    plan = dataclasses.replace(plan, runs=plan.runs + plan.runs[:1])  # run 2 repeats run 0
    assert batching(plan, 2).fingerprint is not None
    notes = []
    batched = run_study(plan, batch=2, note=notes.append)
    one_by_one = run_study(plan, batch=0)
    assert notes == []
    _assert_same_runs(batched, one_by_one, rtol=1e-9)
    j2 = [r["metrics"]["J2_percent"] for r in batched["runs"]]
    assert j2[0] != j2[1] and j2[2] == j2[0]  # the runs differ; a repeated run in another batch does not


@pytest.mark.slow
def test_a_batched_study_gives_the_same_numbers_on_a_dask_cluster():
    pytest.importorskip("distributed")
    plan = plan_study("rc-frame", shipped_test_file("rc-frame"),
                      [parse_variation("record.duration=0.6"), parse_variation("record.scale=0.8,1.0,1.2")])
    assert batching(plan, 2).fingerprint is not None
    here = run_study(plan, batch=2)
    there = run_study(plan, batch=2, dask="local")
    _assert_same_runs(here, there, rtol=0.0)
    _assert_same_runs(here, run_study(plan, batch=0), rtol=1e-9)
