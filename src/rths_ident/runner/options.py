"""How a test is run (not what it is): the engine, the comparison runs, pacing, where
its record goes, the declaration the record keeps, and who watches it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rths_ident.runner.events import EventStream

__all__ = ["RunOptions", "ENGINES"]

ENGINES = ("fused", "stepwise")


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """engine : ``"fused"`` (one compiled loop; every part native) or ``"stepwise"``
        (the substructure and the site called from Python once per slow step).
    compare : also run the comparison variants (no updating, oracle) where the test has
        them.
    realtime : pace the step-wise loop against the wall clock.
    test_record : the test record's path (HDF5, written as the test goes); None: none.
    test_file : the test file's text the record keeps, so that ``rths-ident run
        RECORD.h5`` runs the same test again.
    events : the run's event stream (:mod:`rths_ident.runner.events`); None: nobody
        watches.
    stop : a :class:`~rths_ident.hybrid.loop.stop_request.StopRequest` (STOP on the live
        page, Ctrl-C): the step-wise loop of the configured run reads it once per slow
        step and brings the specimen to rest through the safe stop; None: none.
    fused_loop : ``fused_loop(test) -> runner`` (fused engine): the configured run's loop
        is ``runner(fast params, initial, ground acceleration)`` instead of a compiled
        loop of its own (a study's batch, :mod:`rths_ident.scenarios.study_batches`);
        None: the run compiles its own.
    """

    engine: str = "fused"
    compare: bool = True
    realtime: bool = False
    test_record: Path | None = None
    test_file: str | None = None
    events: EventStream | None = None
    stop: Any = None
    fused_loop: Any = None

    @property
    def stream(self) -> EventStream:
        """The event stream (an empty one when nobody watches)."""
        return self.events if self.events is not None else EventStream()

    def step_callback(self, total: int):
        """``on_step(k, step_log)`` emitting step events, or None when nobody watches."""
        return None if self.events is None or not self.events.wants_steps else self.events.step_callback(total)

    def phase_callback(self):
        """``phases(name, seconds)`` emitting phase events, or None when nobody watches."""
        return None if self.events is None else self.events.phase
