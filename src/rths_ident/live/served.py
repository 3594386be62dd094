"""What ``rths-ident serve site|ns --live`` shows: each session a client drives, as a run.

The servers do not own the loop (the client does): their page has no STOP (the run's
own page, or the client, stops the test). :class:`LiveElementSite` wraps an OpenFresco
element site (``serve site``): every committed trial is a step — the client's trial
displacement (the target), the measured displacement and the force returned, at the
client's time. :class:`LiveSubstructure` wraps a numerical substructure (``serve ns``):
every slow step — the force received, the target sent back, the substructure's response
when its log has one. A session starts with a :class:`~rths_ident.runner.events.TestStarted`
(the page starts again) and ends with a :class:`~rths_ident.runner.events.RunEnded`.
Both only append to the page's feed (``emit``) on the server's loop.
"""

from __future__ import annotations

import numpy as np

from rths_ident.figure_views import STYLES
from rths_ident.runner.events import RunEnded, StepDone, TestStarted

__all__ = ["LiveElementSite", "LiveSubstructure", "session_info"]


def session_info(title: str, dt: float | None, response_names=()) -> dict:
    """A served session described for the page (its length is the client's affair)."""
    rate = 1.0 / dt if dt else 1.0
    return {"test": title, "scenario": title, "record": None, "updating": None, "compensation": None,
            "transition": None, "engine": "served", "paced": False, "slow_rate_hz": rate, "fast_rate_hz": rate,
            "samples_per_step": 1, "steps": None, "time_first_s": dt or 1.0, "params": [], "guards": None,
            "response_names": list(response_names), "reference": None, "limits": {}, "views": STYLES}


class LiveElementSite:
    """An element site whose committed trials go to the live page (module doc)."""

    def __init__(self, site, emit, title: str):
        self.site, self.emit = site, emit
        self.n_basic = site.n_basic
        self.k = 0
        self._trial = (np.zeros(site.n_basic), 0.0)
        emit(TestStarted(title, session_info(title, None)))

    def __getattr__(self, name):
        return getattr(self.site, name)

    def set_trial(self, displacement, velocity, acceleration, time):
        self._trial = (np.asarray(displacement, dtype=float).reshape(-1), float(time))
        return self.site.set_trial(displacement, velocity, acceleration, time)

    def commit(self):
        result = self.site.commit()
        displacement, time = self._trial
        measured = getattr(self.site, "measured_displacement", None)
        log = {"time": time, "fast": {
            "target": displacement[:1],
            "measured": np.asarray(measured() if measured else displacement, dtype=float).reshape(-1)[:1],
            "force": np.asarray(self.site.force(), dtype=float).reshape(-1)[:1]}}
        self.emit(StepDone(self.k, None, log))
        self.k += 1
        return result

    def finish(self):
        self.emit(RunEnded("complete"))
        return self.site.finish()


class LiveSubstructure:
    """A numerical substructure whose slow steps go to the live page (module doc)."""

    def __init__(self, ns, emit, title: str):
        self.ns, self.emit, self.title = ns, emit, title
        self.dt, self.n_interface = ns.dt, ns.n_interface
        self.k = 0

    def __getattr__(self, name):
        return getattr(self.ns, name)

    def initial_target(self):
        return self.ns.initial_target()

    def step(self, feedback, ground_accel):
        target, log = self.ns.step(feedback, ground_accel)
        response = log.get("displacement") if isinstance(log, dict) else None
        if self.k == 0:
            names = [] if response is None else [f"DOF {i + 1}" for i in range(np.size(response))]
            self.emit(TestStarted(self.title, session_info(self.title, float(self.dt), names)))
        step_log = {"time": (self.k + 1) * float(self.dt),
                    "fast": {"target": np.asarray(target, dtype=float).reshape(-1)[:1],
                             "force": np.asarray(feedback, dtype=float).reshape(-1)[:1]}}
        if response is not None:
            step_log["ns"] = {"displacement": np.asarray(response, dtype=float).reshape(-1)}
        self.emit(StepDone(self.k, None, step_log))
        self.k += 1
        return target, log

    def apply_parameters(self, theta):
        return self.ns.apply_parameters(theta)

    def end_session(self, ok: bool, how: str):
        self.emit(RunEnded("complete" if ok else "stopped", "" if ok else how))
        return self.ns.end_session(ok, how)

    def close(self):
        return self.ns.close()
