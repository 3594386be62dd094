"""The identified model's loop for the live page, computed in the run's process, never on
the loop's thread.

The identified model's force along the measured displacement needs the run's own model
(``TestStarted.watch["model_force"]``, a compiled JAX function): it cannot move to the
page's server process. :class:`ModelLoopMaker` collects, on the emitting thread, a
reference to each slow step's measured displacement (first interface DOF) and the latest
estimate θ̂ — two list appends per step, no copy — and computes
``model_force(θ̂, displacement)`` (the whole record's length every time: one compiled
program per run):

* in a run that is not paced: on its own thread, every :data:`MODEL_LOOP_PERIOD_S` of
  wall time;
* in a paced run: only once the run has ended (:meth:`ModelLoopMaker.final`, called by
  the page's close), since its first computation compiles the model and would compete
  with the loop.

Each result goes to the server process as a :class:`~rths_ident.live.channel.ModelLoop`
frame on a socket of its own (blocking, on this thread: the loop's sender is never
involved).
"""

from __future__ import annotations

import socket
import threading
import time as _time
from collections.abc import Mapping

import numpy as np

from rths_ident.live.channel import ModelLoop, frame
from rths_ident.live.state import MODEL_LOOP_PERIOD_S, first_dof
from rths_ident.runner.events import StepDone, TestStarted

__all__ = ["ModelLoopMaker"]


class ModelLoopMaker:
    """``observe(event)`` on the emitting thread; results to ``sock`` (module doc)."""

    def __init__(self, sock: socket.socket, period_s: float = MODEL_LOOP_PERIOD_S):
        self._socket = sock
        self._period = float(period_s)
        self._model_force = None
        self._paced = True
        self._total = 0
        self._measured: list = []
        self._theta = None
        self._lock = threading.Lock()  # one computation at a time (the thread's, or the final one)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sent_steps = -1

    def observe(self, event) -> None:
        kind = type(event)
        if kind is StepDone:
            if self._model_force is None:
                return
            log = event.log
            fast = log.get("fast") if isinstance(log, Mapping) else None
            if fast is not None and "measured" in fast:
                self._measured.append(fast["measured"])
            update = log.get("update") if isinstance(log, Mapping) else None
            if update is not None:
                self._theta = update["estimate"]
        elif kind is TestStarted:
            self._model_force = (event.watch or {}).get("model_force")
            self._paced = (event.watch or {}).get("pacer") is not None
            info = event.info
            self._total = int(info.get("steps") or 0) * int(info.get("samples_per_step") or 1)
            self._measured, self._theta, self._sent_steps = [], None, -1
            if self._model_force is not None and not self._paced and self._thread is None:
                self._thread = threading.Thread(target=self._every_period, name="rths-ident live model loop",
                                                daemon=True)
                self._thread.start()

    def _every_period(self) -> None:
        while not self._stop.wait(self._period):
            self.compute()

    def compute(self) -> None:
        """Simulate the model with the latest θ̂ along the displacement so far and send it
        (nothing when nothing is new)."""
        with self._lock:
            model_force, theta, steps = self._model_force, self._theta, len(self._measured)
            if model_force is None or theta is None or steps == 0 or steps == self._sent_steps:
                return
            measured = np.concatenate([first_dof(m) for m in self._measured[:steps]])
            padded = np.zeros(max(self._total, measured.size))
            padded[:measured.size] = measured
            theta = np.atleast_1d(np.asarray(theta, dtype=float))
            try:
                force = np.asarray(model_force(theta, padded), dtype=float)[:measured.size]
                result = ModelLoop(theta.tolist(), force)
            except Exception as error:  # noqa: BLE001 - the page says why instead of the run
                result = ModelLoop(theta.tolist(), None, f"{type(error).__name__}: {error}")
            self._sent_steps = steps
            try:
                self._socket.sendall(frame(_time.time(), result))
            except OSError:  # the server process has gone
                self._model_force = None

    def final(self) -> None:
        """The run has ended: stop the periodic thread, compute once more."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30.0)
        self.compute()
