"""The real-time pacer against a fake clock (the counts are exact), and a short paced
run on the real clock (bounded: 40 steps of 5 ms)."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.realtime import RealTimePacer


class FakeClock:
    """Time advances only when the loop 'works' or sleeps."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0
        self.now += seconds


def _paced(work_s, ns_s=None, dt=0.02, startup=0):
    clock = FakeClock()
    pacer = RealTimePacer(dt, startup_steps=startup, clock=clock, sleep=clock.sleep, spin_s=0.0)
    pacer.start()
    openings = []
    for k, work in enumerate(work_s):
        pacer.begin_step(k)
        openings.append(clock.now - 100.0)
        clock.now += work
        pacer.end_step(k, work if ns_s is None else ns_s[k])
    pacer.stop()
    return pacer.report(), np.array(openings)


def test_on_time_steps_open_every_dt_and_miss_nothing():
    report, openings = _paced([0.005] * 10)
    np.testing.assert_allclose(openings, 0.02 * np.arange(10), atol=1e-9)
    assert report.missed_deadlines == 0 and report.longest_missed_run == 0
    np.testing.assert_allclose(report.latency_s, 0.005)
    assert report.as_dict()["latency_ms"]["max"] == pytest.approx(5.0)


def test_a_late_step_skips_whole_ticks_and_the_loop_does_not_catch_up():
    # step 2 takes 2.5 Δt: the ticks at 3Δt and 4Δt pass while it runs (2 missed); step 3
    # opens at the next tick, 5Δt, and the schedule continues from there
    report, openings = _paced([0.005, 0.005, 0.05, 0.005, 0.005])
    np.testing.assert_allclose(openings, [0.0, 0.02, 0.04, 0.10, 0.12], atol=1e-9)
    assert report.missed_deadlines == 2
    assert report.longest_missed_run == 1


def test_counts_after_start_up_longest_run_and_late_targets():
    work = [0.03, 0.03, 0.005, 0.005, 0.025, 0.025, 0.025, 0.005]
    ns = [0.001, 0.001, 0.0125, 0.011, 0.02, 0.02, 0.02, 0.001]
    report, _ = _paced(work, ns, startup=2)
    assert report.missed_deadlines == 5
    assert report.missed_after_startup == 3
    assert report.longest_missed_run == 3
    assert report.late_targets == 4  # ns > 0.6·20 ms = 12 ms: 12.5, 20, 20, 20 (not 11)


def test_bad_settings_name_the_field():
    with pytest.raises(ParameterError, match="dt"):
        RealTimePacer(0.0)
    with pytest.raises(ParameterError, match="startup_steps"):
        RealTimePacer(0.02, startup_steps=-1)
    with pytest.raises(ParameterError, match="late_fraction"):
        RealTimePacer(0.02, late_fraction=1.5)


def test_real_clock_pacing_takes_the_record_length():
    import time

    pacer = RealTimePacer(0.005)
    before = time.perf_counter()
    pacer.start()  # (collects garbage first: the pacer's clock starts after that)
    after = time.perf_counter()
    for k in range(40):
        pacer.begin_step(k)
        pacer.end_step(k, 0.0)
    pacer.stop()
    end = time.perf_counter()
    # 40 windows of 5 ms: the last opens 195 ms after the pacer's origin, which lies
    # between `before` and `after`; a loaded CI machine may run late (then steps are
    # skipped and counted, never run early)
    assert end - before >= 0.195
    report = pacer.report()
    assert end - after <= 0.2 + 0.005 * report.missed_deadlines + 0.1


def test_paced_engine_tells_the_site_when_each_target_arrived():
    """The NS's time of step k is when step k+1's target arrived; a site that takes
    ``arrival_s`` gets it (nothing at step 0), after ``prepare_realtime`` ran."""
    import time

    from rths_ident.hybrid.loop.engine import run_stepwise
    from rths_ident.protocols import SiteReading

    calls = []

    class Site:
        n_interface = 1

        def prepare_realtime(self):
            calls.append("prepare")

        def step(self, target, arrival_s=None):
            calls.append(arrival_s)
            return SiteReading(np.zeros(1), np.zeros(1), {"x": np.zeros(1)})

        def close(self):
            pass

    class SlowNS:
        dt, n_interface = 0.02, 1

        def initial_target(self):
            return np.zeros(1)

        def step(self, feedback, ground_accel):
            time.sleep(0.005)
            return np.zeros(1), {"u": np.zeros(1)}

        def apply_parameters(self, theta):
            pass

        def close(self):
            pass

    pacer = RealTimePacer(0.02)
    run_stepwise(Site(), SlowNS(), np.zeros(8), pacer=pacer)
    assert calls[0] == "prepare" and calls[1] is None
    np.testing.assert_allclose(calls[2:], pacer.report().ns_s[:-1], rtol=0, atol=0)
    assert min(calls[2:]) >= 0.005


def test_the_garbage_collector_is_paused_only_while_paced():
    """A full collection among a test's logs took ~110 ms here (5 skipped ticks): paced
    runs pause it, and it resumes afterwards, also when the run fails."""
    import gc

    from rths_ident.hybrid.loop.engine import LoopAborted, run_stepwise
    from rths_ident.protocols import SiteReading

    seen = []

    class Site:
        n_interface = 1

        def step(self, target):
            seen.append(gc.isenabled())
            return SiteReading(np.zeros(1), np.zeros(1), {"x": np.zeros(1)})

        def close(self):
            pass

    class NS:
        dt, n_interface = 0.001, 1

        def initial_target(self):
            return np.zeros(1)

        def step(self, feedback, ground_accel):
            if ground_accel > 0:
                raise RuntimeError("boom")
            return np.zeros(1), {"u": np.zeros(1)}

        def apply_parameters(self, theta):
            pass

        def close(self):
            pass

    assert gc.isenabled()
    run_stepwise(Site(), NS(), np.zeros(3), pacer=RealTimePacer(0.001))
    assert seen == [False] * 3 and gc.isenabled()
    with pytest.raises(LoopAborted):
        run_stepwise(Site(), NS(), np.array([0.0, 1.0]), pacer=RealTimePacer(0.001), safe_stop=None)
    assert gc.isenabled()


class OvershootingClock(FakeClock):
    """Every sleep returns ``overshoot`` s later than asked (a host's timer slack);
    every clock reading while polling costs ``poll`` s."""

    def __init__(self, overshoot, poll=0.0):
        super().__init__()
        self.overshoot, self.poll, self.asked = overshoot, poll, []

    def __call__(self):
        self.now += self.poll
        return self.now

    def sleep(self, seconds):
        self.asked.append(seconds)
        self.now += seconds + self.overshoot


def test_the_busy_wait_tail_wakes_on_time_where_a_sleep_would_be_late():
    dt, work = 1.0 / 1024, 0.0003
    for spin, expected_late in ((0.0, 0.0002), (0.0005, 0.0)):
        clock = OvershootingClock(overshoot=0.0002, poll=1e-6)
        pacer = RealTimePacer(dt, clock=clock, sleep=clock.sleep, spin_s=spin)
        pacer.start(10)
        for k in range(10):
            pacer.begin_step(k)
            clock.now += work
            pacer.end_step(k, 0.0001, 0.0001)
        report = pacer.report()
        # each window after the first opens after a sleep of (remaining − spin) that ends
        # 200 µs late, then (with a tail) clock polls of 1 µs until it opens
        np.testing.assert_allclose(report.wake_s[1:], expected_late, atol=2e-6)
        np.testing.assert_allclose(report.latency_s[1:], expected_late + work, atol=3e-6)
        assert len(clock.asked) == 9  # one sleep per wait, the rest polled
        assert report.missed_deadlines == 0


def test_the_step_is_split_into_site_substructure_and_the_loops_own_and_binned_per_fraction_of_dt():
    clock = FakeClock()
    dt = 0.001
    pacer = RealTimePacer(dt, clock=clock, sleep=clock.sleep, spin_s=0.0)
    pacer.start(4)
    for k, (site, ns, own) in enumerate([(2e-4, 1e-4, 7.5e-5), (2e-4, 1e-4, 7.5e-5), (1.5e-3, 1e-4, 7.5e-5),
                                          (1e-4, 1e-4, 2.6e-4)]):
        pacer.begin_step(k)
        clock.now += site + ns + own
        pacer.end_step(k, ns, site)
    report = pacer.report()
    np.testing.assert_allclose(report.loop_s, [7.5e-5, 7.5e-5, 7.5e-5, 2.6e-4], atol=1e-12)
    assert report.missed_deadlines == 1  # 1.675 ms: the tick at 2 ms passed
    histogram = report.histogram()
    # bins of Δt/20 = 50 µs: 375 µs → bin 7 (twice), 460 µs → bin 9, 1.675 ms → late
    assert histogram["late"] == 1
    assert histogram["counts"][7] == 2 and histogram["counts"][9] == 1 and sum(histogram["counts"]) == 3
    shares = report.as_dict()["latency_share"]
    total = 2 * 3.75e-4 + 1.675e-3 + 4.6e-4
    assert shares["site"] == pytest.approx((4e-4 + 1.5e-3 + 1e-4) / total)
    assert shares["ns"] == pytest.approx(4e-4 / total)
