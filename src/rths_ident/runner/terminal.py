"""A run as the terminal shows it: a line per finished phase, a progress bar over the
slow steps, a progress line per study — on stderr, so the report on stdout stays clean.

:class:`TerminalView` subscribes to a run's events (:mod:`rths_ident.runner.events`).
Progress that redraws itself (carriage returns) is drawn only where stderr is a
terminal; into a log file a study writes one line per finished batch and a step-wise
run writes nothing per step.

A study's progress line (:class:`StudyProgress`), after every finished batch (one
machine) or chunk (Dask cluster)::

    marths [############..................] 8/21 runs, 12.4 s elapsed, ETA 19.1 s

and a search's (``calibrate``), after every iteration, with the best objective so far::

    calibrate damb [######................] 8/30 iterations, 4.1 s elapsed, ETA 11.3 s, best mean J2 [%] 1.234

The first batch carries the compilation of the loop, so the ETA is measured from the
first batch on: (runs left) × (seconds since the first batch) / (runs done since). After
the first batch alone it is (runs left) × elapsed / (runs done), an overestimate. On a Dask
cluster the kept runs run here first and the cluster's first chunks carry its start-up
and the workers' compilation: the ETA is high until those are done.
"""

from __future__ import annotations

import sys
import time as _time

__all__ = ["StudyProgress", "TerminalView"]


class StudyProgress:
    """``progress(done, total)``: redraws the line (module doc); a newline once
    ``done == total``. stream: where to write (default stderr); clock: seconds; label:
    the line's first word (a study of several records names the record); redraw: over
    the previous line (a terminal) or a new line each time (a log file)."""

    width = 30

    def __init__(self, stream=None, clock=_time.monotonic, label: str = "marths", redraw: bool = True,
                 unit: str = "runs"):
        self.label, self.redraw, self.unit = label, redraw, unit
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.started = clock()
        self.first: tuple[int, float] | None = None  # (runs done, clock) at the first batch
        self._shown = 0  # characters of the line on screen (a shorter line is padded over it)

    def eta_s(self, done: int, total: int, now: float) -> float:
        """Seconds left (module doc)."""
        if self.first is not None and done > self.first[0] and now > self.first[1]:
            return (total - done) * (now - self.first[1]) / (done - self.first[0])
        return (total - done) * (now - self.started) / max(done, 1)

    def line(self, done: int, total: int, now: float) -> str:
        filled = self.width * done // max(total, 1)
        return (f"  {self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {self.unit}, "
                f"{now - self.started:.1f} s elapsed, ETA {self.eta_s(done, total, now):.1f} s")

    def __call__(self, done: int, total: int, suffix: str = "") -> None:
        now = self.clock()
        text = self.line(done, total, now) + suffix
        if self.first is None:
            self.first = (done, now)
        if not self.redraw:
            print(text, file=self.stream, flush=True)
            return
        padded, self._shown = text.ljust(self._shown), len(text)
        print("\r" + padded, end="\n" if done >= total else "", file=self.stream, flush=True)


class TerminalView:
    """The terminal's subscriber to a run's events (module doc). ``quiet``: nothing;
    ``stream``: default stderr; ``interactive``: default whether ``stream`` is a
    terminal (progress that redraws itself only then)."""

    def __init__(self, quiet: bool = False, stream=None, interactive: bool | None = None):
        self.quiet = quiet
        self.stream = sys.stderr if stream is None else stream
        self.interactive = _is_terminal(self.stream) if interactive is None else interactive
        self._bar = None
        self._studies: dict[str, StudyProgress] = {}

    def __call__(self, event) -> None:
        from rths_ident.runner import events  # noqa: PLC0415

        if self.quiet:
            return
        if isinstance(event, events.PhaseEnded):
            self.close_bar()
            print(f"  {event.phase} … {event.seconds:.2f} s", file=self.stream)
        elif isinstance(event, events.StepDone):
            if self.interactive:
                self._step_bar(event.total).update(1)
        elif isinstance(event, events.RunsDone):
            label = event.label or "study"
            if label not in self._studies:
                self._studies[label] = StudyProgress(stream=self.stream, label=label, redraw=self.interactive)
            self._studies[label](event.done, event.total)
        elif isinstance(event, events.IterationDone):
            if event.label not in self._studies:
                self._studies[event.label] = StudyProgress(stream=self.stream, label=event.label,
                                                           redraw=self.interactive, unit="iterations")
            self._studies[event.label](event.done, event.total, f", {event.what} {event.best:.4g}")
        elif isinstance(event, events.Note):
            self.close_bar()
            print(event.text, file=self.stream)
        elif isinstance(event, events.RunEnded):
            self.close_bar()

    def _step_bar(self, total: int):
        if self._bar is None:  # opened at the first step: its rate and ETA count the loop, not the set-up
            from tqdm import tqdm  # noqa: PLC0415

            self._bar = tqdm(total=total, unit="slow step", file=self.stream, leave=False)
        return self._bar

    def close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
