"""runner/report.py: a paced run's lines show what the host took from the loop."""

import numpy as np

from rths_ident.hybrid.loop.realtime import RealTimeReport
from rths_ident.runner.report import realtime_lines


def test_a_paced_runs_lines_say_the_hosts_counters():
    latency = np.array([0.2e-3, 0.3e-3, 2.5e-3])
    counters = {"steal_cpu_ms": 30.0, "steal_all_ms": 50.0, "thread_cpu_wait_ms": 1.25, "thread_cpu_share": 0.42,
                "thread_involuntary_switches": 3, "process_involuntary_switches": 17}
    report = RealTimeReport(dt=1e-3, steps=3, startup_steps=0, missed_deadlines=2, missed_after_startup=2,
                            longest_missed_run=1, late_targets=0, latency_s=latency, ns_s=0.1 * latency, wall_s=5e-3,
                            counters=counters)
    rt = report.as_dict()
    assert rt["host_counters"] is counters
    text = "\n".join(realtime_lines(rt))
    assert ("the host over the run: steal 30 ms on the loop's CPU (50 ms on all), the loop thread waited 1.2 ms for a "
            "CPU and ran 42 % of the time, involuntary switches 3 (thread) / 17 (process)") in text
