"""The interlock monitor on hand-made logs: each interlock trips exactly where a number
worked out by hand crosses its limit (value, limit, step and time in the trip), and stays
quiet just below it."""

import math

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor, Interlocks, physical_bounds
from rths_ident.models import LuGreParams
from rths_ident.protocols import Estimate

DT_SLOW, RATIO = 0.02, 10
DT = DT_SLOW / RATIO


def _monitor(**limits):
    return InterlockMonitor(Interlocks(**limits), DT_SLOW, samples_per_step=RATIO)


def _log(command=None, measured=None, target=None, force=None):
    log = {"command": command, "measured": measured, "target": target, "force": force}
    return {k: np.asarray(v, dtype=float) for k, v in log.items() if v is not None}


def test_command_stroke_trips_at_the_sample_that_crosses():
    monitor = _monitor(command_stroke=0.2)
    assert monitor.check_site_log(_log(command=np.full(RATIO, 0.2)), 0) is None  # at the limit: fine
    command = np.linspace(0.2, 0.29, RATIO)
    trip = monitor.check_site_log(_log(command=command), 1)
    assert trip.name == "command_stroke" and trip.value == pytest.approx(command[1]) and trip.limit == 0.2
    assert trip.step == 1 and trip.time == pytest.approx(2 * DT_SLOW)
    assert "command_stroke" in trip.message() and "slow step 1" in trip.message() and "t = 0.040 s" in trip.message()


def test_command_velocity_is_the_difference_over_one_fast_step_across_steps():
    monitor = _monitor(command_velocity=1.0)
    first = np.arange(1, RATIO + 1) * 0.9 * DT  # 0.9 m/s
    assert monitor.check_site_log(_log(command=first), 0) is None
    second = first[-1] + np.arange(1, RATIO + 1) * 0.9 * DT
    second[0] = first[-1] + 1.5 * DT  # the step boundary: 1.5 m/s
    trip = monitor.check_site_log(_log(command=second), 1)
    assert trip.name == "command_velocity" and trip.value == pytest.approx(1.5) and trip.limit == 1.0


def test_measured_velocity_over_its_span():
    monitor = InterlockMonitor(Interlocks(measured_velocity=2.0, velocity_span=4 * DT), DT_SLOW,
                               samples_per_step=RATIO)
    slope = 1.9  # m/s
    x = slope * DT * np.arange(1, 3 * RATIO + 1)
    noise = 1e-6 * np.array([1, -1] * (3 * RATIO // 2))  # one-sample differences: ±1.9 ± 0.8 m/s
    for k in range(3):
        assert monitor.check_site_log(_log(measured=(x + noise)[k * RATIO:(k + 1) * RATIO]), k) is None
    faster = x[-1] + 2.5 * DT * np.arange(1, RATIO + 1)
    trip = monitor.check_site_log(_log(measured=faster), 3)
    # the first 4-sample difference that reaches into the faster ramp: (3·1.9 + 2.5)/4 m/s
    assert trip.name == "measured_velocity" and trip.value == pytest.approx((3 * 1.9 + 2.5) / 4, abs=1e-3)
    assert trip.limit == 2.0


def test_force_and_measured_stroke_and_non_finite_values():
    monitor = _monitor(force=100.0)
    trip = monitor.check_site_log(_log(force=[10.0, -120.0] + [0.0] * 8), 4)
    assert trip.name == "force" and trip.value == -120.0 and trip.time == pytest.approx(5 * DT_SLOW)
    monitor = _monitor()  # every limit off: only non-finite values trip
    trip = monitor.check_site_log(_log(measured=[0.0, math.nan] + [0.0] * 8), 0)
    assert trip.name == "measured_stroke" and math.isnan(trip.value) and "not finite" in trip.message()


def test_tracking_error_is_the_mean_over_the_window():
    window_samples = 25
    monitor = InterlockMonitor(Interlocks(tracking_error=1e-3, tracking_window=window_samples * DT), DT_SLOW,
                               samples_per_step=RATIO)
    target = np.zeros(RATIO)
    # 0.9 mm error for two steps (20 samples), then 1.6 mm: the window is full after 5 new
    # samples, whose mean (20·0.9 + 5·1.6)/25 = 1.04 mm is the first above 1 mm
    assert monitor.check_site_log(_log(target=target, measured=np.full(RATIO, 0.9e-3)), 0) is None
    assert monitor.check_site_log(_log(target=target, measured=np.full(RATIO, 0.9e-3)), 1) is None
    trip = monitor.check_site_log(_log(target=target, measured=np.full(RATIO, 1.6e-3)), 2)
    assert trip.name == "tracking_error"
    assert trip.value == pytest.approx((20 * 0.9e-3 + 5 * 1.6e-3) / 25, rel=1e-12)


def test_ns_identifier_and_deadline():
    monitor = _monitor(ns_displacement=0.5, deadline=0.01)
    assert monitor.check_ns(np.array([0.3]), {"displacement": np.array([0.1, 0.4])}, 0) is None
    trip = monitor.check_ns(np.array([0.3]), {"displacement": np.array([0.1, -0.7])}, 1)
    assert trip.name == "ns_divergence" and trip.value == -0.7 and "response" in trip.detail
    assert monitor.check_ns(np.array([math.inf]), None, 2).name == "ns_divergence"
    assert monitor.check_deadline(0.009, 3) is None
    trip = monitor.check_deadline(0.012, 3)
    assert trip.name == "deadline" and trip.value == 0.012

    bounds = (np.array([1.0, 0.0]), np.array([10.0, 5.0]))
    monitor = InterlockMonitor(Interlocks(), DT_SLOW, identifier_bounds=bounds)
    ok = Estimate(np.array([2.0, 1.0]), np.zeros(2), False, True)
    assert monitor.check_estimate(ok, 0, ("k", "c")) is None
    trip = monitor.check_estimate(ok._replace(theta=np.array([2.0, 6.0])), 1, ("k", "c"))
    assert trip.name == "identifier_divergence" and trip.value == 6.0 and trip.limit == 5.0 and "c above" in trip.detail
    trip = monitor.check_estimate(ok._replace(theta=np.array([math.nan, 1.0])), 2, ("k", "c"))
    assert "k not finite" in trip.detail
    trip = monitor.check_estimate(ok._replace(covariance_ok=False), 3, ("k", "c"))
    assert "covariance not positive definite" in trip.detail
    off = InterlockMonitor(Interlocks(identifier=False), DT_SLOW, identifier_bounds=bounds)
    assert off.check_estimate(ok._replace(covariance_ok=False), 3) is None


def test_physical_bounds_from_the_models_ranges_and_the_guess():
    guess = np.array([1e6, 2e4])
    lower, upper = physical_bounds(LuGreParams, ("sigma0", "Fc"), guess, 10.0)
    np.testing.assert_allclose(lower, guess / 10)
    np.testing.assert_allclose(upper, guess * 10)


def test_bad_limits_are_refused():
    with pytest.raises(ParameterError, match="command_stroke"):
        Interlocks(command_stroke=-1.0)
    with pytest.raises(ParameterError, match="tracking_window"):
        Interlocks(tracking_window=0.0)
    assert "command stroke 0.1 m" in Interlocks(command_stroke=0.1).describe()


def test_peak_usage_is_each_quantitys_peak_over_its_limit():
    """A ramp of the command at 0.5 m/s to 5 mm, the measurement 1 mm behind it: usages
    worked out by hand; interlocks that are off are left out."""
    from rths_ident.hybrid.fast_side.interlocks import peak_usage

    t = np.arange(1, 101) * DT
    command = np.minimum(0.5 * t, 0.005)
    measured = command - 0.001
    usage = peak_usage(Interlocks(command_stroke=0.01, command_velocity=1.0, tracking_error=0.002,
                                  tracking_window=10 * DT),
                       {"command": command, "measured": measured, "target": command}, DT)
    assert set(usage) == {"command_stroke", "command_velocity", "tracking_error"}
    assert usage["command_stroke"]["usage"] == pytest.approx(0.005 / 0.01)
    assert usage["command_velocity"]["usage"] == pytest.approx(0.5 / 1.0)
    assert usage["tracking_error"]["peak"] == pytest.approx(0.001) and usage["tracking_error"]["usage"] == pytest.approx(0.5)


class _NumPyOnly(InterlockMonitor):
    """The monitor without its plain-Python screen: every step through the NumPy path."""

    def _clear_site_log(self, log):
        return False

    def _estimate_clear(self, theta, covariance_ok):
        return False


@pytest.mark.parametrize("limits", [
    dict(command_stroke=0.05, command_velocity=2.0, measured_stroke=0.05, measured_velocity=1.0, force=900.0,
         ns_displacement=0.08),
    dict(command_velocity=1.5, measured_velocity=0.8, velocity_span=0.006),  # span longer than a step
    dict(command_stroke=0.05, tracking_error=0.002, tracking_window=0.01),
])
def test_the_screened_monitor_trips_as_the_numpy_path(limits):
    """The monitor's plain-Python screen (used when nothing trips) changes nothing: over
    random steps that sometimes cross a limit or hold a NaN/inf, each step's trip (or
    none) and the monitor's state equal those of the NumPy path alone."""
    rng = np.random.default_rng(3)
    bounds = (np.array([0.5, 0.5]), np.array([5.0, 5.0]))
    def monitors():
        return (InterlockMonitor(Interlocks(**limits), DT_SLOW, bounds, samples_per_step=RATIO),
                _NumPyOnly(Interlocks(**limits), DT_SLOW, bounds, samples_per_step=RATIO))

    fast, slow = monitors()
    trips = 0
    for k in range(600):
        t = (k * RATIO + np.arange(RATIO)) * DT
        command = 0.045 * np.sin(2 * np.pi * 1.5 * t)
        if rng.random() < 0.1:  # a step near the command velocity limit (2 or 1.5 m/s), either side
            command[rng.integers(1, RATIO):] += rng.uniform(0.5, 1.5) * 1.5 * DT
        measured = command + rng.normal(0, 1e-3, RATIO)
        if rng.random() < 0.1:  # near the measured velocity limit
            measured[rng.integers(1, RATIO):] += rng.uniform(0.5, 2.0) * 0.8 * 0.006
        force = 2e4 * measured + rng.normal(0, 5, RATIO)
        if rng.random() < 0.03:
            [command, measured, force][rng.integers(3)][rng.integers(RATIO)] = rng.choice([np.nan, np.inf, 0.3])
        log = _log(command=command, measured=measured, target=command, force=force)
        theta = rng.uniform(0.3, 6.0, 2)
        if rng.random() < 0.02:
            theta[0] = np.nan
        estimate = Estimate(theta, np.zeros(2), np.asarray(True), np.asarray(rng.random() > 0.02))
        target = np.array([rng.normal(0, 0.05)]) if rng.random() > 0.01 else np.array([np.nan])
        ns_log = {"displacement": rng.normal(0, 0.04, 3)}
        for check in (lambda m: m.check_site_log(log, k), lambda m: m.check_estimate(estimate, k, ("a", "b")),
                      lambda m: m.check_ns(target, ns_log, k)):
            got, want = check(fast), check(slow)
            assert (got is None) == (want is None), k
            if got is not None:  # NaN values compare equal here
                assert str(got.as_dict()) == str(want.as_dict()), k
            trips += got is not None
        assert fast._last_command == slow._last_command
        np.testing.assert_array_equal(fast._measured_tail, slow._measured_tail)
        np.testing.assert_array_equal(fast._errors, slow._errors)
        if fast.trip is not None:  # a trip ends a test: the next steps are a new one
            fast, slow = monitors()
    assert trips > 20


def test_the_screen_sends_what_it_cannot_decide_to_the_numpy_path():
    """Finite values whose sum overflows (|x| near 1e308, limits off) and a non-finite
    estimate or target: the screen cannot say "nothing trips", the NumPy path decides —
    no trip for the huge finite values (as the NumPy path alone), the same trips for the
    rest, and the same state (last command, measured tail) as the NumPy path's."""
    huge = np.array([1.5e308, 1.6e308, -1.7e308, 1.7e308, 1.0e308, 0.0, 1.7e308, 1.7e308, 1.7e308, 1.7e308])
    fast, slow = InterlockMonitor(Interlocks(), DT_SLOW, samples_per_step=RATIO), _NumPyOnly(
        Interlocks(), DT_SLOW, samples_per_step=RATIO)
    for k in range(3):
        log = _log(command=huge * ((k + 1) / 3), measured=huge[::-1], force=huge)
        assert fast.check_site_log(log, k) is None and slow.check_site_log(log, k) is None
        assert fast._last_command == slow._last_command == log["command"][-1]
        assert list(fast._measured_tail) == list(slow._measured_tail)
        assert fast.check_estimate(Estimate(huge[:3], np.zeros(3), True, True), k) is None
        assert fast.check_ns(huge[:1], {"displacement": huge[1:4]}, k) is None
    for monitor in (fast, slow):
        trip = monitor.check_estimate(Estimate(np.array([1.0, np.inf]), np.zeros(2), True, np.asarray(True)), 3)
        assert trip.name == "identifier_divergence" and "θ[1] not finite" in trip.message()
        trip = monitor.check_estimate(Estimate(np.array([1.0, 2.0]), np.zeros(2), True, False), 4)
        assert trip.name == "identifier_divergence" and "covariance" in trip.message()
        trip = monitor.check_ns(np.array([np.nan]), None, 5)
        assert trip.name == "ns_divergence" and "next target not finite" in trip.message()


def _step_by_step(monitor, samples, first_step=0):
    for k in range(first_step, samples["command"].shape[0]):
        trip = monitor.check_site_log({key: value[k] for key, value in samples.items()}, k)
        if trip is not None:
            return trip
    return None


@pytest.mark.parametrize("seed", range(12))
def test_a_whole_runs_first_suspect_sample_and_seek_give_the_step_by_step_trip(seed):
    """``first_suspect_sample`` on a whole run's arrays is never after the trip the
    step-by-step checks find, and the checks started at its step after ``seek`` find that
    same trip (value, step, detail): random walks that cross one limit or another."""
    rng = np.random.default_rng(seed)
    steps, per_step, dt = 40, 8, 0.01
    target = np.cumsum(rng.normal(0.0, 1e-4, steps * per_step))
    measured = target + np.cumsum(rng.normal(0.0, 2e-5, target.size))
    command = target + rng.normal(0.0, 1e-5, target.size)
    force = 1e3 * measured + rng.normal(0.0, 0.5, target.size)
    if seed % 4 == 3:
        measured[rng.integers(target.size)] = np.nan
    scale = lambda values: float(np.max(np.abs(values))) * rng.uniform(0.9, 1.2)  # noqa: E731
    speed = lambda values: float(np.max(np.abs(np.diff(values)))) / (dt / per_step) * rng.uniform(0.6, 1.1)  # noqa: E731
    interlocks = Interlocks(command_stroke=scale(command), command_velocity=speed(command),
                            measured_stroke=scale(measured[np.isfinite(measured)]),
                            measured_velocity=2 * speed(measured[np.isfinite(measured)]), velocity_span=3 * dt / per_step,
                            force=scale(force[np.isfinite(force)]), tracking_error=math.inf if seed % 3 == 1 else
                            rng.uniform(0.5, 1.5) * float(np.nanmean(np.abs(target - measured))), tracking_window=2 * dt)
    samples = {key: value.reshape(steps, per_step) for key, value in
               (("command", command), ("measured", measured), ("target", target), ("force", force))}
    expected = _step_by_step(InterlockMonitor(interlocks, dt, samples_per_step=per_step), samples)
    monitor = InterlockMonitor(interlocks, dt, samples_per_step=per_step)
    suspect = monitor.first_suspect_sample({key: value.reshape(-1) for key, value in samples.items()})
    if expected is None:
        assert suspect is None or _step_by_step(monitor, samples) is None
        return
    assert suspect is not None and suspect // per_step <= expected.step
    first = suspect // per_step
    monitor.seek({key: value[:first].reshape(-1) for key, value in samples.items()})
    found = _step_by_step(monitor, samples, first)
    assert repr(found) == repr(expected)
