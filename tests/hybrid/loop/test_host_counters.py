"""The host's counters around a paced run, each against a second route to the same count:
steal of one CPU's line against the machine's line and against psutil, the thread's time on
a CPU against CLOCK_THREAD_CPUTIME_ID, its involuntary switches against /proc's status, and
a late step's record against a fake clock's known latency."""

import os
import resource
import threading
import time

import numpy as np
import pytest

from rths_ident.hybrid.loop.host_counters import CLOCK_TICK_S, HostCounters, steal_ticks, thread_schedstat
from rths_ident.hybrid.loop.realtime import RealTimePacer

linux = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux /proc")

STAT = (b"cpu  10 0 20 300 0 0 1 17 0 0\n"
        b"cpu0 5 0 10 150 0 0 1 9 0 0\n"
        b"cpu1 5 0 10 150 0 0 0 8 0 0\n"
        b"intr 123 0 0\n")


def test_steal_is_the_eighth_value_of_a_cpu_line():
    assert steal_ticks(STAT, None) == 17
    assert steal_ticks(STAT, 0) == 9 and steal_ticks(STAT, 1) == 8
    with pytest.raises(ValueError):
        steal_ticks(STAT, 2)


@linux
def test_the_cpu_lines_steal_sums_to_the_machines_line():
    with open("/proc/stat", "rb") as f:
        stat = f.read()  # one reading: the kernel writes the machine's line as the sum of the CPUs'
    cpus = [int(line.split()[0][3:]) for line in stat.splitlines() if line[:3] == b"cpu" and line[3:4].isdigit()]
    # it sums nanoseconds and then rounds down to ticks: each CPU's line drops less than a tick
    shortfall = steal_ticks(stat, None) - sum(steal_ticks(stat, cpu) for cpu in cpus)
    assert 0 <= shortfall <= len(cpus) - 1


@linux
def test_steal_agrees_with_psutil():
    psutil = pytest.importorskip("psutil")
    with open("/proc/stat", "rb") as f:
        ours = steal_ticks(f.read(), 0) * CLOCK_TICK_S
    theirs = psutil.cpu_times(percpu=True)[0].steal
    assert abs(theirs - ours) <= 2 * CLOCK_TICK_S  # read a moment apart: a tick or two may pass


@linux
def test_the_threads_time_on_a_cpu_is_its_cpu_clock():
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat", "rb") as f:
        on_cpu_0, _ = thread_schedstat(f.read())
    clock_0 = time.thread_time_ns()
    end = time.perf_counter() + 0.2
    while time.perf_counter() < end:
        pass
    clock_1 = time.thread_time_ns()
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat", "rb") as f:
        on_cpu_1, _ = thread_schedstat(f.read())
    # schedstat's figure of a running thread is brought up to date at the scheduler's ticks,
    # the CPU clock's at the reading: they differ by up to a tick (4 ms at 250 Hz) per reading
    assert (on_cpu_1 - on_cpu_0) == pytest.approx(clock_1 - clock_0, abs=10e6)


def _status_switches():
    with open("/proc/thread-self/status") as f:
        return int(next(line for line in f if line.startswith("nonvoluntary_ctxt_switches")).split()[1])


@linux
def test_a_runs_figures_are_bracketed_by_proc_status_and_the_thread_is_part_of_the_process():
    before = _status_switches()
    process_before = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
    counters = HostCounters(cpu=0)
    counters.start(10)
    end = time.perf_counter() + 0.05
    own_cpu_ns = []
    for k in range(10):
        counters.began()
        cpu_0 = time.thread_time_ns()
        while time.perf_counter() < end - 0.005 * (9 - k):
            pass
        own_cpu_ns.append(time.thread_time_ns() - cpu_0)
        counters.step(k)
    counters.stop()
    after = _status_switches()
    figures = counters.as_dict()
    assert 0 <= figures["thread_involuntary_switches"] <= after - before
    assert figures["process_involuntary_switches"] >= figures["thread_involuntary_switches"]
    assert figures["process_involuntary_switches"] <= resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw - process_before
    assert figures["thread_on_cpu_ms"] == pytest.approx(1e3 * figures["wall_s"] * figures["thread_cpu_share"])
    # each step's CPU time brackets the test's own reading of the thread's CPU clock inside it
    work = counters.work_on_cpu_ns()
    assert np.all(work >= np.array(own_cpu_ns)) and np.all(work - np.array(own_cpu_ns) < 1e6)
    assert figures["steal_cpu_ms"] <= figures["steal_all_ms"] and figures["steal_all_ms"] >= 0


@linux
def test_the_pacer_records_each_late_step_with_its_latency():
    dt, now = 1.0 / 1024, [10.0]  # a fake clock: it moves by the sleeps and the steps' work only

    def sleep(seconds):
        now[0] += seconds

    counters = HostCounters(cpu=0)
    pacer = RealTimePacer(dt, clock=lambda: now[0], sleep=sleep, spin_s=0.0, counters=counters)
    work = np.array([0.3, 2.5, 0.3, 0.3, 4.2, 0.3]) * dt
    pacer.start(len(work))
    for k, w in enumerate(work):
        pacer.begin_step(k)
        now[0] += w
        pacer.end_step(k, 0.0, 0.0)
    pacer.stop()
    figures = pacer.report().as_dict()["host_counters"]
    assert figures["late_steps_sampled"] == 2
    assert [s["step"] for s in figures["longest_late_steps"]] == [4, 1]  # longest first
    assert [s["latency_ms"] for s in figures["longest_late_steps"]] == pytest.approx([4.2e3 * dt, 2.5e3 * dt])
    assert all(s["read_us"] > 0 for s in figures["longest_late_steps"])
    assert counters.work_on_cpu_ns().size == len(work)
    # the fake clock's steps: woke on time, so the whole latency is the step's work
    assert [s["woke_late_ms"] for s in figures["longest_late_steps"]] == pytest.approx([0.0, 0.0])
    assert [s["work_ms"] for s in figures["longest_late_steps"]] == pytest.approx([4.2e3 * dt, 2.5e3 * dt])
