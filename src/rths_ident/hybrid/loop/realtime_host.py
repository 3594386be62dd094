"""The host set up for a paced loop, and its jitter measured before the test starts.

A paced step-wise loop at 1024 Hz has a window of 0.98 ms, and the work of a step takes
a tenth of it: what decides whether it holds the rate is how late the operating system
lets the loop's thread run, on a machine that other processes share. :class:`RealTimeHost`
(a context manager around the paced run) asks the system for what it allows and says
what it got:

* **CPU affinity**: the loop's thread is pinned to one CPU (the last one it may use), so
  it is not migrated between CPUs mid-step (a migration costs its caches);
* **scheduling**: ``SCHED_FIFO`` at :data:`FIFO_PRIORITY` (a real-time policy: the loop's
  thread runs as soon as it is runnable, ahead of every ordinary process); where that is
  refused (no ``CAP_SYS_NICE``, no real-time budget), a nice value of
  :data:`NICE_FALLBACK`; where that is refused too, nothing — each refusal is said in
  :attr:`HostSettings.notes`. Linux still keeps 5 % of each second for ordinary
  processes (``sched_rt_runtime_us``), which is why the loop sleeps through most of each
  window rather than spinning through it;
* **timer slack**: 1 ns for the loop's thread (``prctl(PR_SET_TIMERSLACK)``; ordinary
  threads may be woken up to 50 µs after the time they asked for);
* **XLA's worker threads** (its intra-op pool, ``tf_XLAEigen``): raised to the loop's
  policy and pinned to its CPU, because a compiled call may hand work to them and wait
  (a worker left at the ordinary policy on a loaded machine makes the real-time loop
  wait milliseconds for it — priority inversion);
* **the interpreter's switch interval**: :data:`SWITCH_INTERVAL_S` instead of 5 ms, so that
  when another Python thread (the test record's writer) holds the interpreter lock, the
  loop gets it back within that interval;
* the **garbage collector** is the pacer's (:meth:`RealTimePacer.start`: collected, frozen,
  paused);
* **idle CPUs poll** (``idle_poll``, on by default): a CPU latency request of 0 µs is held
  open on ``/dev/cpu_dma_latency`` (Linux's PM QoS interface; the request ends when the
  file is closed, also when the process dies), so the kernel's idle loop polls instead of
  halting the CPU between the loop's windows. A halted CPU waits for an interrupt to run
  the loop again; in a virtual machine a halt hands the virtual CPU back to the
  hypervisor, which must schedule it again at the next window — late when the host is
  busy (the wake-ups several milliseconds late that a guest's steal counter shows). The
  cost: every CPU runs at full power while a paced run lasts. Refused without write
  access to the file (root, or a udev rule giving the lab's group ``rw``): said;
* **memory locked** (``lock_memory``): ``mlockall(MCL_CURRENT | MCL_FUTURE)``, so that no
  page the loop touches is reclaimed and faulted back in mid-step (refused without
  ``CAP_IPC_LOCK`` or a large enough ``ulimit -l``: said); ``munlockall`` at the end;
* **the process's other threads off the loop's CPU** (``move_other_threads``): every
  thread of the process but the loop's and XLA's workers is pinned to the other CPUs
  the process may use, and a thread started inside the block that calls
  :func:`lower_this_thread` (the test record's writer) goes there too, so that nothing
  of the process but the loop and what it waits for runs on the loop's CPU, nor counts
  against that CPU's real-time budget.

The last two are off by default (:data:`LOCK_MEMORY`, :data:`MOVE_OTHER_THREADS`): on a shared
2-core virtual machine each made the paced loop's p99 and its misses worse in alternated
A/B runs (docs/hybrid/realtime.md says why).

Everything is restored when the block ends, also after a fault. The settings apply to
the calling thread (Linux: affinity, policy, nice and timer slack are per thread);
threads started inside the block inherit them, so a helper thread that must not
compete with the loop lowers its own (:func:`lower_this_thread`).

:func:`measure_jitter` is the calibration loop: before the test, it runs the pacer's wait
for a number of empty windows of the test's Δt and measures how late the thread got
control after each window opened (the wake-up lateness) and how late ``time.sleep``
returned (the sleep overshoot), then how long a thread that spins on the clock is kept off
its CPU (:func:`measure_running_gaps`: what a step's work is exposed to while it runs).
:func:`spin_tail` turns the overshoot into the pacer's
busy-wait tail: the last part of each wait is spent polling the clock when sleeping
would wake too late.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import math
import os
import struct
import sys
import threading
import time
from collections.abc import Callable

import numpy as np

__all__ = ["FIFO_PRIORITY", "NICE_FALLBACK", "SWITCH_INTERVAL_S", "LOCK_MEMORY", "MOVE_OTHER_THREADS", "IDLE_POLL",
           "CPU_LATENCY_FILE",
           "COMPUTE_THREAD_NAMES", "HostSettings", "RealTimeHost", "JitterReport", "measure_jitter",
           "measure_running_gaps", "spin_tail",
           "compute_threads", "other_threads", "lower_this_thread"]

#: SCHED_FIFO priority of the loop's thread (1 … 99; the record writer runs below it)
FIFO_PRIORITY = 50
#: nice value asked for when SCHED_FIFO is refused
NICE_FALLBACK = -10
#: the interpreter's switch interval while paced [s] (Python's default: 0.005)
SWITCH_INTERVAL_S = 50e-6
#: the busy-wait tail is at least this [s] (a clock poll and a Python loop turn cost ~1 µs)
MIN_SPIN_S = 20e-6
#: the calibration's spinning thread [s] (under the real-time throttle's 0.95 s of each second)
RUNNING_CHECK_S = 0.5
#: a gap between two clock readings of a spinning thread counts from this [s] (a Python
#: loop turn is ~0.1 µs; an interrupt a few µs)
RUNNING_GAP_S = 20e-6

#: whether a paced run locks the process's memory (mlockall) by default
LOCK_MEMORY = False
#: whether a paced run moves the process's other threads off the loop's CPU by default
MOVE_OTHER_THREADS = False
#: whether a paced run keeps idle CPUs polling (a 0 µs CPU latency request) by default
IDLE_POLL = True
#: Linux's CPU latency request (PM QoS): a native int32 of µs written to it holds while open
CPU_LATENCY_FILE = "/dev/cpu_dma_latency"

_PR_SET_TIMERSLACK, _PR_GET_TIMERSLACK = 29, 30
_MCL_CURRENT, _MCL_FUTURE = 1, 2
#: the CPUs a RealTimeHost block gives the process's other threads (None: no block moves them)
_OTHER_CPUS: frozenset | None = None


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def _prctl():
    libc = _libc()
    return getattr(libc, "prctl", None) if libc is not None else None


@dataclasses.dataclass
class HostSettings:
    """What a paced run asked of the host and got (JSON: ``realtime.host``)."""

    cpu: int | None = None  # the CPU the loop is pinned to (None: not pinned)
    cpus_available: int | None = None  # CPUs the process may use
    scheduling: str = "SCHED_OTHER"  # the loop thread's policy as set: "SCHED_FIFO 50", "nice -10", …
    timer_slack_ns: int | None = None
    switch_interval_s: float | None = None
    compute_threads: int = 0  # XLA's worker threads raised with the loop (the loop waits for them)
    memory_locked: bool = False  # mlockall(MCL_CURRENT | MCL_FUTURE) granted
    other_threads_moved: int = 0  # the process's other threads pinned off the loop's CPU
    other_cpus: list | None = None  # where they run
    idle_poll: bool = False  # a 0 µs CPU latency request held: idle CPUs poll instead of halting
    notes: list = dataclasses.field(default_factory=list)  # what was refused, and why

    def describe(self) -> str:
        pinned = f"pinned to CPU {self.cpu} of {self.cpus_available}" if self.cpu is not None else "not pinned"
        text = (f"{self.scheduling}, {pinned}, timer slack {self.timer_slack_ns} ns, "
                f"switch interval {1e6 * (self.switch_interval_s or 0):.0f} µs")
        if self.compute_threads:
            text += f", {self.compute_threads} XLA worker threads with the loop"
        if self.idle_poll:
            text += ", idle CPUs polling"
        if self.memory_locked:
            text += ", memory locked"
        if self.other_cpus is not None:
            text += (f", the process's other threads ({self.other_threads_moved}) on CPU "
                     f"{', '.join(str(c) for c in self.other_cpus)}")
        return text + (f" ({'; '.join(self.notes)})" if self.notes else "")


class RealTimeHost:
    """Raise the calling thread's real-time settings for a paced run (module doc);
    ``with RealTimeHost() as settings: …``. ``enabled=False`` changes nothing (the
    settings then say so)."""

    def __init__(self, enabled: bool = True, fifo_priority: int = FIFO_PRIORITY, nice: int = NICE_FALLBACK,
                 switch_interval_s: float = SWITCH_INTERVAL_S, pin: bool = True, lock_memory: bool = LOCK_MEMORY,
                 move_other_threads: bool = MOVE_OTHER_THREADS, idle_poll: bool = IDLE_POLL,
                 cpu_latency_file: str = CPU_LATENCY_FILE):
        self.enabled, self.fifo_priority, self.nice = enabled, int(fifo_priority), int(nice)
        self.switch_interval_s, self.pin = float(switch_interval_s), pin
        self.lock_memory, self.move_other_threads = lock_memory, move_other_threads
        self.idle_poll, self.cpu_latency_file = idle_poll, cpu_latency_file
        self.settings = HostSettings()
        self._allowed: list[int] = []
        self._restore: list[Callable[[], None]] = []

    def __enter__(self) -> HostSettings:
        settings = self.settings
        if not self.enabled:
            settings.notes.append("real-time settings not asked for")
            return settings
        self._pin(settings)
        self._schedule(settings)
        self._timer_slack(settings)
        self._raise_compute_threads(settings)
        if self.idle_poll:
            self._hold_idle_poll(settings)
        if self.move_other_threads:
            self._move_other_threads(settings)
        if self.lock_memory:
            self._lock_memory(settings)
        previous = sys.getswitchinterval()
        sys.setswitchinterval(self.switch_interval_s)
        settings.switch_interval_s = sys.getswitchinterval()
        self._restore.append(lambda: sys.setswitchinterval(previous))
        return settings

    def __exit__(self, *exc) -> bool:
        while self._restore:
            try:
                self._restore.pop()()
            except OSError:
                pass
        return False

    def _pin(self, settings: HostSettings) -> None:
        if not hasattr(os, "sched_getaffinity"):
            settings.notes.append("CPU affinity: not available on this system")
            return
        allowed = sorted(os.sched_getaffinity(0))
        self._allowed = allowed
        settings.cpus_available = len(allowed)
        if not self.pin or len(allowed) < 2:
            return
        try:
            os.sched_setaffinity(0, {allowed[-1]})
        except OSError as error:
            settings.notes.append(f"CPU affinity refused ({error.strerror})")
            return
        settings.cpu = allowed[-1]
        self._restore.append(lambda: os.sched_setaffinity(0, allowed))

    def _schedule(self, settings: HostSettings) -> None:
        if hasattr(os, "sched_setscheduler"):
            policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.fifo_priority))
            except OSError as error:
                settings.notes.append(f"SCHED_FIFO refused ({error.strerror}: needs CAP_SYS_NICE or an "
                                      "rtprio limit, e.g. ulimit -r 99)")
            else:
                settings.scheduling = f"SCHED_FIFO {self.fifo_priority}"
                self._restore.append(lambda: os.sched_setscheduler(0, policy, param))
                return
        try:
            previous = os.getpriority(os.PRIO_PROCESS, 0)
            os.setpriority(os.PRIO_PROCESS, 0, self.nice)
        except (OSError, AttributeError) as error:
            settings.notes.append(f"nice {self.nice} refused ({getattr(error, 'strerror', error)})")
            return
        settings.scheduling = f"nice {os.getpriority(os.PRIO_PROCESS, 0)}"
        self._restore.append(lambda: os.setpriority(os.PRIO_PROCESS, 0, previous))

    def _raise_compute_threads(self, settings: HostSettings) -> None:
        """XLA's worker threads (:data:`COMPUTE_THREAD_NAMES`) to the loop's policy and CPU:
        a compiled call may hand part of its work to them and wait, and a worker left at
        the ordinary policy then waits for a CPU behind every other process while the
        real-time loop waits for it (priority inversion: steps of several ms)."""
        if settings.cpu is None and not settings.scheduling.startswith("SCHED_FIFO"):
            return
        for tid in compute_threads():
            try:
                affinity, policy, param = os.sched_getaffinity(tid), os.sched_getscheduler(tid), os.sched_getparam(tid)
                if settings.cpu is not None:
                    os.sched_setaffinity(tid, {settings.cpu})
                    self._restore.append(lambda tid=tid, affinity=affinity: os.sched_setaffinity(tid, affinity))
                if settings.scheduling.startswith("SCHED_FIFO"):
                    os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(self.fifo_priority))
                    self._restore.append(lambda tid=tid, policy=policy, param=param:
                                         os.sched_setscheduler(tid, policy, param))
            except OSError as error:  # the thread ended, or the system refuses
                settings.notes.append(f"XLA worker thread {tid}: {error.strerror}")
                continue
            settings.compute_threads += 1

    def _move_other_threads(self, settings: HostSettings) -> None:
        """Every thread of the process but this one and XLA's workers to the CPUs the
        process may use other than the loop's (module doc); threads started inside the
        block go there when they call :func:`lower_this_thread`."""
        global _OTHER_CPUS
        if settings.cpu is None:
            return
        others = set(self._allowed) - {settings.cpu}
        if not others:
            return
        keep = {threading.get_native_id(), *compute_threads()}
        for tid in other_threads(keep):
            try:
                affinity = os.sched_getaffinity(tid)
                os.sched_setaffinity(tid, others)
            except OSError:  # the thread ended meanwhile
                continue
            self._restore.append(lambda tid=tid, affinity=affinity: _set_affinity_if_alive(tid, affinity))
            settings.other_threads_moved += 1
        settings.other_cpus = sorted(others)
        previous = _OTHER_CPUS
        _OTHER_CPUS = frozenset(others)

        def forget():
            global _OTHER_CPUS
            _OTHER_CPUS = previous

        self._restore.append(forget)

    def _hold_idle_poll(self, settings: HostSettings) -> None:
        """A 0 µs CPU latency request held open on :attr:`cpu_latency_file` (module doc);
        closing the file ends it."""
        try:
            fd = os.open(self.cpu_latency_file, os.O_WRONLY)
        except OSError as error:
            settings.notes.append(f"idle CPUs polling refused ({self.cpu_latency_file}: {error.strerror}; needs "
                                  "root or write access to it)")
            return
        try:
            os.write(fd, struct.pack("=i", 0))  # µs, a native int32
        except OSError as error:
            os.close(fd)
            settings.notes.append(f"idle CPUs polling refused ({self.cpu_latency_file}: {error.strerror})")
            return
        settings.idle_poll = True
        self._restore.append(lambda: os.close(fd))

    def _lock_memory(self, settings: HostSettings) -> None:
        """``mlockall(MCL_CURRENT | MCL_FUTURE)``, undone by ``munlockall`` (module doc)."""
        libc = _libc()
        if libc is None or not hasattr(libc, "mlockall"):
            settings.notes.append("memory lock: mlockall not available")
            return
        if libc.mlockall(_MCL_CURRENT | _MCL_FUTURE) != 0:
            error = ctypes.get_errno()
            settings.notes.append(f"memory lock refused ({os.strerror(error)}: needs CAP_IPC_LOCK or "
                                  "ulimit -l unlimited)")
            libc.munlockall()  # a partial lock (ENOMEM after some pages) is undone
            return
        settings.memory_locked = True
        self._restore.append(lambda: libc.munlockall())

    def _timer_slack(self, settings: HostSettings) -> None:
        prctl = _prctl()
        if prctl is None:
            settings.notes.append("timer slack: prctl not available")
            return
        previous = prctl(_PR_GET_TIMERSLACK, 0, 0, 0, 0)
        if previous < 0 or prctl(_PR_SET_TIMERSLACK, 1, 0, 0, 0) != 0:
            settings.notes.append("timer slack: refused")
            return
        settings.timer_slack_ns = int(prctl(_PR_GET_TIMERSLACK, 0, 0, 0, 0))
        self._restore.append(lambda: prctl(_PR_SET_TIMERSLACK, previous, 0, 0, 0))


#: name prefixes of the threads a compiled call may wait for (XLA:CPU's intra-op pool)
COMPUTE_THREAD_NAMES = ("tf_XLAEigen",)


def compute_threads() -> list[int]:
    """Thread ids of this process's XLA worker threads (Linux: ``/proc/self/task``; none
    elsewhere)."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return []
    found = []
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm:
                name = comm.read().strip()
        except OSError:
            continue
        if name.startswith(COMPUTE_THREAD_NAMES):
            found.append(int(tid))
    return sorted(found)


def other_threads(keep) -> list[int]:
    """Thread ids of this process but those in ``keep`` (Linux: ``/proc/self/task``)."""
    try:
        return sorted(int(tid) for tid in os.listdir("/proc/self/task") if int(tid) not in keep)
    except OSError:
        return []


def _set_affinity_if_alive(tid: int, cpus) -> None:
    try:
        os.sched_setaffinity(tid, cpus)
    except ProcessLookupError:  # the thread has ended
        pass


def lower_this_thread(fifo_priority: int | None = None) -> str:
    """For a helper thread started inside a :class:`RealTimeHost` block (it inherited the
    loop's settings): run below the loop — SCHED_FIFO at ``fifo_priority`` (default: the
    loop's minus 10) when the loop is SCHED_FIFO, else the ordinary policy; on the CPUs
    the block keeps for the process's other threads (``move_other_threads``), else on any
    CPU the process's main thread may use. Returns what it set."""
    try:
        os.sched_setaffinity(0, _OTHER_CPUS if _OTHER_CPUS else os.sched_getaffinity(os.getpid()))
    except (OSError, AttributeError):
        pass
    try:
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            priority = max(1, FIFO_PRIORITY - 10) if fifo_priority is None else int(fifo_priority)
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
            return f"SCHED_FIFO {priority}"
    except (OSError, AttributeError):
        pass
    return "unchanged"


@dataclasses.dataclass(frozen=True)
class JitterReport:
    """The host's lateness over a calibration loop of empty windows of Δt, and the CPU
    taken from a thread that never sleeps (all in s)."""

    dt: float
    windows: int
    wake_late_s: np.ndarray  # per window: opening → the thread running
    sleep_overshoot_s: np.ndarray  # per sleep: how much later than asked time.sleep returned
    running_s: float = 0.0  # how long the thread spun on the clock (:func:`measure_running_gaps`)
    running_gaps_s: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))  # its gaps ≥ the threshold

    def as_dict(self) -> dict:
        def us(values):
            if values.size == 0:
                return {"p50": None, "p99": None, "p99.9": None, "max": None}
            p50, p99, p999 = np.percentile(values, (50, 99, 99.9))
            return {"p50": 1e6 * float(p50), "p99": 1e6 * float(p99), "p99.9": 1e6 * float(p999),
                    "max": 1e6 * float(values.max())}

        gaps = self.running_gaps_s
        return {"windows": self.windows, "slow_step_ms": 1e3 * self.dt, "wake_late_us": us(self.wake_late_s),
                "sleep_overshoot_us": us(self.sleep_overshoot_s),
                "windows_late_by_half_a_step": int(np.sum(self.wake_late_s > 0.5 * self.dt)),
                "running_thread": {
                    "seconds": self.running_s, "gap_threshold_us": 1e6 * RUNNING_GAP_S,
                    "gaps": int(gaps.size), "gaps_over_100us": int(np.sum(gaps > 100e-6)),
                    "gaps_over_half_a_step": int(np.sum(gaps > 0.5 * self.dt)),
                    "lost_us": 1e6 * float(gaps.sum()), "max_gap_us": 1e6 * float(gaps.max()) if gaps.size else 0.0}}

    def describe(self) -> str:
        d = self.as_dict()
        wake, over, running = d["wake_late_us"], d["sleep_overshoot_us"], d["running_thread"]
        troubles = []
        if d["windows_late_by_half_a_step"]:
            troubles.append(f"{d['windows_late_by_half_a_step']} windows woke more than half a step late")
        if running["gaps_over_half_a_step"]:
            troubles.append(f"a running thread lost the CPU {running['gaps_over_half_a_step']} times for more than "
                            "half a step")
        verdict = ("the host held every window" if not troubles else
                   "; ".join(troubles) + ": this host may not hold the rate")
        text = (f"host jitter over {self.windows} empty windows of {1e3 * self.dt:.3f} ms: wake-up late p50 "
                f"{wake['p50']:.0f} / p99 {wake['p99']:.0f} / p99.9 {wake['p99.9']:.0f} / max {wake['max']:.0f} µs; "
                f"sleep overshoot p99 {over['p99']:.0f} / max {over['max']:.0f} µs")
        if self.running_s > 0:
            text += (f"; a thread spinning {self.running_s:.1f} s lost the CPU {running['gaps_over_100us']} times for "
                     f"more than 100 µs, at most {running['max_gap_us']:.0f} µs")
        return text + f" — {verdict}"


def measure_running_gaps(seconds: float = RUNNING_CHECK_S, threshold_s: float = RUNNING_GAP_S,
                         clock: Callable[[], float] = time.perf_counter) -> tuple[float, np.ndarray]:
    """Spin on the clock for ``seconds`` and return (the time spun [s], every gap between
    two consecutive readings of at least ``threshold_s`` [s]): the time a thread that never
    sleeps is kept off the CPU — interrupts, the guest's scheduler, and the hypervisor
    running something else on this virtual CPU. A paced step's work runs exposed to these
    as this spin does (a hardware-latency detector's measure, from inside the process)."""
    gaps = []
    start = last = clock()
    end = start + seconds
    while last < end:
        now = clock()
        if now - last >= threshold_s:
            gaps.append(now - last)
        last = now
    return last - start, np.array(gaps)


def measure_jitter(dt: float, seconds: float = 1.0, spin_s: float | None = None,
                   clock: Callable[[], float] = time.perf_counter,
                   sleep: Callable[[float], None] = time.sleep, running_seconds: float = 0.0) -> JitterReport:
    """Run ``seconds`` of empty windows of ``dt`` (the pacer's wait: sleep, then poll the
    clock for the last ``spin_s``; None: no polling, so every wake-up is the sleep's)
    and measure the lateness, then spin ``running_seconds`` on the clock
    (:func:`measure_running_gaps`; module doc). Call it inside the :class:`RealTimeHost`
    block the test will run in."""
    n = max(1, int(round(seconds / dt)))
    spin = 0.0 if spin_s is None else float(spin_s)
    wake = np.zeros(n)
    overshoot = np.full(n, np.nan)
    opening = clock() + dt
    for k in range(n):
        while True:
            now = clock()
            remaining = opening - now
            if remaining <= 0:
                break
            if remaining > spin:
                asked = remaining - spin
                sleep(asked)
                after = clock()
                overshoot[k] = (after - now) - asked
        wake[k] = now - opening
        opening += dt * max(1, math.ceil((clock() - opening) / dt + 1e-12))
    running_s, running_gaps = measure_running_gaps(running_seconds, clock=clock) if running_seconds > 0 else (
        0.0, np.zeros(0))
    return JitterReport(dt, n, wake, overshoot[np.isfinite(overshoot)], running_s, running_gaps)


def spin_tail(jitter: JitterReport) -> float:
    """The pacer's busy-wait tail [s]: the sleep overshoot's 99.9th percentile (a sleep
    that ends later than that is rare), at least :data:`MIN_SPIN_S`, at most half a step
    (beyond that the loop would spin through its windows)."""
    over = jitter.sleep_overshoot_s
    tail = float(np.percentile(over, 99.9)) if over.size else 0.0
    return float(min(max(tail, MIN_SPIN_S), 0.5 * jitter.dt))
