"""Test records fed by the engines: every completed slow step of a step-wise run, the
steps a failed run carries and its error, a fused run's stacked logs. The loop is a
spring on an ideal ramp coupled to an explicit-Newmark SDOF (as in test_engine.py)."""

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.hybrid.loop.engine import LoopAborted, run_stepwise
from rths_ident.hybrid.loop.safe_stop import SafeStop
from rths_ident.operator_stop import OperatorStopped
from rths_ident.runner.recording import StepRecorder, log_units
from rths_ident.protocols import SiteReading
from rths_ident.records import TestRecordWriter, read_test_record

M, C, K1, K2, DT, RATIO = 2.0, 0.3, 50.0, 30.0, 0.01, 8
UNITS = {"fast/force": "N", "fast/displacement": "m", "ns/u": "m", "ground_accel": "m/s²"}


class _SpringSite:
    n_interface = 1

    def __init__(self):
        self.x = 0.0

    def step(self, target):
        x = self.x + (float(target[0]) - self.x) * (np.arange(RATIO) + 1) / RATIO
        self.x = float(x[-1])
        return SiteReading(x[-1:], K2 * x[-1:], {"force": K2 * x, "displacement": x})

    def close(self):
        pass


class _SdofNS:
    n_interface = 1

    def __init__(self, fail_at=None):
        self.state, self.calls, self.fail_at = (0.0, 0.0, 0.0), 0, fail_at

    def initial_target(self):
        return np.zeros(1)

    def step(self, force, ag):
        if self.calls == self.fail_at:
            raise ConnectionError("peer went away")
        self.calls += 1
        u, v, a = self.state
        a_new = (-M * ag - force[0] - K1 * u - C * (v + 0.5 * DT * a)) / (M + 0.5 * DT * C)
        v_new = v + 0.5 * DT * (a + a_new)
        self.state = (u + DT * v_new + 0.5 * DT**2 * a_new, v_new, a_new)
        return np.array([self.state[0]]), {"u": np.array(u)}

    def apply_parameters(self, estimate):
        pass

    def close(self):
        pass


def _ground(n):
    return np.sin(2 * np.pi * 1.3 * np.arange(n) * DT)


def _time(n):
    return DT * (np.arange(n) + 1)


def test_a_stepwise_run_is_recorded_step_by_step(tmp_path):
    n = 60
    seen = []
    with TestRecordWriter.open(tmp_path / "r.h5", {"case": "sdof"}, UNITS, flush_every=7) as rec:
        recorder = StepRecorder(rec, _time(n), progress=lambda k, log: seen.append((k, rec.steps)),
                                ground_accel=_ground(n))
        recorder.start("stepwise")
        logs = run_stepwise(_SpringSite(), _SdofNS(), _ground(n), on_step=recorder)
        rec.finish({"peak_u": float(np.max(np.abs(logs["ns"]["u"])))})
    r = read_test_record(tmp_path / "r.h5")
    assert r.complete and r.n_steps == n
    assert seen[:2] == [(0, 1), (1, 2)]  # appended before progress is called
    np.testing.assert_array_equal(r.steps["ns/u"], logs["ns"]["u"])
    np.testing.assert_array_equal(r.steps["fast/force"], logs["fast"]["force"])
    np.testing.assert_array_equal(r.time, _time(n))
    np.testing.assert_array_equal(r.steps["ground_accel"], _ground(n))
    assert [e.kind for e in r.events] == ["start", "stop"] and r.events[0].time == 0.0


def test_a_failing_substructure_leaves_the_completed_steps_and_the_error(tmp_path):
    n = 60
    with pytest.raises(LoopAborted):
        with TestRecordWriter.open(tmp_path / "r.h5", {}, UNITS, flush_every=100) as rec:
            recorder = StepRecorder(rec, _time(n))
            try:
                run_stepwise(_SpringSite(), _SdofNS(fail_at=23), _ground(n), on_step=recorder)
            except LoopAborted as aborted:
                recorder.record_aborted(aborted)
                raise
    r = read_test_record(tmp_path / "r.h5")
    assert not r.complete and r.n_steps == 23
    error = r.errors()[0]
    assert (error.step, error.time) == (23, _time(n)[23])
    assert error.message.startswith("slow step 23 failed: peer went away.")
    assert len(r.errors()) == 1  # the writer's exit does not record it twice
    reference = run_stepwise(_SpringSite(), _SdofNS(), _ground(23))
    np.testing.assert_array_equal(r.steps["ns/u"], reference["ns"]["u"])


def test_a_check_abort_keeps_the_step_it_stopped_at(tmp_path):
    """``check`` fails after step 9 was logged: the record holds steps 0–9, as the
    exception's logs do, although ``on_step`` never saw step 9."""
    n = 30
    with pytest.raises(LoopAborted):
        with TestRecordWriter.open(tmp_path / "r.h5", {}, UNITS) as rec:
            recorder = StepRecorder(rec, _time(n))
            try:
                run_stepwise(_SpringSite(), _SdofNS(), _ground(n), on_step=recorder,
                             check=lambda log, k: "actuator limit" if k == 9 else None)
            except LoopAborted as aborted:
                recorder.record_aborted(aborted)
                raise
    r = read_test_record(tmp_path / "r.h5")
    assert r.n_steps == 10 and r.errors()[0].step == 9
    assert r.errors()[0].message.startswith("slow step 9 stopped: actuator limit.")


def test_an_interrupted_run_keeps_every_appended_step(tmp_path):
    """Ctrl-C in step 12 (after it was recorded): the operator's stop, the spring brought
    to rest (the generic safe stop: its targets through the site, held, ramped to zero),
    every appended step kept, and the record says so (a stop event, not an error)."""
    def interrupt(k, log):
        if k == 12:
            raise KeyboardInterrupt

    site, ns = _SpringSite(), _SdofNS()
    ns.dt = DT
    with pytest.raises(OperatorStopped) as caught:
        with TestRecordWriter.open(tmp_path / "r.h5", {}, UNITS) as rec:
            run_stepwise(site, ns, _ground(40), on_step=StepRecorder(rec, _time(40), interrupt),
                         safe_stop=SafeStop(hold_s=0.02, ramp_s=0.05, settle_s=0.01))
    stopped = caught.value
    assert str(stopped).startswith("stopped by the operator (Ctrl-C) at slow step 12, t = 0.130 s. The specimen was "
                                   "brought to rest: command held 0.02 s, then ramped to zero over 0.05 s")
    assert str(stopped).endswith("the 13 completed slow steps are kept.")
    assert stopped.at_rest and stopped.logs["ns"]["u"].shape == (13,)
    # 2 held + 5 ramp + 1 settling steps through the site; the spring ends at zero
    stop_targets = stopped.safe_stop_logs["displacement"][:, -1]
    assert stop_targets.shape == (8,) and stop_targets[-1] == 0.0 and site.x == 0.0
    r = read_test_record(tmp_path / "r.h5")
    assert r.n_steps == 13 and not r.errors()
    assert r.events[-1].kind == "stop" and r.events[-1].message == str(stopped) and r.events[-1].step == 12


def test_fused_logs_are_written_after_the_call(tmp_path):
    n = 50

    @jax.jit
    def scan(ag):
        def body(x, a):
            x = 0.9 * x + a
            return x, {"fast": {"force": K2 * x * jnp.ones(RATIO), "displacement": x * jnp.ones(RATIO)},
                       "ns": {"u": x}}
        return jax.lax.scan(body, 0.0, ag)[1]

    logs = jax.tree_util.tree_map(np.asarray, scan(jnp.asarray(_ground(n))))
    with TestRecordWriter.open(tmp_path / "f.h5", {}, UNITS, flush_every=16) as rec:
        recorder = StepRecorder(rec, _time(n), ground_accel=_ground(n))
        recorder.record_all(logs)
        assert rec.steps_on_disk == n  # one block, flushed at once (the run is over)
        rec.finish({})
    r = read_test_record(tmp_path / "f.h5")
    np.testing.assert_array_equal(r.steps["fast/displacement"], logs["fast"]["displacement"])
    np.testing.assert_array_equal(r.steps["ns/u"], logs["ns"]["u"])
    np.testing.assert_array_equal(r.steps["ground_accel"], _ground(n))


def test_log_units_name_every_parameter_and_response():
    test = types.SimpleNamespace(response_names=("floor1", "floor2"), param_names=("k_e", "alpha_sv"),
                                 param_units={"k_e": "N/m", "alpha_sv": "-"})
    units = log_units(test)
    assert units["update/estimate"] == {"k_e": "N/m", "alpha_sv": "1"}
    assert units["ns/displacement"] == {"floor1": "m", "floor2": "m"}
    assert units["fast/force"] == "N" and units["fast/measured"] == "m"
    none = log_units(types.SimpleNamespace(response_names=("roof",), param_names=(), param_units={}))
    assert none["update/estimate"] == "SI"


def test_a_followed_run_is_written_from_the_thread_with_the_same_steps(tmp_path):
    """Paced runs hand the record to a writer thread that follows the loop's preallocated
    logs: the record holds what the loop logged, step for step, and the per-step call
    only reports progress."""
    from rths_ident.hybrid.loop.step_logs import StepLogs

    n = 80
    seen = []
    with TestRecordWriter.open(tmp_path / "r.h5", {}, UNITS, flush_every=1000) as rec:
        recorder = StepRecorder(rec, _time(n), progress=lambda k, log: seen.append(k), ground_accel=_ground(n))
        recorder.start("stepwise")
        logs = StepLogs(n)
        recorder.follow(logs, interval_s=0.001)
        result = run_stepwise(_SpringSite(), _SdofNS(), _ground(n), on_step=recorder, logs=logs)
        recorder.stop_following()
        rec.finish({})
    r = read_test_record(tmp_path / "r.h5")
    assert r.complete and r.n_steps == n and seen == list(range(n))
    reference = run_stepwise(_SpringSite(), _SdofNS(), _ground(n))
    np.testing.assert_array_equal(r.steps["ns/u"], reference["ns"]["u"])
    np.testing.assert_array_equal(r.steps["fast/force"], result["fast"]["force"])
    np.testing.assert_array_equal(r.time, _time(n))


def test_a_write_failing_on_the_thread_stops_the_loop_at_its_next_step(tmp_path):
    """The writer thread's write fails (as on a full disk): the loop's next per-step call
    raises it, so the loop stops there, brings the specimen to rest and keeps its steps,
    as when the loop writes itself."""
    import time

    from rths_ident.hybrid.loop.step_logs import StepLogs
    from rths_ident.records.writer import RecordWriteError

    n = 40
    writes = []

    class FailingWriter:
        steps = 0
        failure = None

        def extend(self, steps):
            writes.append(len(steps["time"]))
            raise RecordWriteError("test record r.h5: the disk is full")

        def event(self, *args, **kwargs):
            pass

    recorder = StepRecorder(FailingWriter(), _time(n))
    logs = StepLogs(n)
    recorder.follow(logs, interval_s=0.001)

    def on_step(k, row):
        if k == 5:  # the thread meets the completed steps and fails on them
            deadline = time.monotonic() + 10.0
            while recorder._failure is None and time.monotonic() < deadline:
                time.sleep(0.001)
        recorder(k, row)

    site, ns = _SpringSite(), _SdofNS()
    ns.dt = DT
    with pytest.raises(LoopAborted) as caught:
        run_stepwise(site, ns, _ground(n), on_step=on_step, logs=logs,
                     safe_stop=SafeStop(hold_s=0.02, ramp_s=0.05, settle_s=0.01))
    message = str(caught.value)
    assert message.startswith("slow step 5 (t = 0.060 s) stopped: recording the step failed: RecordWriteError: "
                              "test record r.h5: the disk is full")
    assert "the 6 completed slow steps are kept" in message and site.x == 0.0
    recorder.stop_following(raise_failure=False)  # what record_aborted does: nothing more is written
    assert len(writes) == 1
