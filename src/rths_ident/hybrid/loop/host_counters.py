"""The host's counters around a paced run: the time the machine took from the loop.

A paced step that stalls for tens of milliseconds with no work of its own in it was
stalled by the host. Linux counts the ways it can do that, and :class:`HostCounters`
reads those counts at the start and the end of a paced run, and around its late steps:

* **steal** — the time the hypervisor ran something else while this virtual CPU had work
  (``/proc/stat``, the 8th value of a ``cpuN`` line, in clock ticks of
  ``SC_CLK_TCK``: 10 ms each at the usual 100 Hz). It is read for the loop's CPU (its
  ``cpuN`` line) and for the whole machine (the ``cpu`` line, the sum over CPUs);
* the loop thread's **wait for a CPU** — the time it was runnable but not running, in ns
  (``/proc/self/task/TID/schedstat``, 2nd value; the 1st is its time on the CPU), which is
  where the guest's own scheduler shows: a real-time thread that used up its share of
  ``sched_rt_runtime_us`` is throttled, runnable, until the next period, and one that
  another process's real-time thread of its priority holds off waits here too (the time
  on the CPU, read by the thread itself, is brought up to date at the scheduler's ticks:
  it may lag by one);
* **involuntary context switches** — the loop thread's (``getrusage(RUSAGE_THREAD)``) and
  the whole process's (``RUSAGE_SELF``), each a time the kernel took a CPU from a thread
  that still wanted it.

Per step the pacer reads only the loop thread's own CPU clock (``CLOCK_THREAD_CPUTIME_ID``,
~1 µs a reading on this machine class): when the window has opened and when the step's work
is done (:meth:`HostCounters.began`, :meth:`HostCounters.step`), so that a late step says how
much of its work the thread spent on a CPU as the guest's kernel counts it. A step whose
work took 2 ms of wall time and 2 ms of the thread's CPU time, with no wait for a CPU and no
switch, was not held off by the guest's scheduler nor by a blocking call; interrupt
handling (charged to the interrupted thread where ``CONFIG_IRQ_TIME_ACCOUNTING`` is off),
time the hypervisor took without counting it as steal, and work that ran slower all look
the same from here.
``/proc/stat`` and the thread's ``schedstat`` (~10 µs) are read at the start, at the end, and
after each late step, after the step's end has been timed (:meth:`HostCounters.late`): a
late step's steal and wait for a CPU are those since the previous reading, which brackets
the stall.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import threading
import time

import numpy as np

__all__ = ["HostCounters", "steal_ticks", "thread_schedstat", "CLOCK_TICK_S"]

#: /proc/stat counts in clock ticks of this length [s]
CLOCK_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
#: the index of steal among a /proc/stat cpu line's values (user nice system idle iowait irq softirq steal …)
STEAL_FIELD = 7
#: late steps whose counters are kept per run (the longest are reported)
MAX_LATE_SAMPLES = 256


def steal_ticks(stat: bytes, cpu: int | None) -> int:
    """The steal count [clock ticks] of ``cpu``'s line of ``/proc/stat`` text ``stat``
    (``cpu`` None: the machine's ``cpu`` line, the sum over CPUs)."""
    label = b"cpu " if cpu is None else b"cpu%d " % cpu
    start = 0 if stat.startswith(label) else stat.index(b"\n" + label) + 1
    end = stat.index(b"\n", start)
    return int(stat[start:end].split()[1 + STEAL_FIELD])


def thread_schedstat(text: bytes) -> tuple[int, int]:
    """(time on the CPU, time runnable but waiting for it) [ns] from a thread's
    ``schedstat`` text."""
    on_cpu, waiting, _ = text.split()
    return int(on_cpu), int(waiting)


@dataclasses.dataclass
class _Reading:
    t: float  # perf_counter [s]
    steal_cpu: int  # ticks
    steal_all: int  # ticks
    on_cpu_ns: int
    wait_ns: int
    thread_nivcsw: int
    process_nivcsw: int


class HostCounters:
    """The host's counters over one paced run on the calling thread (module doc):
    :meth:`start` and :meth:`stop` on the loop's thread, :meth:`step` after each step,
    :meth:`late` after a late one. Where ``/proc`` is missing (not Linux) every figure
    is None."""

    def __init__(self, cpu: int | None = None):
        self.cpu = cpu
        self._stat = self._sched = None
        self._first = self._last_stat = self._end = None
        self._late: list = []
        self._work_cpu_ns = np.zeros(0, dtype=np.int64)
        self._began_ns = 0
        self._n = 0

    # -- readings -------------------------------------------------------------------------
    def _read(self) -> _Reading | None:
        if self._stat is None:
            return None
        stat = os.pread(self._stat, 65536, 0)
        on_cpu, wait = thread_schedstat(os.pread(self._sched, 128, 0)) if self._sched is not None else (0, 0)
        return _Reading(time.perf_counter(), steal_ticks(stat, self.cpu), steal_ticks(stat, None), on_cpu, wait,
                        resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw,
                        resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw)

    def start(self, n_steps: int = 0) -> None:
        """Open the files and take the first reading (the loop's thread, before its first step)."""
        self.close()
        try:
            self._stat = os.open("/proc/stat", os.O_RDONLY)
            self._sched = os.open(f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY)
        except (OSError, AttributeError):
            self.close()
            return
        if self.cpu is not None:
            try:
                steal_ticks(os.pread(self._stat, 65536, 0), self.cpu)
            except ValueError:  # no line for that CPU (another process's affinity): the machine's only
                self.cpu = None
        self._work_cpu_ns = np.zeros(n_steps, dtype=np.int64)
        self._began_ns = time.thread_time_ns()
        self._n = 0
        self._late = []
        self._first = self._last_stat = self._read()
        self._end = None

    def began(self) -> None:
        """Step's window has opened (the pacer's wait is over): the thread's CPU clock."""
        self._began_ns = time.thread_time_ns()

    def step(self, k: int) -> None:
        """After step ``k``'s work (its end timed): the thread's CPU time since :meth:`began`."""
        if self._stat is None:
            return
        i = self._n
        if i >= self._work_cpu_ns.size:
            self._work_cpu_ns = np.resize(self._work_cpu_ns, max(64, 2 * self._work_cpu_ns.size))
        self._work_cpu_ns[i] = time.thread_time_ns() - self._began_ns
        self._n = i + 1

    def late(self, k: int, latency_s: float, woke_late_s: float = 0.0) -> None:
        """Step ``k`` ended ``latency_s`` after its window opened, past its deadline
        (``woke_late_s`` of it before the thread ran): its work's wall time and the thread's
        CPU time in it, and the steal and the thread's wait for a CPU since the previous
        reading of ``/proc`` (which brackets the stall)."""
        if self._stat is None or len(self._late) >= MAX_LATE_SAMPLES:
            return
        started = time.perf_counter()
        now = self._read()
        read_us = 1e6 * (time.perf_counter() - started)
        before = self._last_stat
        self._late.append({
            "step": int(k), "latency_ms": 1e3 * latency_s, "woke_late_ms": 1e3 * woke_late_s,
            "work_ms": 1e3 * (latency_s - woke_late_s),
            "work_on_cpu_ms": 1e-6 * float(self._work_cpu_ns[self._n - 1]) if self._n else None,
            "cpu_wait_ms": 1e-6 * float(now.wait_ns - before.wait_ns),
            "involuntary_switches": now.thread_nivcsw - before.thread_nivcsw,
            "steal_ms": 1e3 * CLOCK_TICK_S * (now.steal_cpu - before.steal_cpu),
            "steal_window_ms": 1e3 * (now.t - before.t),
            "read_us": read_us,  # what this reading cost the loop (after the step's end was timed)
        })
        self._last_stat = now

    def stop(self) -> None:
        """The last reading (the loop's thread, after its last step)."""
        self._end = self._read()
        self.close()

    def close(self) -> None:
        for name in ("_stat", "_sched"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

    # -- what they say --------------------------------------------------------------------
    def work_on_cpu_ns(self) -> np.ndarray:
        """Per step: the loop thread's CPU time from its window's opening to its work's end [ns]."""
        return self._work_cpu_ns[:self._n].copy()

    def as_dict(self, longest: int = 5) -> dict | None:
        """The run's figures (JSON: ``realtime.host_counters``): steal of the loop's CPU
        and of the machine [ms], the loop thread's wait for a CPU and its time on it [ms]
        and its share of the wall time, involuntary context switches of the thread and of
        the process, and the ``longest`` late steps with their counters."""
        first, end = self._first, self._end
        if first is None or end is None:
            return None
        wall = end.t - first.t
        late = sorted(self._late, key=lambda s: -s["latency_ms"])[:longest]
        return {
            "cpu": self.cpu, "wall_s": wall, "clock_tick_ms": 1e3 * CLOCK_TICK_S,
            "steal_cpu_ms": 1e3 * CLOCK_TICK_S * (end.steal_cpu - first.steal_cpu),
            "steal_all_ms": 1e3 * CLOCK_TICK_S * (end.steal_all - first.steal_all),
            "thread_cpu_wait_ms": 1e-6 * (end.wait_ns - first.wait_ns),
            "thread_on_cpu_ms": 1e-6 * (end.on_cpu_ns - first.on_cpu_ns),
            "thread_cpu_share": (1e-9 * (end.on_cpu_ns - first.on_cpu_ns) / wall) if wall > 0 else None,
            "thread_involuntary_switches": end.thread_nivcsw - first.thread_nivcsw,
            "process_involuntary_switches": end.process_nivcsw - first.process_nivcsw,
            "late_steps_sampled": len(self._late),
            "longest_late_steps": late,
        }
