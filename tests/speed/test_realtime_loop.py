"""``rths-ident bench --only realtime``: the deadline accounting against a fake clock (exact
counts), what the terminal shows of it, and the paced runs wired through the real loop
(no speed is asserted: figures come from the bench itself)."""

import socket

import numpy as np
import pytest

from rths_ident.hybrid.loop.realtime import RealTimePacer
from rths_ident.speed import realtime_loop


class FakeClock:
    def __init__(self):
        self.now = 10.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def _fake_run(work_s, dt=1.0 / 1024, startup=3):
    clock = FakeClock()
    pacer = RealTimePacer(dt, startup_steps=startup, clock=clock, sleep=clock.sleep, spin_s=0.0)
    pacer.start(len(work_s))
    for k, work in enumerate(work_s):
        pacer.begin_step(k)
        clock.now += work
        pacer.end_step(k, 0.25 * work, 0.5 * work)
    pacer.stop()
    return pacer.report()


def test_missed_deadlines_count_skipped_ticks_after_start_up_and_the_longest_run():
    dt = 1.0 / 1024
    # steps 0–1 in the start-up: 2.5 Δt (2 ticks missed) and on time; then 1.2 Δt twice in
    # a row (1 tick each), on time, 3.1 Δt (3 ticks), on time
    work = np.array([2.5, 0.3, 0.3, 1.2, 1.2, 0.3, 3.1, 0.3]) * dt
    figures = realtime_loop.missed_deadlines(_fake_run(work, dt, startup=2))
    assert figures == {"steps": 8, "startup_steps": 2, "missed": 2 + 1 + 1 + 3, "missed_after_startup": 1 + 1 + 3,
                       "longest_missed_run": 2, "late_steps": 4}


def test_the_per_step_statistics_are_the_samples_order_statistics():
    samples = np.arange(1, 1001) * 1e-6  # 1 … 1000 µs
    figures = realtime_loop._us(samples)
    assert figures["min"] == pytest.approx(1.0) and figures["max"] == pytest.approx(1000.0)
    assert figures["median"] == pytest.approx(500.5)
    assert figures["p99"] == pytest.approx(np.percentile(np.arange(1, 1001), 99))


def test_the_terminal_shows_the_latency_and_every_runs_misses():
    report = _fake_run(np.array([0.2, 0.2, 0.2, 2.5, 0.2]) / 1024, startup=2)
    paced = {"steps_per_run": 5, "startup_steps": 2, "slow_step_us": 976.5625,
             "latency_us": realtime_loop._us(report.latency_s), "runs": [realtime_loop.missed_deadlines(report)] * 2,
             "runs_without_a_miss_after_startup": 0,
             "host": {"settings": {"scheduling": "SCHED_FIFO 50", "cpu": 1, "notes": []},
                      "jitter": {"wake_late_us": {"p99": 12.0, "max": 40.0}}, "spin_tail_us": 25.0}}
    text = "\n".join(realtime_loop.paced_lines(paced))
    assert "max 2441.4 µs" in text  # 2.5 Δt
    assert "missed deadlines per run (after the 2-step start-up): 2 (2), 2 (2)" in text
    assert "0 of 2 runs without a miss after start-up" in text
    assert "SCHED_FIFO 50, CPU 1" in text


@pytest.mark.slow
def test_paced_runs_go_through_the_pacer_of_a_real_run():
    with realtime_loop._built("rc-frame native", duration=0.1, padding=0.05) as (cfg, test, variant):
        paced = realtime_loop.paced_runs(cfg, test, variant, repeats=2)
    n = len(test.ground_accel)
    assert paced["steps_per_run"] == n  # the whole record, padding included
    assert paced["startup_steps"] == int(round(0.05 * 1024))
    assert len(paced["runs"]) == 2
    for run in paced["runs"]:
        assert run["steps"] == n and 0 <= run["missed_after_startup"] <= run["missed"]
        assert run["late_steps"] <= run["missed"]  # a late step misses at least one tick
    lat = paced["latency_us"]
    assert 0 < lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"]
    # each step's latency holds its site's and its substructure's shares
    assert paced["site_us"]["min"] > 0 and paced["ns_us"]["min"] > 0
    assert paced["own_us"]["min"] >= -1e-3  # µs: clock readings of one thread, in order
    assert paced["host"]["jitter"]["windows"] == 1024  # a second of empty windows before each run


def test_the_rate_tables_fast_rate_is_the_smallest_whole_multiple_of_at_least_4_khz():
    assert [realtime_loop.fast_rate_for(rate) for rate in (50, 256, 512, 1024, 4000, 6000)] == [
        4000.0, 4096.0, 4096.0, 4096.0, 4000.0, 6000.0]
    with pytest.raises(ValueError, match="slow rate"):
        realtime_loop.fast_rate_for(0.0)


def test_the_rate_table_shows_each_rate_and_each_runs_misses():
    run = realtime_loop.missed_deadlines(_fake_run(np.array([0.2, 0.2, 0.2, 2.5, 0.2]) / 1024, startup=2))
    figures = {"slow_step_us": 976.5625, "fast_rate_hz": 4096.0, "latency_us": {"median": 300.0, "p99": 500.0,
                                                                                  "max": 2441.4},
               "ns_us": {"p99": 61.5},
               "runs": [run, {**run, "missed_after_startup": 0}], "runs_without_a_miss_after_startup": 1}
    served = {**figures, "wire_us": {"p99": 123.4}}
    lines = realtime_loop.rate_table_lines({"rc-frame native": {"1024": figures, "50": {"skipped": "no"}},
                                            "rc-frame opensees-tcp": {"1024": served}})
    assert "1024/4096" in lines[2] and lines[2].rstrip().endswith("61.5  2, 0 (1 of 2 runs without a miss)")
    assert "skipped (no)" in lines[3]
    assert lines[4].rstrip().endswith("(1 of 2 runs without a miss; wire p99 123.4)")


def test_rc_frame_runs_the_predictor_corrector_below_a_ratio_of_8():
    assert [realtime_loop.rc_frame_transition({"slow_rate": s, "fast_rate": realtime_loop.fast_rate_for(s)})
            for s in (50, 256, 512, 1024)] == ["ddmrt", "ddmrt", "ddmrt", "predictor-corrector"]


@pytest.mark.slow
def test_the_served_substructure_is_paced_and_its_server_stopped():
    """The TCP case: a serve-ns child process started for the case, the paced runs
    through it, the wire's share per step, and the server gone after the ``with``."""
    pytest.importorskip("openseespy")
    with realtime_loop._built(realtime_loop.TCP_CASE, duration=0.1, padding=0.05) as (cfg, test, variant):
        host, port = cfg.ns_address.split(":")
        assert host == "127.0.0.1"
        paced = realtime_loop.paced_runs(cfg, test, variant, repeats=1)
        wire = realtime_loop.wire_round_trip(cfg, test, repeats=1)
        sleeping = realtime_loop.WIRE_PEERS[cfg.ns_address]["_sleeping"][0]
    assert paced["steps_per_run"] == len(test.ground_accel)
    assert paced["ns_us"]["min"] > 0
    for variant in ("", "_sleeping"):  # both ends polling, both sleeping: each split from both ends' marks
        figures = wire[f"wire{variant}_us"]
        assert figures["max"] >= figures["p99"] >= figures["median"]
        parts = wire[f"wire_parts{variant}_us"]
        assert list(parts) == [*realtime_loop.WIRE_PARTS, "round trip", "wire"]
        assert parts["round trip"]["min"] > parts["server step"]["min"] > 0
    for address in (cfg.ns_address, sleeping):  # nobody listens there any more
        host, port = address.split(":")
        with pytest.raises(OSError):
            socket.create_connection((host, int(port)), timeout=2.0).close()


def test_bench_refuses_a_rate_out_of_range_in_one_line(capsys):
    from rths_ident.cli import main

    assert main(["bench", "--only", "realtime", "--slow-rates", "1024", "-5"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--slow-rates = 1024 -5: expected rates in (0, 10000] Hz" in err[0]


def test_bench_refuses_an_unknown_case_in_one_line(capsys):
    from rths_ident.cli import main

    assert main(["bench", "--only", "realtime", "--cases", "rc-frame-tcp"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert "argument --cases: expected one of host-alone-empty-step, rc-frame-native, rc-frame-opensees, " \
           "rc-frame-opensees-tcp, lugre-frame-rls, got 'rc-frame-tcp'" in err[0]


def test_a_run_an_interlock_stopped_is_said_and_not_counted_clean():
    run = realtime_loop.missed_deadlines(_fake_run(np.array([0.2, 0.2, 0.2, 0.2, 0.2]) / 1024, startup=2))
    stopped = {**run, "stopped": "interlock command_velocity tripped"}
    figures = {"slow_step_us": 976.5625, "fast_rate_hz": 4096.0, "latency_us": {"median": 200.0, "p99": 200.0,
                                                                                  "max": 200.0},
               "ns_us": {"p99": 50.0}, "runs": [run, stopped], "runs_without_a_miss_after_startup": 1}
    line = realtime_loop.rate_table_lines({"lugre-frame rls": {"512": figures}})[2]
    assert line.rstrip().endswith("0, 0 (stopped) (1 of 2 runs without a miss)")


@pytest.mark.slow
def test_the_host_alone_counts_the_late_windows_of_its_own_clock_readings():
    """The empty step paced by the pacer of a real case: its missed ticks equal the windows
    that passed by the end of its last step, counted from the step's own clock readings
    (each step takes one window; every other window that passed is a missed tick)."""
    from rths_ident.hybrid.loop.realtime_host import RealTimeHost
    from rths_ident.runner.results import calibrated_pacer

    dt, n, startup = 1.0 / 1024, 410, 51
    ends = np.zeros(n)
    with RealTimeHost() as host:
        pacer = calibrated_pacer(realtime_loop.EmptyStepConfig(1024.0, startup / 1024.0), host)
        realtime_loop.empty_steps(n, pacer, ends)
    report = pacer.report()
    windows_by = lambda k: int(np.floor((ends[k] - report.opened_s) / dt)) + 1  # noqa: E731 - windows opened by step k's end
    assert report.steps == n and report.startup_steps == startup
    assert report.missed_deadlines == windows_by(n - 1) - n
    assert report.missed_after_startup == report.missed_deadlines - (windows_by(startup - 1) - startup)
    assert report.site_s is not None and np.all(report.site_s == 0) and np.all(report.ns_s == 0)
    counters = report.as_dict()["host_counters"]
    assert counters["late_steps_sampled"] == min(int(np.sum(report.latency_s >= dt)), 256)


@pytest.mark.slow
def test_the_host_alone_is_the_first_case_in_the_json_the_terminal_and_the_rate_table():
    r = realtime_loop.run(repeats=1, duration=0.1, padding=0.05, cases=(realtime_loop.HOST_ALONE,))
    paced = r["cases"][realtime_loop.HOST_ALONE]["paced"]
    assert paced["steps_per_run"] == round(0.15 * 1024) and paced["startup_steps"] == round(0.05 * 1024)
    run = paced["runs"][0]
    assert {"steal_cpu_ms", "steal_all_ms", "cpu_wait_ms", "involuntary_switches", "longest_stalls"} <= set(run)
    text = "\n".join(realtime_loop.report(r))
    assert f"{realtime_loop.HOST_ALONE}: the same pacing, nothing in the step" in text
    assert "steal of the loop's CPU / all CPUs" in text
    table = realtime_loop.rate_table([512], repeats=1, duration=0.1, padding=0.05, cases=(realtime_loop.HOST_ALONE,))
    figures = table[realtime_loop.HOST_ALONE]["512"]
    assert figures["fast_rate_hz"] == 4096.0 and figures["steps_per_run"] == round(0.15 * 512)
    assert realtime_loop.rate_table_lines(table)[2].lstrip().startswith(realtime_loop.HOST_ALONE[:22])


def test_wire_parts_are_the_spans_between_both_ends_marks():
    """Two steps of made-up marks [s]: each part is the span the docstring names, and
    the parts add up to the round trip."""
    from rths_ident.speed.realtime_loop import WIRE_PARTS, wire_parts

    client = [[0.0, 2.0, 20.0, 23.0], [100.0, 101.0, 140.0, 141.0]]  # called, sent, read, returning
    # read, decoded, stepped, encoded, sent
    server = [[5.0, 6.0, 16.0, 17.0, 19.0], [100.5, 102.0, 130.0, 135.0, 139.0]]
    parts = wire_parts(client, server)
    expected = {"client send": [2, 1], "to the server": [3, -0.5], "server decode": [1, 1.5], "server step": [10, 28],
                "server encode": [1, 5], "server send": [2, 4], "to the client": [1, 1], "client decode": [3, 1],
                "round trip": [23, 41], "wire": [13, 13]}
    assert set(parts) == set(expected)
    for name, values in expected.items():
        np.testing.assert_array_equal(parts[name], values)
    np.testing.assert_array_equal(sum(parts[name] for name in WIRE_PARTS), parts["round trip"])
    with pytest.raises(ValueError, match="2 client steps but 1 server steps"):
        wire_parts(client, server[:1])


@pytest.mark.slow
def test_the_site_call_floor_times_the_sites_call_and_its_idle_twin_and_says_so():
    """site_call_floor: the rc-frame site's call and its idle twin, each timed per call
    (no speed asserted: positive finite medians), and the terminal's line with them."""
    with realtime_loop._built("rc-frame native", duration=0.05, padding=0.0) as (cfg, test, variant):
        floor = realtime_loop.site_call_floor(test, repeats=1, calls=50)
    assert set(floor) == {"site_call_us", "idle_call_us"}
    assert all(0 < value < 1e5 for value in floor.values())
    case = {"ratio": 4, "site_us": {"median": 12.0, "p99": 15.0}, "fused_us_per_fast_step": 1.5,
            "arithmetic_us_per_slow_step": 6.0, "site_over_arithmetic": 2.0,
            "site_call_floor": {"site_call_us": 11.5, "idle_call_us": 8.25, "best_over_arithmetic": 2.375}}
    line = [text for text in realtime_loop.fast_chunk_lines(case) if "idle twin" in text]
    assert line == ["    called in a row: the site's call 11.5 µs, its idle twin (the same trees crossing, nothing "
                    "computed) 8.2 µs: through a compiled call the site's call is at best 2.38× its arithmetic here"]
