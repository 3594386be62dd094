"""The host's jitter calibration against a fake clock (the lateness is known exactly), the
busy-wait tail sized from it, and the real-time settings restored after the block."""

import contextlib
import glob
import os
import struct
import sys
import time
import threading

import numpy as np
import pytest

from rths_ident.hybrid.loop.realtime_host import (CPU_LATENCY_FILE, MIN_SPIN_S, JitterReport, RealTimeHost,
                                                  measure_jitter,
                                                  measure_running_gaps, spin_tail)


@contextlib.contextmanager
def _idle_thread(name: str | None = None):
    """A thread of this process that waits (named ``name`` in /proc when given): its id
    while the ``with`` lasts."""
    ready, done, tids = threading.Event(), threading.Event(), []

    def idle():
        tids.append(threading.get_native_id())
        if name is not None:
            with open(f"/proc/self/task/{tids[0]}/comm", "w") as comm:
                comm.write(name)
        ready.set()
        done.wait(30)

    thread = threading.Thread(target=idle, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield tids[0]
    finally:
        done.set()
        thread.join()


class LateSleeper:
    """A clock whose sleeps end ``overshoot[i]`` s late (the i-th sleep), and whose every
    reading costs ``poll`` s."""

    def __init__(self, overshoot, poll=1e-7):
        self.now, self.poll, self.overshoot, self.asked = 50.0, poll, list(overshoot), []

    def __call__(self):
        self.now += self.poll
        return self.now

    def sleep(self, seconds):
        self.asked.append(seconds)
        self.now += seconds + self.overshoot[len(self.asked) - 1]


def test_the_calibration_measures_each_sleeps_overshoot_and_each_windows_lateness():
    dt = 1.0 / 1024
    overshoot = np.tile([20e-6, 20e-6, 20e-6, 600e-6], 256)  # every 4th sleep 0.6 ms late
    clock = LateSleeper(overshoot)
    jitter = measure_jitter(dt, seconds=1.0, clock=clock, sleep=clock.sleep)
    assert jitter.windows == 1024
    np.testing.assert_allclose(jitter.sleep_overshoot_s, overshoot[:jitter.sleep_overshoot_s.size], atol=3e-7)
    # without a busy-wait tail, a window opens as late as its sleep ends
    np.testing.assert_allclose(jitter.wake_late_s, overshoot[:1024], atol=3e-7)
    figures = jitter.as_dict()
    assert figures["windows_late_by_half_a_step"] == 256  # 0.6 ms > 0.49 ms
    assert figures["wake_late_us"]["max"] == pytest.approx(600.0, abs=0.5)
    assert "may not hold the rate" in jitter.describe()


def test_a_busy_wait_tail_longer_than_the_overshoot_opens_every_window_on_time():
    dt = 1.0 / 1024
    clock = LateSleeper([100e-6] * 2048)
    jitter = measure_jitter(dt, seconds=1.0, spin_s=200e-6, clock=clock, sleep=clock.sleep)
    assert np.max(jitter.wake_late_s) <= 2e-7  # a clock reading or two
    assert jitter.as_dict()["windows_late_by_half_a_step"] == 0
    assert "held every window" in jitter.describe()


def test_the_tail_is_the_overshoots_99_9th_percentile_within_its_bounds():
    dt = 1.0 / 1024
    for overshoot, expected in ((300e-6, 300e-6), (1e-6, MIN_SPIN_S), (5e-3, 0.5 * dt)):
        clock = LateSleeper([overshoot] * 2048, poll=0.0)
        jitter = measure_jitter(dt, seconds=0.5, clock=clock, sleep=clock.sleep)
        assert spin_tail(jitter) == pytest.approx(expected, rel=1e-6)


def test_the_host_settings_are_restored_after_the_block_also_after_a_fault():
    before = (sys.getswitchinterval(), os.sched_getaffinity(0), os.sched_getscheduler(0),
              os.getpriority(os.PRIO_PROCESS, 0))
    with pytest.raises(RuntimeError, match="inside"):
        with RealTimeHost() as settings:
            assert sys.getswitchinterval() == pytest.approx(settings.switch_interval_s)
            if settings.cpu is not None:
                assert os.sched_getaffinity(0) == {settings.cpu}
            # what was not granted is said, never silently dropped
            assert settings.scheduling.startswith(("SCHED_FIFO", "nice")) or any(
                "refused" in note for note in settings.notes)
            raise RuntimeError("a fault inside the block")
    after = (sys.getswitchinterval(), os.sched_getaffinity(0), os.sched_getscheduler(0),
             os.getpriority(os.PRIO_PROCESS, 0))
    assert after == before


def test_a_disabled_host_changes_nothing_and_says_so():
    interval = sys.getswitchinterval()
    with RealTimeHost(enabled=False) as settings:
        assert sys.getswitchinterval() == interval
    assert settings.scheduling == "SCHED_OTHER" and settings.cpu is None
    assert settings.notes == ["real-time settings not asked for"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux /proc")
def test_xla_worker_threads_run_with_the_loop_and_are_restored():
    """A thread named as XLA's intra-op workers is raised to the loop's policy and pinned
    to its CPU inside the block (the loop waits for such threads), and restored after."""
    from rths_ident.hybrid.loop.realtime_host import compute_threads

    with _idle_thread("tf_XLAEigen_t") as tid:
        assert tid in compute_threads()
        before = (os.sched_getscheduler(tid), os.sched_getaffinity(tid))
        with RealTimeHost() as settings:
            if settings.cpu is None and not settings.scheduling.startswith("SCHED_FIFO"):
                pytest.skip("this host grants neither pinning nor SCHED_FIFO: nothing to raise the workers to")
            assert settings.compute_threads >= 1
            if settings.cpu is not None:
                assert os.sched_getaffinity(tid) == {settings.cpu}
            if settings.scheduling.startswith("SCHED_FIFO"):
                assert os.sched_getscheduler(tid) == os.SCHED_FIFO
            assert "XLA worker threads with the loop" in settings.describe()
        assert (os.sched_getscheduler(tid), os.sched_getaffinity(tid)) == before


def _locked_kib() -> int:
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmLck:")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux /proc")
def test_locked_memory_is_unlocked_after_the_block_also_after_a_fault():
    """mlockall inside the block (the kernel's VmLck counts the locked pages), munlockall
    after it: the count read back from the OS is what it was before."""
    before = _locked_kib()
    with pytest.raises(RuntimeError, match="inside"):
        with RealTimeHost(lock_memory=True) as settings:
            if settings.memory_locked:
                assert _locked_kib() > before + 1024  # at least the interpreter's own MiB
                assert "memory locked" in settings.describe()
            else:
                assert any("memory lock refused" in note for note in settings.notes)
            raise RuntimeError("a fault inside the block")
    assert _locked_kib() == before


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs and affinity")
def test_the_processs_other_threads_leave_the_loops_cpu_and_come_back():
    """A thread running before the block is moved off the loop's CPU, one started inside
    that lowers itself lands there too, and each thread's affinity read back from the OS
    after the block is what it was."""
    from rths_ident.hybrid.loop.realtime_host import lower_this_thread

    lowered = {}

    def started_inside():
        lower_this_thread()
        lowered["cpus"] = os.sched_getaffinity(0)

    with _idle_thread() as tid:
        before = os.sched_getaffinity(tid)
        with RealTimeHost(move_other_threads=True) as settings:
            if settings.cpu is None:
                pytest.skip("the loop could not be pinned: nothing to move the others off")
            others = set(settings.other_cpus)
            assert settings.cpu not in others and others
            assert os.sched_getaffinity(0) == {settings.cpu}
            assert os.sched_getaffinity(tid) == others
            assert settings.other_threads_moved >= 1
            inside = threading.Thread(target=started_inside)
            inside.start()
            inside.join(10)
            assert lowered["cpus"] == others
        assert os.sched_getaffinity(tid) == before


def test_a_spinning_thread_finds_exactly_the_gaps_its_clock_jumped():
    # a clock that moves 0.1 µs per reading, with three jumps of known length (s)
    jumps = {100: 300e-6, 2500: 1.2e-3, 4000: 25e-6, 4100: 19e-6}
    readings = [0.0]

    def clock():
        step = len(readings)
        readings.append(readings[-1] + 1e-7 + jumps.get(step, 0.0))
        return readings[-1]

    spun, gaps = measure_running_gaps(seconds=2e-3, clock=clock)
    assert gaps == pytest.approx([300e-6 + 1e-7, 1.2e-3 + 1e-7, 25e-6 + 1e-7])  # 19 µs: under the 20 µs threshold
    assert spun >= 2e-3


def test_the_jitter_report_counts_the_spinning_threads_gaps_and_says_when_they_exceed_half_a_step():
    dt = 1.0 / 1024
    gaps = np.array([30e-6, 150e-6, 0.6e-3])
    report = JitterReport(dt, 10, np.zeros(10), np.zeros(10), 0.5, gaps)
    running = report.as_dict()["running_thread"]
    assert (running["gaps"], running["gaps_over_100us"], running["gaps_over_half_a_step"]) == (3, 2, 1)
    assert running["max_gap_us"] == pytest.approx(600.0) and running["lost_us"] == pytest.approx(780.0)
    assert "lost the CPU 1 times for more than half a step: this host may not hold the rate" in report.describe()
    calm = JitterReport(dt, 10, np.zeros(10), np.zeros(10), 0.5, gaps[:2])
    assert calm.describe().endswith("the host held every window")


def test_a_real_spin_loses_no_more_than_it_spun():
    spun, gaps = measure_running_gaps(seconds=0.05)
    assert 0.05 <= spun < 5.0 and np.all(gaps >= 20e-6) and gaps.sum() <= spun


def _cpu_latency_limit_us() -> int:
    """The system-wide CPU latency limit as the kernel aggregates every open request
    (reading the PM QoS file returns it)."""
    with open(CPU_LATENCY_FILE, "rb") as qos:
        return struct.unpack("=i", qos.read(4))[0]


def _halts() -> int:
    """How many times the CPUs entered an idle state other than polling (the kernel's
    cpuidle counters)."""
    total = 0
    for state in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*"):
        with open(f"{state}/name") as name:
            if name.read().strip() == "POLL":
                continue
        with open(f"{state}/usage") as usage:
            total += int(usage.read())
    return total


@pytest.mark.skipif(not os.access(CPU_LATENCY_FILE, os.R_OK | os.W_OK), reason="needs access to the PM QoS file")
def _latency_requests_held() -> int:
    """This process's open descriptors of the PM QoS file (each holds a request)."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            held += os.readlink(f"/proc/self/fd/{fd}") == CPU_LATENCY_FILE
    return held


@pytest.mark.skipif(not os.access(CPU_LATENCY_FILE, os.R_OK | os.W_OK), reason="needs access to the PM QoS file")
def test_idle_cpus_poll_inside_the_block_and_the_request_ends_with_it_also_after_a_fault():
    """Inside the block the kernel's aggregate CPU latency limit read back is 0 µs and no
    CPU enters a halting idle state (its cpuidle counters stand still); after the block —
    left by a fault — the process holds no request any more (another process, e.g. a
    second test worker's paced run, may hold its own: the aggregate is not compared)."""
    held = _latency_requests_held()
    with pytest.raises(RuntimeError, match="inside"):
        with RealTimeHost(idle_poll=True) as settings:
            assert settings.idle_poll and "idle CPUs polling" in settings.describe()
            assert _latency_requests_held() == held + 1
            assert _cpu_latency_limit_us() == 0
            halts = _halts()
            time.sleep(0.3)  # idle: the CPUs poll
            assert _halts() == halts
            raise RuntimeError("a fault inside the block")
    assert _latency_requests_held() == held


def test_idle_polling_refused_is_said_with_the_file_and_nothing_held(tmp_path):
    missing = str(tmp_path / "no-such-qos-file")
    with RealTimeHost(idle_poll=True, cpu_latency_file=missing) as settings:
        assert not settings.idle_poll and ", idle CPUs polling" not in settings.describe()
        assert any(note.startswith(f"idle CPUs polling refused ({missing}: No such file or directory")
                   for note in settings.notes)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs this process may use")
def test_the_loop_goes_to_the_last_cpu_it_is_started_on():
    """docs/hybrid/realtime.md: a lab names the loop's CPU by the CPUs it starts the run on
    (``taskset -c 0,2`` → CPU 2); checked in a thread of its own, whose affinity is set
    as ``taskset`` would set the process's."""
    lowest_two = sorted(os.sched_getaffinity(0))[:2]
    seen = {}

    def started_on(cpus):
        os.sched_setaffinity(0, cpus)
        with RealTimeHost(idle_poll=False) as settings:
            seen[tuple(sorted(cpus))] = (settings.cpu, os.sched_getaffinity(0))
        seen[tuple(sorted(cpus)), "after"] = os.sched_getaffinity(0)

    for cpus in ({lowest_two[0], lowest_two[1]}, {lowest_two[0]}):
        thread = threading.Thread(target=started_on, args=(cpus,))
        thread.start()
        thread.join(timeout=30)
    pair, alone = tuple(lowest_two), (lowest_two[0],)
    assert seen[pair] == (lowest_two[1], {lowest_two[1]})
    assert seen[pair, "after"] == set(lowest_two)
    assert seen[alone] == (None, {lowest_two[0]})  # one CPU: nothing to choose, not pinned
