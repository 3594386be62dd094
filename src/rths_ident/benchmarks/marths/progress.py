"""The progress line of a maRTHS study: runs done / planned, elapsed, ETA (stderr).

Called after every finished batch (one machine) or chunk (Dask cluster) by
:func:`~rths_ident.benchmarks.marths.study.run_study`::

    marths [############..................] 8/21 runs, 12.4 s elapsed, ETA 19.1 s

The first batch carries the compilation of the loop, so the ETA is measured from the
first batch on: (runs left) × (seconds since the first batch) / (runs done since). After
the first batch alone it is (runs left) × elapsed / (runs done), an overestimate. On a Dask
cluster the kept runs run here first and the cluster's first chunks carry its start-up
and the workers' compilation: the ETA is high until those are done.
"""

from __future__ import annotations

import sys
import time as _time

__all__ = ["StudyProgress"]


class StudyProgress:
    """``progress(done, total)``: redraws the line (module doc); a newline once
    ``done == total``. stream: where to write (default stderr); clock: seconds; label:
    the line's first word (a study of several records names the record)."""

    width = 30

    def __init__(self, stream=None, clock=_time.monotonic, label: str = "marths"):
        self.label = label
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
        return (f"  {self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} runs, "
                f"{now - self.started:.1f} s elapsed, ETA {self.eta_s(done, total, now):.1f} s")

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        text = self.line(done, total, now)
        if self.first is None:
            self.first = (done, now)
        padded, self._shown = text.ljust(self._shown), len(text)
        print("\r" + padded, end="\n" if done >= total else "", file=self.stream, flush=True)
