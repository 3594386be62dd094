"""What a served session (serve ns, serve site) tells its live page: a new run per
session, a step per slow step or committed trial, the end."""

import numpy as np

from rths_ident.live.served import LiveElementSite, LiveSubstructure
from rths_ident.live.state import LiveState
from rths_ident.runner.events import RunEnded, StepDone, TestStarted


class _NS:
    dt, n_interface = 0.02, 1

    def __init__(self):
        self.u = np.zeros(3)
        self.ended = None

    def initial_target(self):
        return np.zeros(1)

    def step(self, feedback, ground_accel):
        self.u = self.u + np.array([1.0, 2.0, 3.0]) * 1e-3
        return self.u[:1], {"displacement": self.u.copy()}

    def end_session(self, ok, how):
        self.ended = (ok, how)


class _Site:
    n_basic = 1

    def __init__(self):
        self.trial = 0.0

    def set_trial(self, displacement, velocity, acceleration, time):
        self.trial = float(np.ravel(displacement)[0])

    def commit(self):
        return "committed"

    def measured_displacement(self):
        return np.array([0.9 * self.trial])

    def force(self):
        return np.array([1e5 * self.trial])

    def finish(self):
        return "finished"


def test_a_served_substructure_session_is_a_run_on_the_page():
    events = []
    ns = LiveSubstructure(_NS(), events.append, "serve ns — session 1")
    for _ in range(5):
        ns.step(np.array([10.0]), 0.1)
    ns.end_session(True, "SHUTDOWN")
    assert isinstance(events[0], TestStarted) and events[0].info["response_names"] == ["DOF 1", "DOF 2", "DOF 3"]
    steps = [e for e in events if isinstance(e, StepDone)]
    assert [e.step for e in steps] == list(range(5)) and steps[-1].log["time"] == 5 * 0.02
    assert isinstance(events[-1], RunEnded) and events[-1].how == "complete" and ns.ns.ended == (True, "SHUTDOWN")
    state = LiveState()
    for e in events:
        state.apply(0.0, e)
    np.testing.assert_allclose(state.series["ns:2"], 3e-3 * np.arange(1, 6))
    np.testing.assert_allclose(state.series["t"], 0.02 * np.arange(1, 6))
    assert state.series["force"] == [10.0] * 5


def test_a_served_element_site_session_draws_its_committed_trials():
    events = []
    site = LiveElementSite(_Site(), events.append, "serve site — session 1")
    for k in range(4):
        site.set_trial([0.001 * (k + 1)], [0.0], [0.0], 0.01 * (k + 1))
        assert site.commit() == "committed"
    assert site.finish() == "finished"
    state = LiveState()
    for e in events:
        state.apply(0.0, e)
    state.after_batch()
    x = 0.001 * np.arange(1, 5)
    np.testing.assert_allclose(state.series["target"], x)
    np.testing.assert_allclose(state.series["measured"], 0.9 * x)
    np.testing.assert_allclose(state.series["error"], -0.1 * x)
    np.testing.assert_allclose(state.loop["f"], 1e5 * x)
    assert state.status["state"] == "ended" and state.status["total"] is None
