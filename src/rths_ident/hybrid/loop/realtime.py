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


#: latency histogram: bins of this fraction of Δt up to Δt, then one bin for late steps
HISTOGRAM_BINS = 20


def _percentiles_ms(seconds: np.ndarray) -> dict:
    if seconds.size == 0:
        return {"p50": None, "p99": None, "p99.9": None, "max": None}
    ms = 1e3 * seconds
    p50, p99, p999 = np.percentile(ms, (50, 99, 99.9))
    return {"p50": float(p50), "p99": float(p99), "p99.9": float(p999), "max": float(ms.max())}


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
    site_s: np.ndarray | None = None  # per step: the site's step (virtual: the fast chunk's call) [s]
    wake_s: np.ndarray | None = None  # per step: window opening → the loop running (the host's lateness) [s]
    host: dict | None = None  # the host's settings and its jitter measured before the run (realtime_host)
    counters: dict | None = None  # the host's counters over the run: steal, waits for a CPU (host_counters)
    opened_s: float | None = None  # the clock's reading when window 0 opened [s] (window k opens at + k·Δt)

    @property
    def loop_s(self) -> np.ndarray:
        """Per step: the loop's own share of the latency (all but the site and the NS) [s]."""
        site = self.site_s if self.site_s is not None else np.zeros_like(self.latency_s)
        return self.latency_s - site - self.ns_s

    def histogram(self) -> dict:
        """Latency per step in bins of Δt/:data:`HISTOGRAM_BINS` up to Δt, and the late
        steps (latency ≥ Δt) in the last bin (edges in ms)."""
        edges = np.linspace(0.0, self.dt, HISTOGRAM_BINS + 1)
        counts, _ = np.histogram(np.minimum(self.latency_s, self.dt * (1 - 1e-12)), bins=edges)
        late = int(np.sum(self.latency_s >= self.dt))
        counts[-1] -= late
        return {"edges_ms": [float(e) for e in 1e3 * edges], "counts": [int(c) for c in counts], "late": late}

    def as_dict(self) -> dict:
        shares = {}
        if self.latency_s.size:
            total = float(np.sum(self.latency_s))
            for name, part in (("site", self.site_s), ("ns", self.ns_s), ("loop", self.loop_s)):
                if part is not None:
                    shares[name] = float(np.sum(part)) / total if total > 0 else None
        out = {
            "missed_deadlines": self.missed_deadlines,
            "missed_after_startup": self.missed_after_startup,
            "longest_missed_run": self.longest_missed_run,
            "late_targets": self.late_targets,
            "latency_ms": _percentiles_ms(self.latency_s),
            "ns_step_ms": _percentiles_ms(self.ns_s),
            "site_step_ms": _percentiles_ms(self.site_s) if self.site_s is not None else None,
            "loop_own_ms": _percentiles_ms(self.loop_s),
            "wake_late_ms": _percentiles_ms(self.wake_s) if self.wake_s is not None else None,
            "latency_share": shares,
            "latency_histogram": self.histogram(),
            "slow_step_ms": 1e3 * self.dt,
            "steps": self.steps,
            "startup_steps": self.startup_steps,
            "paced_wall_s": self.wall_s,
        }
        if self.host is not None:
            out["host"] = self.host
        if self.counters is not None:
            out["host_counters"] = self.counters
        return out


class RealTimePacer:
    """Hold each slow step of :func:`~rths_ident.hybrid.loop.engine.run_stepwise` to its
    wall-clock window (module doc).

    Args:
        dt: slow step Δt [s] (> 0).
        startup_steps: steps counted as start-up (the zero padding) [-].
        late_fraction: a target later than this fraction of Δt is late (0.6, seed 000).
        clock, sleep: the time source [s] and sleep function (tests inject fakes).
        spin_s: the last part of each wait spent polling ``clock`` instead of sleeping [s]
            (a busy-wait tail: the OS wakes a sleeping thread late by its timer slack and
            scheduling latency; :func:`~rths_ident.hybrid.loop.realtime_host.spin_tail`
            sizes it from the host's measured jitter).
        host: what :mod:`~rths_ident.hybrid.loop.realtime_host` set and measured before
            the run (reported with the figures).
        counters: a :class:`~rths_ident.hybrid.loop.host_counters.HostCounters` read at the
            start and the end, after each step and after each late step (after the
            step's end is timed): the steal and the waits for a CPU over the run.

    Per step it writes into preallocated arrays (``start(n_steps)``; without a length
    they grow): nothing is allocated per step but the clock's readings.
    """

    def __init__(self, dt: float, startup_steps: int = 0, late_fraction: float = LATE_TARGET_FRACTION,
                 clock: Callable[[], float] = time.perf_counter, sleep: Callable[[float], None] = time.sleep,
                 spin_s: float = SPIN_S, host: dict | None = None, counters=None):
        if not (math.isfinite(dt) and dt > 0):
            raise ParameterError(f"RealTimePacer.dt must be a positive number of seconds, got {dt!r}")
        if int(startup_steps) != startup_steps or startup_steps < 0:
            raise ParameterError(f"RealTimePacer.startup_steps must be an integer ≥ 0, got {startup_steps!r}")
        if not 0 < late_fraction <= 1:
            raise ParameterError(f"RealTimePacer.late_fraction must be in (0, 1], got {late_fraction!r}")
        if not (math.isfinite(spin_s) and spin_s >= 0):
            raise ParameterError(f"RealTimePacer.spin_s must be a number of seconds ≥ 0, got {spin_s!r}")
        self.dt = float(dt)
        self.startup_steps = int(startup_steps)
        self.late_fraction = float(late_fraction)
        self.spin_s = float(spin_s)
        self.host = host
        self.counters = counters
        self._clock, self._sleep = clock, sleep
        self._opening = None  # wall time the current window opened [s]
        self._start = None
        self._gc_was_enabled = False
        self._allocate(0)

    def _allocate(self, n: int) -> None:
        self._n = 0
        self._missed = np.zeros(n, dtype=np.int64)  # skipped ticks per step
        self._latency = np.zeros(n)
        self._ns = np.zeros(n)
        self._site = np.full(n, np.nan)
        self._wake = np.zeros(n)

    def _grow(self) -> None:
        size = max(64, 2 * self._latency.size)
        for name in ("_missed", "_latency", "_ns", "_site", "_wake"):
            old = getattr(self, name)
            new = np.full(size, np.nan) if name == "_site" else np.zeros(size, dtype=old.dtype)
            new[:old.size] = old
            setattr(self, name, new)

    def start(self, n_steps: int | None = None) -> None:
        """Open the first window now (call after everything is compiled); ``n_steps``
        sizes the per-step arrays. Python's cyclic garbage collector runs once now, every
        object that exists is moved out of its reach (``gc.freeze``), and it is paused
        until :meth:`stop`: a full collection among a test's logs took ~110 ms on this
        machine class (5 skipped ticks at 50 Hz), and the loop makes no reference cycles
        worth collecting."""
        if n_steps is not None:
            self._allocate(int(n_steps))
        self._gc_was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        if self.counters is not None:
            self.counters.start(self._latency.size)
        self._start = self._opening = self._clock()

    def stop(self) -> None:
        """The paced run is over (or failed): the host's counters read a last time, the
        garbage collector resumes."""
        if self.counters is not None:
            self.counters.stop()
        gc.unfreeze()
        if self._gc_was_enabled:
            gc.enable()
            self._gc_was_enabled = False

    def begin_step(self, k: int) -> None:
        """Wait for window ``k`` to open: sleep, then poll the clock for the last
        ``spin_s``."""
        if self._opening is None:
            self.start()
        opening, clock, spin = self._opening, self._clock, self.spin_s
        while True:
            now = clock()
            remaining = opening - now
            if remaining <= 0:
                break
            if remaining > spin:
                self._sleep(remaining - spin)
        if self._n >= self._latency.size:
            self._grow()
        self._wake[self._n] = now - opening
        if self.counters is not None:
            self.counters.began()

    def end_step(self, k: int, ns_seconds: float, site_seconds: float = math.nan) -> int:
        """Step ``k``'s work is done (``ns_seconds`` of it in the numerical substructure,
        ``site_seconds`` in the site); returns the clock ticks it missed (0 when on time)
        and schedules the next window."""
        now = self._clock()
        latency = now - self._opening
        missed = max(0, math.ceil(latency / self.dt - 1e-12) - 1)
        i = self._n
        if i >= self._latency.size:
            self._grow()
        self._missed[i] = missed
        self._latency[i] = latency
        self._ns[i] = ns_seconds
        self._site[i] = site_seconds
        self._n = i + 1
        self._opening += (missed + 1) * self.dt
        if self.counters is not None:
            self.counters.step(k)
            if missed:
                self.counters.late(k, latency, float(self._wake[i]))
        return missed

    def so_far(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(latency [s], the NS's share [s], missed ticks) per step paced so far: views of
        the first steps of the preallocated arrays, for a watcher on another thread (the
        live page) to read, never to write."""
        n = self._n
        return self._latency[:n], self._ns[:n], self._missed[:n]

    def report(self) -> RealTimeReport:
        n = self._n
        missed = self._missed[:n]
        late = missed > 0
        longest = run = 0
        for flag in late:
            run = run + 1 if flag else 0
            longest = max(longest, run)
        ns = self._ns[:n].copy()
        site = self._site[:n].copy()
        return RealTimeReport(
            dt=self.dt,
            steps=n,
            startup_steps=min(self.startup_steps, n),
            missed_deadlines=int(missed.sum()),
            missed_after_startup=int(missed[self.startup_steps:].sum()),
            longest_missed_run=int(longest),
            late_targets=int(np.sum(ns > self.late_fraction * self.dt)),
            latency_s=self._latency[:n].copy(),
            ns_s=ns,
            wall_s=(self._clock() - self._start) if self._start is not None else 0.0,
            site_s=None if np.all(np.isnan(site)) else site,
            wake_s=self._wake[:n].copy(),
            host=self.host,
            counters=self.counters.as_dict() if self.counters is not None else None,
            opened_s=self._start,
        )
