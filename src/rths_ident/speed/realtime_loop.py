"""The step-wise loop at a lab's coordination rate: paced, and part by part
(``rths-ident bench --only realtime``).

At 1024 Hz a slow step has 0.98 ms. For each case — rc-frame at 1024/4096 Hz with the
native substructure, with the OpenSeesPy frame in process, and with that frame served by
a ``rths-ident serve ns`` child process on 127.0.0.1 (started for the case and stopped
after it), lugre-frame at 1024/4096 Hz with its RLS identifier and model updating — this
measures, after compilation:

* **the host alone** (:data:`HOST_ALONE`, the first case): an empty slow step paced
  exactly as the cases below (:func:`host_alone_runs`) — the misses no loop can avoid
  on this machine;
* **the paced loop**, as ``rths-ident run --realtime`` runs it: the host's real-time
  settings (:class:`~rths_ident.hybrid.loop.realtime_host.RealTimeHost`), a second of its
  jitter measured first (:func:`~rths_ident.runner.results.calibrated_pacer`), then
  ``repeats`` runs of the record held to the wall clock by the
  :class:`~rths_ident.hybrid.loop.realtime.RealTimePacer`: per slow step the latency
  (window opening → next target ready) min / median / p99 / p99.9 / max, and the missed
  deadlines per run (in all, after the start-up padding, the longest run of them), and the
  host's counters per run (the hypervisor's steal, the loop thread's wait for a CPU,
  involuntary switches, the longest late steps': :mod:`~rths_ident.hybrid.loop.host_counters`)
  — what tells a user whether their machine holds the rate, and why not;

* **the whole loop**, unpaced, through :func:`~rths_ident.hybrid.loop.engine.run_stepwise`
  itself with a :class:`StepTimer` in the pacer's place (the engine's own timing of every
  step: the site's call, the substructure's step, and the rest — the loop's own cost —
  per slow step; the site is told its targets' arrival as in a paced run);
* **the loop's own parts**, each over the record's steps on the run's own data: the
  model-updating hook, copying the step's logs into their preallocated columns, the
  actuator-limit check, the interlocks (the site's log, the estimate, the substructure's
  target and response, the watchdog), the pacer's bookkeeping, the per-step call of the test record
  (its writer thread's time per step, off the loop's thread, is given beside), and a
  step event delivered to one subscriber (what a watcher costs the loop);
* over TCP, **the wire's own round trip**: each step through the server minus the same
  step of the same frame in this process (:func:`wire_round_trip`), and the round trip
  part by part from both ends' clock marks (:func:`wire_parts`), with both ends polling
  for their messages (as the paced runs) and both sleeping in the kernel (a second
  server child with ``--spin-ms 0``), instead of the loop's parts (those of the
  in-process case);
* **the arithmetic** of the fast chunk: the fused engine's cost per fast step on the
  same test (its whole record in one compiled call) × the rate ratio, against the virtual
  site's call per slow step; and the site's call against its idle twin, a call of the
  same trees that computes nothing (:func:`site_call_floor`): what any call through
  this path costs here before its arithmetic, hence the nearest a site's call can come
  to its arithmetic on this machine.

rc-frame runs its default ``auto`` transition: DDMRT down to a rate ratio of 8, the
predictor–corrector below (:func:`rc_frame_transition`).

Figures are per slow step over the steps of ``repeats`` runs (the median is the
machine's speed, the tail its load), in µs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

from rths_ident.hybrid.fast_side.rate_transition.registry import AUTO, DDMRT_MIN_RATIO, resolve_transition

#: the coordination (slow) and the fast side's rates [Hz]
RATES = {"slow_rate": 1024.0, "fast_rate": 4096.0}
#: the case that paces an empty slow step (no site, no substructure, no hook) as the others
#: are paced: the host alone, the floor no loop can beat
HOST_ALONE = "host alone (empty step)"
#: what each case is: the scenario, its numerical substructure, its loop variant
CASES = (HOST_ALONE, "rc-frame native", "rc-frame opensees", "rc-frame opensees-tcp", "lugre-frame rls")
#: the case whose substructure is a ``rths-ident serve ns`` child process on loopback
TCP_CASE = "rc-frame opensees-tcp"
#: what :func:`raise_server` got for the server at each address (said beside its figures)
SERVER_SETTINGS: dict[str, str] = {}
#: the served case's server child process: loopback, a free port (with its step marks in a folder)
SERVE_ARGS = ("--host", "127.0.0.1", "--port", "0", "--timeout", "600")
#: per served address: the folder of its step marks and a second server that never polls (``--spin-ms 0``)
WIRE_PEERS: dict[str, dict] = {}
#: the fast side runs at least this rate [Hz] (the seeds' 4 kHz controllers), a whole multiple of the slow rate
MIN_FAST_RATE_HZ = 4000.0
#: below this rate ratio rc-frame's ``auto`` transition is the predictor–corrector, not DDMRT
#: (rate_transition.registry.DDMRT_MIN_RATIO says why)
SMALL_RATIO = DDMRT_MIN_RATIO


def fast_rate_for(slow_rate: float) -> float:
    """The fast rate of the rate table at ``slow_rate`` [Hz]: its smallest whole multiple
    of at least :data:`MIN_FAST_RATE_HZ` (50 → 4000 Hz, ratio 80 as in seeds 000 and
    003; 256, 512, 1024 → 4096 Hz, ratios 16, 8, 4)."""
    if not (math.isfinite(slow_rate) and slow_rate > 0):
        raise ValueError(f"slow rate {slow_rate!r} Hz: expected a positive number")
    return float(slow_rate * math.ceil(MIN_FAST_RATE_HZ / slow_rate - 1e-12))


class StepTimer:
    """The pacer's interface without waiting: each step's begin, end, site and NS
    times, as :func:`~rths_ident.hybrid.loop.engine.run_stepwise` reports them to a pacer
    (the garbage collector paused as in a paced run)."""

    def __init__(self):
        self.latency, self.site, self.ns = [], [], []
        self._begin = 0.0
        self._gc = False

    def start(self, n_steps: int | None = None) -> None:
        self._gc = gc.isenabled()
        gc.collect()
        gc.disable()

    def stop(self) -> None:
        if self._gc:
            gc.enable()

    def begin_step(self, k: int) -> None:
        self._begin = time.perf_counter()

    def end_step(self, k: int, ns_seconds: float, site_seconds: float = math.nan) -> int:
        self.latency.append(time.perf_counter() - self._begin)
        self.ns.append(ns_seconds)
        self.site.append(site_seconds)
        return 0


def _us(values) -> dict:
    """min / median / p99 / p99.9 / max of ``values`` [s] in µs."""
    values = 1e6 * np.asarray(values, dtype=float)
    p50, p99, p999 = np.percentile(values, (50, 99, 99.9))
    return {"min": float(values.min()), "median": float(p50), "p99": float(p99), "p99.9": float(p999),
            "max": float(values.max())}


def _per_step(fn, n: int, repeats: int) -> dict:
    """``fn(k)`` for k = 0 … n−1, ``repeats`` times: µs per call (median, p99, min)."""
    times = np.empty(n * repeats)
    clock = time.perf_counter
    gc.disable()
    try:
        for r in range(repeats):
            for k in range(n):
                start = clock()
                fn(k)
                times[r * n + k] = clock() - start
    finally:
        gc.enable()
    return _us(times)


def rc_frame_transition(rates: dict) -> str:
    """The rate transition rc-frame's default ``auto`` is at ``rates``: DDMRT, the
    predictor–corrector below a rate ratio of :data:`SMALL_RATIO`."""
    return resolve_transition(AUTO, round(rates["fast_rate"] / rates["slow_rate"]))


@contextlib.contextmanager
def _built(case: str, duration: float, padding: float, rates: dict = RATES):
    """``(cfg, test, variant)`` of ``case`` at ``rates``; for :data:`TCP_CASE` a
    ``rths-ident serve ns`` child process serves the substructure on 127.0.0.1 while the
    ``with`` lasts (started here, stopped at its end, also on error)."""
    from rths_ident.scenarios import lugre_frame, rc_frame, remote_ns  # noqa: PLC0415

    settings = dict(duration=duration, pad_seconds=padding, **rates)
    rc_settings = dict(settings, transition=rc_frame_transition(rates))
    if case == "rc-frame native":
        cfg = rc_frame.RCFrameConfig(**rc_settings)
        yield cfg, rc_frame.build(cfg), "none"
    elif case == "rc-frame opensees":
        cfg = rc_frame.RCFrameConfig(ns="opensees", **rc_settings)
        yield cfg, rc_frame.build(cfg), "none"
    elif case == TCP_CASE:
        from rths_ident.transport.ns_server_process import NSServerProcess  # noqa: PLC0415

        with tempfile.TemporaryDirectory(prefix="rths-wire-marks-") as marks, \
                tempfile.TemporaryDirectory(prefix="rths-wire-marks-") as sleeping_marks, \
                NSServerProcess(SERVE_ARGS + ("--step-marks", marks)) as server, \
                NSServerProcess(SERVE_ARGS + ("--step-marks", sleeping_marks, "--spin-ms", "0")) as sleeping:
            host, port = server.address
            served = rc_frame.RCFrameConfig(ns="opensees-tcp", ns_address=f"{host}:{port}", **rc_settings)
            SERVER_SETTINGS[served.ns_address] = raise_server(server.process.pid)
            raise_server(sleeping.process.pid)
            WIRE_PEERS[served.ns_address] = {"": (served.ns_address, None, marks),
                                             "_sleeping": ("%s:%d" % sleeping.address, 0.0, sleeping_marks)}
            with remote_ns.ns_server_for(served) as cfg:  # the server is told when the case's runs are over
                yield cfg, rc_frame.build(cfg), "none"
    elif case == "lugre-frame rls":
        cfg = lugre_frame.LugreFrameConfig(updating="rls", **settings)
        yield cfg, lugre_frame.build(cfg), "updating"
    else:
        built = ", ".join(name for name in CASES if name != HOST_ALONE)  # the host alone builds no test
        raise ValueError(f"realtime_loop: unknown case {case!r}; expected one of {built}")


def raise_server(pid: int) -> str:
    """The served substructure's process as a lab would run it beside a real-time loop:
    every thread of ``pid`` at ``SCHED_FIFO`` :data:`~rths_ident.hybrid.loop.realtime_host.FIFO_PRIORITY`
    on a CPU other than the loop's (:class:`~rths_ident.hybrid.loop.realtime_host.RealTimeHost`
    pins the loop to the last CPU it may use). Returns what it got, refusals said (at
    the ordinary policy on a loaded machine, each of the server's wake-ups waits for a
    time slice: milliseconds per round trip)."""
    from rths_ident.hybrid.loop.realtime_host import FIFO_PRIORITY  # noqa: PLC0415

    if not (hasattr(os, "sched_setscheduler") and hasattr(os, "sched_getaffinity")):
        return "server left as it is (no real-time scheduling on this system)"
    allowed = sorted(os.sched_getaffinity(0))
    cpu = allowed[0] if len(allowed) > 1 else None
    notes = []
    try:
        threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        threads = [pid]
    for tid in threads:
        try:
            if cpu is not None:
                os.sched_setaffinity(tid, {cpu})
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(FIFO_PRIORITY))
        except OSError as error:
            notes.append(f"thread {tid}: {error.strerror}")
    where = f"CPU {cpu}" if cpu is not None else "not pinned (one CPU)"
    if notes:
        return f"server SCHED_FIFO refused ({'; '.join(sorted(set(notes))[:2])}), {where}"
    return f"server SCHED_FIFO {FIFO_PRIORITY}, {where}"


def wire_round_trip(cfg, test, repeats: int) -> dict:
    """The wire's own share of a served substructure's step [µs]: over the record, each
    step's time through the server (message out, the server's OpenSees step, message
    back) minus the same step of the same OpenSeesPy frame in this process (zero
    feedback, the same ground acceleration; each step at the opening of its slow step's
    window, as in a paced run, so that what the server does between steps stays between
    them; interleaved run by run, so all see the same load; this thread in the paced
    runs' real-time settings): min / median / p99 / p99.9 / max of the per-step
    differences, and the in-process step's. Then the round trip
    part by part (:func:`wire_parts`, from both ends' clock marks), and the same with
    both ends waiting in the kernel instead of polling (``spin_s`` 0 here, a server with
    ``--spin-ms 0``): ``wire_sleeping_us``, ``wire_parts_sleeping_us``."""
    import dataclasses  # noqa: PLC0415

    from rths_ident.hybrid.loop.realtime_host import RealTimeHost  # noqa: PLC0415
    from rths_ident.scenarios import rc_frame  # noqa: PLC0415

    record = np.concatenate([[0.0], np.asarray(test.ground_accel)])
    local_cfg = dataclasses.replace(cfg, ns="opensees", ns_address=None)
    variants = WIRE_PEERS.get(cfg.ns_address) or {"": (cfg.ns_address, None, None)}
    wire = {v: [] for v in variants}
    parts = {v: [] for v in variants}
    local = []
    with RealTimeHost():  # the client's thread as in the paced runs
        for _ in range(repeats):
            in_process = _windowed_step_times(rc_frame.opensees_substructure(local_cfg, "none", record),
                                              test.ground_accel, 1.0 / cfg.slow_rate)
            local.append(in_process)
            for variant, (address, spin_s, marks) in variants.items():
                remote = _remote(cfg, address, record, spin_s)
                remote.step_marks = []
                served = _windowed_step_times(remote, test.ground_accel, 1.0 / cfg.slow_rate)
                wire[variant].append(served - in_process)
                if marks is not None:
                    parts[variant].append(wire_parts(remote.step_marks, _last_marks(marks)))
    out = {"in_process_ns_us": _us(np.concatenate(local))}
    for variant in variants:
        out[f"wire{variant}_us"] = _us(np.concatenate(wire[variant]))
        if parts[variant]:
            out[f"wire_parts{variant}_us"] = {name: _us(np.concatenate([p[name] for p in parts[variant]]))
                                              for name in parts[variant][0]}
    return out


#: a window's wait ends in a busy-wait this long before the window opens [s]
WINDOW_SPIN_S = 200e-6


def _windowed_step_times(ns, ground_accel, dt: float) -> np.ndarray:
    """Wall time [s] of each ``ns.step`` over the record (zero feedback), step k started
    at the opening of window k of ``dt`` [s] (a sleep, then a busy-wait of
    :data:`WINDOW_SPIN_S`); a late step's next one starts at once."""
    clock = time.perf_counter
    ns.initial_target()
    feedback = np.zeros(1)
    times = np.empty(len(ground_accel))
    try:
        start = clock()
        for k, ag in enumerate(ground_accel):
            opening = start + k * dt
            rest = opening - clock()
            if rest > WINDOW_SPIN_S:
                time.sleep(rest - WINDOW_SPIN_S)
            while clock() < opening:
                pass
            begin = clock()
            ns.step(feedback, ag)
            times[k] = clock() - begin
    finally:
        ns.close()
    return times


#: the parts of a served step's round trip (:func:`wire_parts`), in order
WIRE_PARTS = ("client send", "to the server", "server decode", "server step", "server encode", "server send",
              "to the client", "client decode")


def wire_parts(client, server) -> dict:
    """A served step's round trip part by part [s per step], from the client's marks
    (:data:`~rths_ident.transport.remote_substructure.STEP_MARKS`: called, sent, reply read,
    returning) and the server's (:data:`~rths_ident.transport.ns_server.STEP_MARKS`: read,
    decoded, stepped, encoded, sent), both on the system's monotonic clock: the client's
    checks, encoding and send; from the send's return to the server having read the
    message (the kernel's delivery, the server's wake-up or poll, its read); decoding;
    the substructure's step (OpenSees, and the server's session record); the log and
    encoding; the send; from there to the client having read the reply (delivery,
    wake-up or poll, read); the client's decoding. Also ``round trip`` and
    ``wire`` (the round trip less the server's step). A peer may read a message before
    its sender's send has returned: the two "to the …" parts can then be negative (and
    the sends' parts hold that much of the delivery)."""
    client, server = np.asarray(client, dtype=float), np.asarray(server, dtype=float)
    if client.shape[0] != server.shape[0]:
        raise ValueError(f"wire_parts: {client.shape[0]} client steps but {server.shape[0]} server steps")
    c_start, c_sent, c_received, c_done = client.T
    s_received, s_decoded, s_stepped, s_encoded, s_sent = server.T
    spans = (c_sent - c_start, s_received - c_sent, s_decoded - s_received, s_stepped - s_decoded,
             s_encoded - s_stepped, s_sent - s_encoded, c_received - s_sent, c_done - c_received)
    out = dict(zip(WIRE_PARTS, spans))
    out["round trip"] = c_done - c_start
    out["wire"] = out["round trip"] - out["server step"]
    return out


def _remote(cfg, address: str, record, spin_s):
    from rths_ident.scenarios import remote_ns  # noqa: PLC0415
    from rths_ident.tcp_ports import parse_address  # noqa: PLC0415
    from rths_ident.transport.remote_substructure import RemoteSubstructure  # noqa: PLC0415

    host, port = parse_address(address)
    return RemoteSubstructure(host, port, remote_ns.setup_for(cfg, "none", record), dt=1.0 / cfg.slow_rate,
                              model=remote_ns.MODEL_NAME, spin_s=spin_s)


def _last_marks(folder: str) -> np.ndarray:
    """The step marks of the last session a server saved in ``folder``."""
    return np.load(sorted(Path(folder).glob("marks-session-*.npy"))[-1])


def paced_runs(cfg, test, variant: str, repeats: int) -> dict:
    """``repeats`` paced runs of ``test`` at ``cfg.slow_rate`` in the host's real-time
    settings, after its jitter is measured (module doc): the latency per slow step over
    all runs [µs], the missed deadlines and the host's counters of each run, the host's
    settings and jitter."""
    from rths_ident.hybrid.loop.assembled import run_loop  # noqa: PLC0415

    return _paced(cfg, lambda pacer: run_loop(test, "stepwise", variant=variant, pacer=pacer), repeats)


@dataclasses.dataclass(frozen=True)
class EmptyStepConfig:
    """What a paced run reads of a test's configuration, for :data:`HOST_ALONE`."""

    slow_rate: float  # [Hz]
    pad_seconds: float  # the start-up [s]


def empty_steps(n_steps: int, pacer, ends=None) -> None:
    """``n_steps`` slow steps with no work, paced by ``pacer`` as
    :func:`~rths_ident.hybrid.loop.engine.run_stepwise` paces a test (``start``, then per
    step ``begin_step`` / ``end_step``, ``stop`` also on a fault); ``ends[k]``: the clock
    (``time.perf_counter``) when step k's work, none, was done [s]."""
    clock = time.perf_counter
    pacer.start(n_steps)
    try:
        for k in range(n_steps):
            pacer.begin_step(k)
            if ends is not None:
                ends[k] = clock()
            pacer.end_step(k, 0.0, 0.0)
    finally:
        pacer.stop()


def host_alone_runs(slow_rate: float, repeats: int, duration: float, padding: float) -> dict:
    """:data:`HOST_ALONE`: the paced runs of :func:`paced_runs` (the same host settings,
    jitter calibration, pacer, length and accounting) with an empty slow step — no site,
    no substructure, no hook: the misses no loop can avoid on this host."""
    cfg = EmptyStepConfig(float(slow_rate), float(padding))
    n_steps = int(round((duration + padding) * slow_rate))
    return _paced(cfg, lambda pacer: empty_steps(n_steps, pacer), repeats)


def _paced(cfg, run_once, repeats: int) -> dict:
    """``repeats`` times ``run_once(pacer)`` with a calibrated pacer inside the host's
    real-time settings (:func:`paced_runs`)."""
    from rths_ident.hybrid.loop.engine import LoopAborted  # noqa: PLC0415
    from rths_ident.hybrid.loop.realtime_host import RealTimeHost  # noqa: PLC0415
    from rths_ident.runner.results import calibrated_pacer  # noqa: PLC0415

    runs, latency, site, ns, own = [], [], [], [], []
    host_figures = None
    with RealTimeHost() as host:
        for _ in range(repeats):
            pacer = calibrated_pacer(cfg, host)
            stopped = None
            try:
                run_once(pacer)
            except LoopAborted as aborted:  # an interlock (a late target's command jump): the run's steps until then
                stopped = str(aborted).split(". ")[0]
            report = pacer.report()
            host_figures = report.host
            runs.append(missed_deadlines(report) | host_counter_figures(report.counters)
                        | ({"stopped": stopped} if stopped else {}))
            latency.append(report.latency_s)
            site.append(report.site_s if report.site_s is not None else np.zeros_like(report.latency_s))
            ns.append(report.ns_s)
            own.append(report.loop_s)
    latency = np.concatenate(latency)
    return {
        "steps_per_run": int(runs[0]["steps"]), "startup_steps": int(runs[0]["startup_steps"]),
        "slow_step_us": 1e6 / cfg.slow_rate,
        "latency_us": _us(latency), "site_us": _us(np.concatenate(site)), "ns_us": _us(np.concatenate(ns)),
        "own_us": _us(np.concatenate(own)),
        "runs": runs,
        "runs_without_a_miss_after_startup": sum(run["missed_after_startup"] == 0 and "stopped" not in run
                                                 for run in runs),
        "host": host_figures,
    }


def host_counter_figures(counters: dict | None) -> dict:
    """A paced run's host counters (:class:`~rths_ident.hybrid.loop.host_counters.HostCounters`)
    as the bench keeps them per run: steal of the loop's CPU and of the machine [ms], the
    loop thread's wait for a CPU [ms] and its share of the wall time on a CPU, the
    involuntary context switches of the thread and of the process, and the three longest
    late steps with their counters."""
    if counters is None:
        return {}
    return {"steal_cpu_ms": counters["steal_cpu_ms"], "steal_all_ms": counters["steal_all_ms"],
            "cpu_wait_ms": counters["thread_cpu_wait_ms"], "cpu_share": counters["thread_cpu_share"],
            "involuntary_switches": counters["thread_involuntary_switches"],
            "process_involuntary_switches": counters["process_involuntary_switches"],
            "longest_stalls": counters["longest_late_steps"][:3]}


def missed_text(run: dict) -> str:
    """A run's missed deadlines after start-up, as the tables show them ("3 (stopped)":
    an interlock stopped the run after 3)."""
    return f"{run['missed_after_startup']}" + (" (stopped)" if "stopped" in run else "")


def missed_deadlines(report) -> dict:
    """A paced run's deadline figures (a :class:`~rths_ident.hybrid.loop.realtime.RealTimeReport`):
    steps, missed ticks in all and after the start-up, the longest run of late steps."""
    return {"steps": report.steps, "startup_steps": report.startup_steps,
            "missed": report.missed_deadlines, "missed_after_startup": report.missed_after_startup,
            "longest_missed_run": report.longest_missed_run,
            "late_steps": int(np.sum(report.latency_s >= report.dt))}


def _fused_us_per_fast_step(test, variant: str, repeats: int) -> float | None:
    from rths_ident.hybrid.loop.assembled import compiled_fused_runner, loop_arguments  # noqa: PLC0415

    if test.native_ns is None:
        return None
    parameters, initial = loop_arguments(test, variant)
    runner = compiled_fused_runner(test, initial)
    ag = jax.device_put(np.asarray(test.ground_accel))
    jax.block_until_ready(runner(parameters, initial, ag))
    best = math.inf
    for _ in range(max(repeats, 3)):
        start = time.perf_counter()
        jax.block_until_ready(runner(parameters, initial, ag))
        best = min(best, time.perf_counter() - start)
    return 1e6 * best / (len(test.ground_accel) * test.fast_side.ratio)


def site_call_floor(test, repeats: int, calls: int = 2000) -> dict:
    """The virtual site's compiled call against its idle twin
    (:func:`~rths_ident.packed_calls.idle_twin`: the same parameters, state, inputs and
    outputs crossing the call, nothing computed), each called ``calls`` times in a row as
    the loop calls the site (``call_into_host``), in ``max(repeats, 3)`` batches
    alternated between the two: the smallest batch median, µs per call. The idle call is
    what any call through this path costs on this machine before its arithmetic, so a
    site's call cannot come closer to the arithmetic a than (idle + a) / a."""
    from rths_ident.hybrid.loop.assembled import virtual_site  # noqa: PLC0415
    from rths_ident.packed_calls import idle_twin  # noqa: PLC0415

    site = virtual_site(test).program
    programs = {"site_call_us": site, "idle_call_us": idle_twin(site)}
    best = dict.fromkeys(programs, math.inf)
    for program in programs.values():
        program.call_into_host()  # warm
    for _ in range(max(repeats, 3)):
        for name, program in programs.items():
            best[name] = min(best[name], _per_step(lambda _k, call=program.call_into_host: call(), calls, 1)["median"])
    return best


def _loop_parts(cfg, test, variant: str, repeats: int) -> dict:
    """The loop's own parts, each on the run's own data (module doc)."""
    from rths_ident.hybrid.loop.assembled import (  # noqa: PLC0415
        _limit_check, interlock_monitor, variant_guards, virtual_site)
    from rths_ident.hybrid.loop.engine import GuardsUpdater  # noqa: PLC0415
    from rths_ident.hybrid.loop.host_counters import HostCounters  # noqa: PLC0415
    from rths_ident.hybrid.loop.model_updating import hook_init  # noqa: PLC0415
    from rths_ident.hybrid.loop.realtime import RealTimePacer  # noqa: PLC0415
    from rths_ident.hybrid.loop.step_logs import StepLogs  # noqa: PLC0415
    from rths_ident.runner.events import EventStream  # noqa: PLC0415
    from rths_ident.runner.recording import StepRecorder, open_run_record  # noqa: PLC0415

    n = len(test.ground_accel)
    values = test.true_values if variant == "oracle" else test.initial_values
    guards, dt_slow = variant_guards(test, variant), 1.0 / test.slow_rate
    updater = GuardsUpdater(guards, hook_init(values), dt_slow)  # as run_loop builds it
    site, ns = virtual_site(test), test.make_ns(variant)
    readings, ns_logs, ns_targets = [], [], []
    target = ns.initial_target()
    for k in range(n):  # the run's own readings, logs and estimates
        reading = jax.tree_util.tree_map(np.copy, site.step(target))  # the site overwrites its reading next step
        readings.append(reading)
        target, ns_log = ns.step(reading.force, test.ground_accel[k])
        ns_targets.append(np.copy(target))
        ns_logs.append(jax.tree_util.tree_map(np.copy, ns_log))
    ns.close()
    update_logs = []
    for k in range(n):
        updater.step(readings[k].estimate, k)
        update_logs.append({key: np.copy(value) for key, value in updater.log.items()})  # the log is overwritten
    parts: dict = {}

    parts["hook"] = _per_step(lambda k: updater.step(readings[k].estimate, k), n, repeats)
    logs = StepLogs(n)

    def store(k):
        logs.store("fast", k, readings[k].log)
        logs.store("update", k, update_logs[k])
        logs.store("ns", k, ns_logs[k])
        logs.count = k + 1

    parts["logs"] = _per_step(store, n, repeats)
    check = _limit_check(test.slow_rate)
    parts["check"] = _per_step(lambda k: check(logs.row(k), k), n, repeats)
    names = tuple(test.param_names)
    monitors = [interlock_monitor(test)]

    def interlocks(k):  # as run_stepwise checks them after each step
        if k == 0:
            monitors[0] = interlock_monitor(test)
        monitor = monitors[0]
        trip = (monitor.check_site_log(readings[k].log, k) or monitor.check_estimate(readings[k].estimate, k, names)
                or monitor.check_ns(ns_targets[k], ns_logs[k], k) or monitor.check_deadline(0.0, k))
        if trip is not None:
            raise RuntimeError(f"realtime_loop: the bench's own run tripped {trip.message()}")

    parts["interlocks"] = _per_step(interlocks, n, repeats)
    pacer = RealTimePacer(1e-9)  # every window already open: the bookkeeping alone
    pacer.start(n * repeats)

    def pace(k):
        pacer.begin_step(k)
        pacer.end_step(k, 0.0, 0.0)

    parts["pacer"] = _per_step(pace, n, repeats)
    pacer.stop()
    counters = HostCounters()  # the pacer's reading of the loop thread's CPU clock per step
    counters.start(n * repeats)

    def read_counters(k):  # as the pacer reads them: at the window's opening and after the work
        counters.began()
        counters.step(k)

    parts["host_counters"] = _per_step(read_counters, n, repeats)
    counters.stop()
    with tempfile.TemporaryDirectory() as folder:
        writer = open_run_record(Path(folder) / "bench.h5", cfg, test, "stepwise")
        recorder = StepRecorder(writer, test.time_slow, None, test.ground_accel)
        recorder.follow(logs, interval_s=3600.0)  # the thread idles: its writing is timed below
        parts["record"] = _per_step(lambda k: recorder(k, logs.row(k)), n, 1)
        start = time.perf_counter()
        recorder.stop_following()  # writes every row, as the thread does in pieces
        writer_s = time.perf_counter() - start
        writer.close()
    parts["record_writer_thread"] = {"median": 1e6 * writer_s / n, "p99": None, "min": None}
    stream = EventStream(lambda event: None)
    on_step = stream.step_callback(n)
    parts["step_event"] = _per_step(lambda k: on_step(k, logs.row(k)), n, repeats)
    return parts


def run(repeats: int = 3, duration: float = 4.0, padding: float = 1.0, cases=CASES) -> dict:
    """The paced loop and the per-part cost of a slow step at 1024/4096 Hz for each case
    (module doc); ``duration`` s of record after ``padding`` s of zeros (the start-up)."""
    out: dict = {"slow_rate_hz": RATES["slow_rate"], "fast_rate_hz": RATES["fast_rate"], "duration_s": duration,
                 "padding_s": padding, "repeats": repeats, "cases": {},
                 "load_average": {"before": list(os.getloadavg())}}
    for case in cases:
        if case == HOST_ALONE:
            out["cases"][case] = {"paced": host_alone_runs(RATES["slow_rate"], repeats, duration, padding)}
            continue
        try:
            with _built(case, duration, padding) as (cfg, test, variant):
                out["cases"][case] = _case_figures(cfg, test, variant, repeats, tcp=case == TCP_CASE)
        except ImportError as error:  # OpenSeesPy missing
            out["cases"][case] = {"skipped": str(error)}
    out["load_average"]["after"] = list(os.getloadavg())
    return out


def _case_figures(cfg, test, variant: str, repeats: int, tcp: bool) -> dict:
    """One case of :func:`run`: paced, unpaced per part, against the arithmetic (a
    served substructure: paced, unpaced, and the wire's own round trip)."""
    from rths_ident.hybrid.loop.assembled import run_loop  # noqa: PLC0415

    run_loop(test, "stepwise", variant=variant)  # warm-up: every program compiled
    latency, site, ns, walls = [], [], [], []
    for _ in range(repeats):
        timer = StepTimer()
        _, wall = run_loop(test, "stepwise", variant=variant, pacer=timer)
        latency += timer.latency
        site += timer.site
        ns += timer.ns
        walls.append(wall / len(test.ground_accel))
    latency, site, ns = (np.asarray(x) for x in (latency, site, ns))
    result = {
        "ratio": test.fast_side.ratio,
        "paced": paced_runs(cfg, test, variant, repeats),
        "loop_us": _us(latency), "site_us": _us(site), "ns_us": _us(ns), "own_us": _us(latency - site - ns),
        "wall_us_per_step_median": 1e6 * statistics.median(walls),
    }
    if tcp:  # the loop's parts are the in-process OpenSeesPy case's; here the wire's share
        result.update(wire_round_trip(cfg, test, repeats))
        result["server"] = SERVER_SETTINGS.get(cfg.ns_address, "")
        return result
    fused = _fused_us_per_fast_step(test, variant, repeats)
    result["fused_us_per_fast_step"] = fused
    result["parts_us"] = _loop_parts(cfg, test, variant, repeats)
    if fused is not None:
        arithmetic = fused * test.fast_side.ratio
        result["arithmetic_us_per_slow_step"] = arithmetic
        result["site_over_arithmetic"] = result["site_us"]["median"] / arithmetic
        floor = site_call_floor(test, repeats)
        result["site_call_floor"] = floor | {
            "best_over_arithmetic": (floor["idle_call_us"] + arithmetic) / arithmetic}
    return result


def rate_table(slow_rates, repeats: int = 3, duration: float = 4.0, padding: float = 1.0, cases=CASES) -> dict:
    """The paced loop (:func:`paced_runs`) of each case at each slow rate [Hz] (the fast
    rate: :func:`fast_rate_for`): ``{case: {rate: figures}}``, where a user reads the
    largest rate their machine holds."""
    from rths_ident.hybrid.loop.assembled import run_loop  # noqa: PLC0415

    table: dict = {}
    for case in cases:
        table[case] = {}
        for slow in slow_rates:
            rates = {"slow_rate": float(slow), "fast_rate": fast_rate_for(float(slow))}
            if case == HOST_ALONE:
                table[case][f"{slow:g}"] = host_alone_runs(float(slow), repeats, duration, padding) | {
                    "fast_rate_hz": rates["fast_rate"]}
                continue
            try:
                with _built(case, duration, padding, rates) as (cfg, test, variant):
                    run_loop(test, "stepwise", variant=variant)  # warm-up: every program compiled
                    figures = paced_runs(cfg, test, variant, repeats)
                    if case == TCP_CASE:
                        figures.update(wire_round_trip(cfg, test, 1))
                        figures["server"] = SERVER_SETTINGS.get(cfg.ns_address, "")
            except ImportError as error:  # OpenSeesPy missing
                table[case][f"{slow:g}"] = {"skipped": str(error)}
                continue
            figures["fast_rate_hz"] = rates["fast_rate"]
            figures["transition"] = rc_frame_transition(rates) if case.startswith("rc-frame") else "predictor-corrector"
            table[case][f"{slow:g}"] = figures
    return table


def rate_table_lines(table: dict) -> list[str]:
    """The rate table as the terminal shows it: per case and slow rate, the latency per
    slow step and the missed deadlines after start-up of each run."""
    lines = ["paced step-wise loop by slow rate (latency per slow step and the substructure's share in µs; missed "
             "deadlines after start-up, per run; over TCP the wire's own round trip, unpaced):",
             f"  {'case':22s} {'slow/fast Hz':>14s} {'window':>8s} {'median':>8s} {'p99':>8s} {'max':>9s} "
             f"{'NS p99':>8s}  missed"]
    for case, by_rate in table.items():
        for rate, p in by_rate.items():
            if "skipped" in p:
                lines.append(f"  {case:22s} {rate:>14s}  skipped ({p['skipped']})")
                continue
            lat = p["latency_us"]
            missed = ", ".join(missed_text(run) for run in p["runs"])
            wire = f"; wire p99 {p['wire_us']['p99']:.1f}" if "wire_us" in p else ""
            lines.append(f"  {case:22s} {rate + '/' + format(p['fast_rate_hz'], 'g'):>14s} {p['slow_step_us']:8.1f} "
                         f"{lat['median']:8.1f} {lat['p99']:8.1f} {lat['max']:9.1f} {p['ns_us']['p99']:8.1f}  {missed} "
                         f"({p['runs_without_a_miss_after_startup']} of {len(p['runs'])} runs without a miss{wire})")
    return lines


def paced_lines(p: dict) -> list[str]:
    """The paced runs' figures (:func:`paced_runs`) as the terminal shows them."""
    lat = p["latency_us"]
    runs = p["runs"]
    missed = ", ".join(f"{run['missed']} ({run['missed_after_startup']})" for run in runs)
    lines = [f"    paced ({len(runs)} runs of {p['steps_per_run']} steps, window {p['slow_step_us']:.1f} µs): latency "
             f"per slow step min {lat['min']:.1f} / median {lat['median']:.1f} / p99 {lat['p99']:.1f} / "
             f"p99.9 {lat['p99.9']:.1f} / max {lat['max']:.1f} µs",
             f"      missed deadlines per run (after the {p['startup_steps']}-step start-up): {missed}; "
             f"longest run {max(run['longest_missed_run'] for run in runs)}; "
             f"{p['runs_without_a_miss_after_startup']} of {len(runs)} runs without a miss after start-up"]
    lines += [f"      stopped: {run['stopped']}" for run in runs if "stopped" in run]
    lines += counter_lines(runs)
    host = p.get("host") or {}
    if host:
        settings, jitter = host.get("settings", {}), host.get("jitter", {})
        wake = jitter.get("wake_late_us", {})
        pinned = f"CPU {settings.get('cpu')}" if settings.get("cpu") is not None else "not pinned"
        notes = "; ".join(settings.get("notes") or [])
        lines.append(f"      host: {settings.get('scheduling')}, {pinned}; jitter before the run: wake-up late "
                     f"p99 {wake.get('p99', float('nan')):.0f} / max {wake.get('max', float('nan')):.0f} µs, "
                     f"busy-wait tail {host.get('spin_tail_us', float('nan')):.0f} µs" + (f" ({notes})" if notes else ""))
    return lines


def counter_lines(runs: list[dict]) -> list[str]:
    """The host's counters of each paced run (:func:`host_counter_figures`) as the
    terminal shows them: what the host took from the loop, and the longest stall's."""
    if not runs or "steal_cpu_ms" not in runs[0]:
        return []
    per_run = "; ".join(
        f"{run['steal_cpu_ms']:.0f}/{run['steal_all_ms']:.0f} ms steal, {run['cpu_wait_ms']:.1f} ms waiting, "
        f"{100 * (run['cpu_share'] or 0):.0f} % on CPU, {run['involuntary_switches']}/"
        f"{run['process_involuntary_switches']} inv." for run in runs)
    lines = [f"      host per run (steal of the loop's CPU / all CPUs, the loop thread's wait for a CPU and its time on "
             f"one, involuntary switches of the thread / process): {per_run}"]
    stalls = sorted((stall for run in runs for stall in run["longest_stalls"]), key=lambda s: -s["latency_ms"])[:3]
    if stalls:
        lines.append("      longest stalls: " + "; ".join(
            f"step {s['step']} {s['latency_ms']:.2f} ms (woke {s['woke_late_ms']:.2f} ms late; its work "
            f"{s['work_ms']:.2f} ms, {s['work_on_cpu_ms']:.2f} ms of it on the CPU; waited {s['cpu_wait_ms']:.1f} ms "
            f"for a CPU, {s['involuntary_switches']} inv., steal {s['steal_ms']:.0f} ms in the "
            f"{s['steal_window_ms']:.0f} ms up to it)" for s in stalls))
    return lines


def wire_lines(c: dict) -> list[str]:
    """The served step's round trip part by part (:func:`wire_parts`), both ends polling
    and both sleeping, as the terminal shows them."""
    lines = []
    for variant, how in (("", "polling"), ("_sleeping", "sleeping in the kernel")):
        parts = c.get(f"wire_parts{variant}_us")
        if not parts:
            continue
        wire = c[f"wire{variant}_us"]
        lines.append(f"    both ends {how}: wire (served − in process) median {wire['median']:.1f} / p99 "
                     f"{wire['p99']:.1f} µs; round trip median / p99 by part: "
                     + ", ".join(f"{name} {parts[name]['median']:.1f} / {parts[name]['p99']:.1f}"
                                 for name in (*WIRE_PARTS, "round trip", "wire")))
    return lines


def fast_chunk_lines(c: dict) -> list[str]:
    """A case's site call against the fused engine's arithmetic, and against its idle
    twin (:func:`site_call_floor`), where the bench measured them."""
    if c.get("arithmetic_us_per_slow_step") is None:
        return []
    lines = [f"    fast chunk: site call {c['site_us']['median']:.1f} µs vs the fused engine's "
             f"{c['fused_us_per_fast_step']:.3f} µs per fast step × {c['ratio']} = "
             f"{c['arithmetic_us_per_slow_step']:.1f} µs → {c['site_over_arithmetic']:.2f}×"]
    if "site_call_floor" in c:
        floor = c["site_call_floor"]
        lines.append(f"    called in a row: the site's call {floor['site_call_us']:.1f} µs, its idle twin (the same "
                     f"trees crossing, nothing computed) {floor['idle_call_us']:.1f} µs: through a compiled call "
                     f"the site's call is at best {floor['best_over_arithmetic']:.2f}× its arithmetic here")
    return lines


def report(r: dict) -> list[str]:
    lines = [f"step-wise loop at {r['slow_rate_hz']:g}/{r['fast_rate_hz']:g} Hz ({r['padding_s']:g} s start-up + "
             f"{r['duration_s']:g} s record × {r['repeats']} runs; µs per slow step, median / p99):"]
    for case, c in r["cases"].items():
        if "skipped" in c:
            lines.append(f"  {case}: skipped ({c['skipped']})")
            continue
        if case == HOST_ALONE:
            lines += [f"  {case}: the same pacing, nothing in the step (the floor of every case):"] + paced_lines(
                c["paced"])
            continue
        lines += [f"  {case} (ratio {c['ratio']}):"] + paced_lines(c["paced"])
        f = lambda d: f"{d['median']:7.1f} / {d['p99']:7.1f}"  # noqa: E731
        lines.append(f"    unpaced: whole step {f(c['loop_us'])} = site {f(c['site_us'])} "
                     f"+ substructure {f(c['ns_us'])} + loop's own {f(c['own_us'])}")
        lines += fast_chunk_lines(c)
        if "wire_us" in c:
            wire, local = c["wire_us"], c["in_process_ns_us"]
            lines.append(f"    {c['server']}; the wire's own round trip (served step − in-process step, per step): "
                         f"median "
                         f"{wire['median']:.1f} / p99 {wire['p99']:.1f} / max {wire['max']:.1f} µs; the OpenSeesPy "
                         f"step in process {local['median']:.1f} / p99 {local['p99']:.1f} µs")
            lines += wire_lines(c)
            continue
        parts = c["parts_us"]
        lines.append("    loop's own parts: " + ", ".join(
            f"{name} {p['median']:.1f}" for name, p in parts.items() if name != "record_writer_thread")
            + f" (record writer thread, off the loop: {parts['record_writer_thread']['median']:.1f} per step)")
    return lines
