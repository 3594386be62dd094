"""What a run tells whoever watches it, as it goes: an event stream.

A run emits :class:`Event` objects — a phase ended (building, compiling, running …), a
slow step completed, a batch of a study finished, the run ended or stopped — to an
:class:`EventStream`. Subscribers are plain callables ``(event) -> None``: the terminal
(phase lines, a progress bar where there is a terminal), a live page, a test. A
subscriber that raises does not stop the run: it is dropped, and the run says so once.

Events carry only what is cheap to give: a step event holds the step's index, its test
time and the step's log as the loop produced it (no copy); what a subscriber keeps is
its own affair.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Callable

__all__ = ["Event", "PhaseEnded", "TestStarted", "StepDone", "RunsDone", "IterationDone", "StudyRun", "Note",
           "RunEnded", "EventStream"]


@dataclasses.dataclass(frozen=True)
class Event:
    """Something a run reports (subclasses say what)."""


@dataclasses.dataclass(frozen=True)
class PhaseEnded(Event):
    """A phase of the run ended: ``building``, ``compiling``, ``running updating`` …"""

    phase: str
    seconds: float


@dataclasses.dataclass(frozen=True)
class TestStarted(Event):
    """The configured run's loop is about to take its first slow step (everything
    compiled): what a watcher needs to draw it.

    ``info``: JSON-ready, SI units (:func:`rths_ident.runner.watch_info.describe_run`: rates,
    steps, the identified parameters with units, true and initial values, the hook's
    guards, the response's names and its reference, the actuator's limits). ``watch``:
    objects a watcher on another thread may read while the run goes — ``pacer`` (the
    paced run's :class:`~rths_ident.hybrid.loop.realtime.RealTimePacer`), ``model_force``
    (``(θ, displacement [m]) -> force [N]``: the identified model along a displacement).
    """

    __test__ = False  # not a pytest class

    name: str
    info: dict
    watch: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class StepDone(Event):
    """Slow step ``step`` (0-based) of ``total`` completed (step-wise engine, as it
    happens; fused engine: after the compiled call)."""

    step: int
    total: int
    log: Any = None  # the step's log (NumPy arrays), as the loop produced it


@dataclasses.dataclass(frozen=True)
class RunsDone(Event):
    """A study: ``done`` of ``total`` runs finished (``label``: which study)."""

    done: int
    total: int
    label: str = ""


@dataclasses.dataclass(frozen=True)
class IterationDone(Event):
    """A search (``calibrate``): iteration ``done`` of ``total`` finished; ``best`` is the
    best objective so far, ``what`` names it (e.g. ``best mean J2 [%]``)."""

    done: int
    total: int
    best: float
    label: str = "search"
    what: str = "best"


@dataclasses.dataclass(frozen=True)
class StudyRun(Event):
    """One run of a study finished: run ``run`` of study ``label``, its indices ``values``
    (name -> number, e.g. the maRTHS J1–J10, each the mean over its components) in
    ``units`` (name -> unit)."""

    label: str
    run: int
    values: dict
    units: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Note(Event):
    """A line worth telling (a server started, a record written)."""

    text: str


@dataclasses.dataclass(frozen=True)
class RunEnded(Event):
    """The run ended: ``how`` is ``"complete"``, ``"stopped"`` (a fault, a limit, the
    operator) or ``"failed"``; ``reason`` says why when it did not complete."""

    how: str
    reason: str = ""


class EventStream:
    """Delivers events to subscribers, in order, on the caller's thread (module doc)."""

    def __init__(self, *subscribers: Callable[[Event], None]):
        self._subscribers: list[Callable[[Event], None]] = list(subscribers)

    def subscribe(self, subscriber: Callable[[Event], None]) -> Callable[[Event], None]:
        self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Callable[[Event], None]) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    @property
    def wants_steps(self) -> bool:
        """Whether anyone listens (a run may skip building step events otherwise)."""
        return bool(self._subscribers)

    def emit(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception as error:  # noqa: BLE001 - a watcher must not stop the test
                self._subscribers.remove(subscriber)
                print(f"rths-ident: a watcher of the run failed and was dropped ({type(error).__name__}: {error})",
                      file=sys.stderr)

    # conveniences with the shapes the loops already call
    def phase(self, phase: str, seconds: float) -> None:
        self.emit(PhaseEnded(phase, seconds))

    def step_callback(self, total: int) -> Callable[[int, Any], None]:
        """``on_step(k, step_log)`` for the step-wise engine."""

        def on_step(k: int, step_log) -> None:
            self.emit(StepDone(k, total, step_log))

        return on_step

    def runs_callback(self, label: str = "") -> Callable[[int, int], None]:
        """``progress(done, total)`` for a study."""

        def progress(done: int, total: int) -> None:
            self.emit(RunsDone(done, total, label))

        return progress

    def iterations_callback(self, total: int, label: str = "search",
                            what: str = "best") -> Callable[[int, float], None]:
        """``progress(iteration, best)`` for a search of ``total`` iterations."""

        def progress(done: int, best: float) -> None:
            self.emit(IterationDone(done, total, float(best), label, what))

        return progress
