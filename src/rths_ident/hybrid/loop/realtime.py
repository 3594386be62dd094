"""Real-time pacing of the step-wise loop against the wall clock, and its report.

A lab's real-time controller runs the fast loop on a hardware clock; the slow side must
deliver each new target within the slow step Δt (seed 000 §3.3.2, §8.1; digest 003 §7.6).
Here the fast side computes one compiled chunk per slow step, as a lab controller would,
and :class:`RealTimePacer` holds each slow step to its wall-clock window:

* window k is [t₀ + k·Δt, t₀ + (k+1)·Δt) (t₀ when the pacer starts, after every program
  is compiled); the step's work (the site's chunk, the updater, the numerical
  substructure's step) starts at the window's opening and must end before it closes;
* a step that ends late is a **missed deadline**. Like Simulink Desktop Real-Time in its
  soft real-time (accelerator) mode, the loop then does not try to catch up: the
  clock ticks that passed while it ran are skipped, counted, and the next step starts at
  the next tick (the test falls behind the wall clock by whole steps);
* the report counts missed deadlines in total, after start-up (the zero padding at the
  start of the record absorbs connection and cache warm-up, seed 003 §4.2: 5 s), and the
  longest run of consecutive misses; it gives the per-step latency (window opening → the
  next target ready) and the numerical substructure's share of it (for a remote NS, the
  round trip) as p50 / p99 / max in ms;
* a target later than ``late_fraction``·Δt (0.6, seed 000 §8.1) is a **late target**: a
  predictor–corrector fast side would have slowed its command down during that step.

Seed 003's figures for comparison (40 runs of its Simulink/OpenSees set-up): worst 426
missed ticks, worst 18 after start-up (t > 4 s), median 0.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import time
from collections.abc import Callable

import numpy as np

from rths_ident.errors import ParameterError

#: seed 000 §8.1: the NS must compute each step within 0.6·Δt for a predictor–corrector
LATE_TARGET_FRACTION = 0.6
#: seed 003 §4.2: zero padding at the start of a real-time record [s]
DEFAULT_PADDING_S = 5.0
#: the last part of a wait is spent polling the clock instead of sleeping (the OS wakes a
#: sleeping thread up to ~0.1 ms late) [s]
SPIN_S = 0.0005


def _percentiles_ms(seconds: np.ndarray) -> dict:
    if seconds.size == 0:
        return {"p50": None, "p99": None, "max": None}
    ms = 1e3 * seconds
    return {"p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)), "max": float(ms.max())}


@dataclasses.dataclass(frozen=True)
class RealTimeReport:
    """What a paced run reports (JSON: ``missed_deadlines``, ``latency_ms``, …)."""

    dt: float  # slow step Δt [s]
    steps: int
    startup_steps: int
    missed_deadlines: int  # total skipped clock ticks (slow steps)
    missed_after_startup: int
    longest_missed_run: int  # most consecutive late steps
    late_targets: int  # NS step longer than 0.6·Δt (a predictor–corrector would slow down)
    latency_s: np.ndarray  # per step: window opening → next target ready [s]
    ns_s: np.ndarray  # per step: the numerical substructure's step (remote: round trip) [s]
    wall_s: float  # from the first window to the end of the last step [s]

    def as_dict(self) -> dict:
        return {
            "missed_deadlines": self.missed_deadlines,
            "missed_after_startup": self.missed_after_startup,
            "longest_missed_run": self.longest_missed_run,
            "late_targets": self.late_targets,
            "latency_ms": _percentiles_ms(self.latency_s),
            "ns_step_ms": _percentiles_ms(self.ns_s),
            "slow_step_ms": 1e3 * self.dt,
            "startup_steps": self.startup_steps,
            "paced_wall_s": self.wall_s,
        }


class RealTimePacer:
    """Hold each slow step of :func:`~rths_ident.hybrid.loop.engine.run_stepwise` to its
    wall-clock window (module doc).

    Args:
        dt: slow step Δt [s] (> 0).
        startup_steps: steps counted as start-up (the zero padding) [-].
        late_fraction: a target later than this fraction of Δt is late (0.6, seed 000).
        clock, sleep: the time source [s] and sleep function (tests inject fakes).
        spin_s: the last part of each wait spent polling ``clock`` instead of sleeping [s].
    """

    def __init__(self, dt: float, startup_steps: int = 0, late_fraction: float = LATE_TARGET_FRACTION,
                 clock: Callable[[], float] = time.perf_counter, sleep: Callable[[float], None] = time.sleep,
                 spin_s: float = SPIN_S):
        if not (math.isfinite(dt) and dt > 0):
            raise ParameterError(f"RealTimePacer.dt must be a positive number of seconds, got {dt!r}")
        if int(startup_steps) != startup_steps or startup_steps < 0:
            raise ParameterError(f"RealTimePacer.startup_steps must be an integer ≥ 0, got {startup_steps!r}")
        if not 0 < late_fraction <= 1:
            raise ParameterError(f"RealTimePacer.late_fraction must be in (0, 1], got {late_fraction!r}")
        self.dt = float(dt)
        self.startup_steps = int(startup_steps)
        self.late_fraction = float(late_fraction)
        self._clock, self._sleep, self._spin_s = clock, sleep, float(spin_s)
        self._opening = None  # wall time the current window opened [s]
        self._start = None
        self._missed: list[int] = []  # skipped ticks per step
        self._latency: list[float] = []
        self._ns: list[float] = []

    def start(self) -> None:
        """Open the first window now (call after everything is compiled). Python's cyclic
        garbage collector runs once now and is paused until :meth:`stop`: a full
        collection among a test's logs took ~110 ms on this machine class (5 skipped
        ticks at 50 Hz), and the loop makes no reference cycles worth collecting."""
        self._gc_was_enabled = gc.isenabled()
        gc.collect()
        gc.disable()
        self._start = self._opening = self._clock()

    def stop(self) -> None:
        """The paced run is over (or failed): the garbage collector resumes."""
        if getattr(self, "_gc_was_enabled", False):
            gc.enable()
            self._gc_was_enabled = False

    def begin_step(self, k: int) -> None:
        """Wait for window ``k`` to open."""
        if self._opening is None:
            self.start()
        while True:
            remaining = self._opening - self._clock()
            if remaining <= 0:
                return
            if remaining > self._spin_s:
                self._sleep(remaining - self._spin_s)

    def end_step(self, k: int, ns_seconds: float) -> int:
        """Step ``k``'s work is done (``ns_seconds`` of it in the numerical substructure);
        returns the clock ticks it missed (0 when on time) and schedules the next window."""
        now = self._clock()
        latency = now - self._opening
        missed = max(0, math.ceil(latency / self.dt - 1e-12) - 1)
        self._missed.append(missed)
        self._latency.append(latency)
        self._ns.append(float(ns_seconds))
        self._opening += (missed + 1) * self.dt
        return missed

    def so_far(self) -> tuple[list, list, list]:
        """(latency [s], the NS's share [s], missed ticks) per step paced so far: lists that
        only grow, for a watcher on another thread (the live page) to read, never to write."""
        return self._latency, self._ns, self._missed

    def report(self) -> RealTimeReport:
        missed = np.asarray(self._missed, dtype=int)
        late = missed > 0
        longest = run = 0
        for flag in late:
            run = run + 1 if flag else 0
            longest = max(longest, run)
        ns = np.asarray(self._ns, dtype=float)
        return RealTimeReport(
            dt=self.dt,
            steps=len(missed),
            startup_steps=min(self.startup_steps, len(missed)),
            missed_deadlines=int(missed.sum()),
            missed_after_startup=int(missed[self.startup_steps:].sum()),
            longest_missed_run=int(longest),
            late_targets=int(np.sum(ns > self.late_fraction * self.dt)),
            latency_s=np.asarray(self._latency, dtype=float),
            ns_s=ns,
            wall_s=(self._clock() - self._start) if self._start is not None else 0.0,
        )
