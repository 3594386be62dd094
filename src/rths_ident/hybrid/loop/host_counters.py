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

Per step the pacer reads only the thread's ``schedstat`` (one ``pread`` of an open file,
~1 µs: :meth:`HostCounters.step`); ``/proc/stat`` (~10 µs) is read at the start, at the
end, and after each late step, after the step's end has been timed
(:meth:`HostCounters.late`): a late step's steal is the steal since the previous
reading, which brackets the stall.
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
        self._wait_ns = np.zeros(0, dtype=np.int64)
        self._on_cpu_ns = np.zeros(0, dtype=np.int64)
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
        self._wait_ns = np.zeros(n_steps, dtype=np.int64)
        self._on_cpu_ns = np.zeros(n_steps, dtype=np.int64)
        self._n = 0
        self._late = []
        self._first = self._last_stat = self._read()
        self._end = None

    def step(self, k: int) -> None:
        """After step ``k`` (the pacer's end of step): the thread's CPU time and wait so far."""
        if self._sched is None:
            return
        i = self._n
        if i >= self._wait_ns.size:
            grown = max(64, 2 * self._wait_ns.size)
            self._wait_ns = np.resize(self._wait_ns, grown)
            self._on_cpu_ns = np.resize(self._on_cpu_ns, grown)
        on_cpu, wait = thread_schedstat(os.pread(self._sched, 128, 0))
        self._on_cpu_ns[i], self._wait_ns[i] = on_cpu, wait
        self._n = i + 1

    def late(self, k: int, latency_s: float) -> None:
        """Step ``k`` ended ``latency_s`` after its window opened, past its deadline: the
        steal since the previous ``/proc/stat`` reading (which brackets the stall), and the
        thread's wait for a CPU during the step and the sleep before it."""
        if self._stat is None or len(self._late) >= MAX_LATE_SAMPLES:
            return
        started = time.perf_counter()
        now = self._read()
        read_us = 1e6 * (time.perf_counter() - started)
        before = self._last_stat
        i = self._n - 1  # this step's schedstat reading (step() ran first)
        wait = (self._wait_ns[i] - self._wait_ns[i - 1]) if i >= 1 else self._wait_ns[i] - self._first.wait_ns
        on_cpu = (self._on_cpu_ns[i] - self._on_cpu_ns[i - 1]) if i >= 1 else 0
        self._late.append({
            "step": int(k), "latency_ms": 1e3 * latency_s,
            "cpu_wait_ms": 1e-6 * float(wait), "on_cpu_ms": 1e-6 * float(on_cpu),
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
    def wait_per_step_ns(self) -> np.ndarray:
        """Per step: the thread's wait for a CPU since the previous step's end [ns]."""
        n = self._n
        if n == 0 or self._first is None:
            return np.zeros(0, dtype=np.int64)
        return np.diff(self._wait_ns[:n], prepend=self._first.wait_ns)

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
