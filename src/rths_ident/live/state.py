"""What the live page shows, kept in the page's server process: a run's events turned into
series and a status, sent to the browser as JSON (a snapshot, then deltas).

:class:`LiveState` takes the events the loop emitted (:mod:`rths_ident.runner.events`),
in order, and keeps:

* one point per slow step (every ``stride``-th step once the history is long: the
  history halves when it passes :data:`MAX_POINTS`): test time [s], the interface target
  x_t, measured x_m and command x_c at the step's last fast sample [m], the tracking
  error x_m − x_t with the largest magnitude within the step [m], the measured force
  [N], each identified parameter with its ±2σ band (θ̂·(1 ± 2·σ_rel)) and whether the
  hook applied it, the numerical substructure's response per DOF [m] and its reference,
  a paced run's latency and NS share per step [ms];
* the specimen's measured loop (x_m, f_m) at up to :data:`LOOP_SAMPLES_PER_STEP` fast
  samples per slow step, and the identified model's loop along the same displacement
  (:class:`~rths_ident.live.channel.ModelLoop`: computed in the run's process by
  :mod:`rths_ident.live.model_loop` every :data:`MODEL_LOOP_PERIOD_S` of wall time and
  at the end; a paced run only at the end);
* the status: phase, step, J2 over every fast sample so far (exact running sums), τ
  (:func:`rths_ident.metrics.fei_delay` over the last :data:`TAU_WINDOW_SAMPLES` fast
  samples every :data:`TAU_PERIOD_S`, over every sample at the end), the limits' peaks
  against the actuator's limits, why the hook
  held the last update back, a paced run's latency p50/p99/max and missed deadlines, a
  study's runs done and runs per minute, how the run ended.

Nothing here runs in the loop's process.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Mapping

import numpy as np

from rths_ident.live.channel import ModelLoop
from rths_ident.runner import events as ev

__all__ = ["LiveState", "MAX_POINTS", "guard_reasons", "first_dof"]

#: points per slow-step series before the history is halved
MAX_POINTS = 4000
#: fast samples per slow step kept for the specimen's loop (evenly spaced, the last included)
LOOP_SAMPLES_PER_STEP = 4
#: points of the specimen's loop before it is halved
MAX_LOOP_POINTS = 8000
#: wall seconds between recomputations of τ and of the identified model's loop
TAU_PERIOD_S = 2.0
MODEL_LOOP_PERIOD_S = 3.0
#: fast samples of τ's window while the run goes (a power of two: one short FFT per
#: period, however long the run); at the end: every sample
TAU_WINDOW_SAMPLES = 32768


def first_dof(values) -> np.ndarray:
    """A fast log's samples of the first interface DOF: ``(ratio,)`` or ``(ratio, n)`` →
    ``(ratio,)``; a scalar → one sample."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 0:
        return array.reshape(1)
    return array if array.ndim == 1 else array.reshape(array.shape[0], -1)[:, 0]


def guard_reasons(guards: dict | None, estimate, relative_std, converged: bool, time_s: float, step: int,
                  names: list) -> list[str]:
    """Why the model-updating hook held the estimate back at slow step ``step`` (test time
    ``time_s`` [s]), from the guards' values in the run's info — the same rules as
    :func:`rths_ident.hybrid.loop.model_updating.guards_pass`; empty when they pass."""
    if guards is None:
        return ["no updating"]
    reasons = []
    estimate = np.atleast_1d(np.asarray(estimate, dtype=float))
    relative_std = np.atleast_1d(np.asarray(relative_std, dtype=float))
    freeze = guards.get("freeze_until_s")
    if freeze is None:
        reasons.append("frozen for the whole test (no updating in this run)")
    elif time_s < freeze:
        reasons.append(f"frozen until t = {freeze:g} s")
    if step % max(1, int(guards.get("update_every_slow_steps", 1))) != 0:
        reasons.append(f"updates every {guards['update_every_slow_steps']} slow steps")
    if not np.all(np.isfinite(estimate)):
        reasons.append("estimate not finite")
    lower, upper = guards.get("lower_bounds") or [], guards.get("upper_bounds") or []
    for i, name in enumerate(names):
        if i < len(lower) and lower[i] is not None and estimate[i] < lower[i]:
            reasons.append(f"{name} below its bound {lower[i]:.4g}")
        if i < len(upper) and upper[i] is not None and estimate[i] > upper[i]:
            reasons.append(f"{name} above its bound {upper[i]:.4g}")
    limit = guards.get("max_relative_std")
    relative_std = np.nan_to_num(relative_std, nan=np.inf)  # an unknown spread is too large
    if limit is not None and relative_std.size and np.max(relative_std) > limit:
        worst = int(np.argmax(relative_std))
        reasons.append(f"σ/θ of {names[worst] if worst < len(names) else worst} = {relative_std[worst]:.3g} "
                       f"> {limit:g}")
    if guards.get("require_converged") and not converged:
        reasons.append("identifier not converged")
    return reasons


def _peak_signed(values: np.ndarray) -> float:
    return float(values[int(np.argmax(np.abs(values)))]) if values.size else math.nan


def _number(value):
    value = float(value)
    return value if math.isfinite(value) else None


class LiveState:
    """Series and status of one run (module doc). ``apply(stamp, event)`` in the events'
    order (``stamp``: the wall time the loop emitted it, ``time.time()`` [s]);
    ``snapshot()`` the whole state for a page that connects; ``delta()`` what changed
    since the last delta (None when nothing did): the new points, and ``"halve": h`` /
    ``"loop_halve": h`` when the history / the specimen's loop was halved h times since
    (the page halves what it has — every other point, the first kept — before appending:
    the page's series stay the server's without resending them), or a snapshot after a
    new run started (``"type": "snapshot"``)."""

    def __init__(self, clock=_time.time):
        self.clock = clock
        self.info: dict | None = None
        self.watch: dict = {}
        self.series: dict[str, list] = {}
        self.loop: dict[str, list] = {"x": [], "f": [], "model": []}
        self.stride = 1
        self.loop_stride = 1
        self._sent = 0  # points of the series already in a delta
        self._loop_sent = 0
        self._reset = False
        self._model_changed = False
        self._halvings = 0  # of the series since the last delta
        self._loop_halvings = 0
        self.status: dict = {"state": "starting", "phases": [], "notes": [], "step": None, "total": None,
                             "dropped_steps": 0, "t_loop": None, "seq": 0}
        self._status_changed = True
        self._last_step = -1
        self._sums = [0.0, 0.0]  # Σ(x_m − x_t)², Σ x_t² over every fast sample so far
        self._fast_target: np.ndarray | None = None
        self._fast_measured: np.ndarray | None = None
        self._fast_force: np.ndarray | None = None
        self._fast_n = 0
        self._loop_index: list[int] = []  # fast sample index of each loop point
        self._tau_at = -math.inf
        self._previous_measured: float | None = None
        self._peaks: dict[str, float] = {}
        self._theta = None
        self._runs: list[tuple[float, int]] = []
        self._study_values: dict[str, dict[str, list]] = {}
        self._stepped = False

    # ------------------------------------------------------------------ events
    def apply(self, stamp: float, event) -> None:
        if isinstance(event, ev.StepDone):
            self._step(stamp, event)
        elif isinstance(event, ev.TestStarted):
            self._started(event)
        elif isinstance(event, ev.PhaseEnded):
            self.status["phases"].append([event.phase, round(float(event.seconds), 3)])
            self.status["state"] = "running" if event.phase == "compiling" else self.status["state"]
            self._status_changed = True
        elif isinstance(event, ev.RunsDone):
            self._runs_done(stamp, event)
        elif isinstance(event, ev.StudyRun):
            self._study_run(event)
        elif isinstance(event, ev.Note):
            self.status["notes"].append(event.text)
            self._status_changed = True
        elif isinstance(event, ev.RunEnded):
            self._ended(event)
        elif isinstance(event, ModelLoop):
            self._model_loop(event)

    def _started(self, event: ev.TestStarted) -> None:
        """A new run: the history starts again (a test runs its configured variant once)."""
        info = dict(event.info)
        self.info, self.watch = info, dict(event.watch or {})
        self.series = {name: [] for name in self._series_names(info)}
        self.loop = {"x": [], "f": [], "model": []}
        self.stride, self.loop_stride, self._sent, self._loop_sent = 1, 1, 0, 0
        self._reset = True
        steps = info.get("steps")  # None: a server's session, as long as its client drives it
        total = (int(steps) if steps else 1024) * int(info["samples_per_step"])
        self._fast_target, self._fast_measured, self._fast_n = np.zeros(total), np.zeros(total), 0
        self._fast_force = np.zeros(total)
        self._loop_index = []
        self._sums = [0.0, 0.0]
        self.status.update(state="running", step=None, total=int(steps) if steps else None, engine=info.get("engine"))
        self._status_changed = True

    @staticmethod
    def _series_names(info: dict) -> list[str]:
        names = ["t", "target", "measured", "command", "error", "force", "applied"]
        if info.get("command_is_displacement") is False:  # a rig's board command: no x_c to draw
            names.remove("command")
        for p in info.get("params") or []:
            names += [f"est:{p['name']}", f"lo:{p['name']}", f"hi:{p['name']}"]
        for i in range(len(info.get("response_names") or [])):
            names += [f"ns:{i}", f"ref:{i}"]
        if info.get("paced"):
            names += ["latency_ms", "ns_ms"]
        return names

    def _step(self, stamp: float, event: ev.StepDone) -> None:
        if self.info is None:  # a step without a description (should not happen): describe it minimally
            self._started(ev.TestStarted("run", {"steps": event.total, "samples_per_step": 1, "slow_rate_hz": 1.0,
                                                 "fast_rate_hz": 1.0,
                                                 "time_first_s": 1.0, "params": [], "response_names": []}))
        k, log, info = int(event.step), event.log or {}, self.info
        if k > self._last_step + 1:
            self.status["dropped_steps"] += k - self._last_step - 1
        self._last_step = k
        if isinstance(log, Mapping) and "time" in log:  # a served session's own clock
            t = float(np.asarray(log["time"]).reshape(-1)[0])
        else:
            t = float(info["time_first_s"]) + k / float(info["slow_rate_hz"])
        fast = log.get("fast", {}) if isinstance(log, Mapping) else {}
        row: dict[str, float | None] = {"t": t}
        measured_key = "measured" if "measured" in fast else "displacement"  # a rig's site logs "displacement"
        if "target" in fast and measured_key in fast:
            target, measured = first_dof(fast["target"]), first_dof(fast[measured_key])
            # the actuator's command x_c [m]; a rig's "command" is in the board's own units (no x_c)
            command = (first_dof(fast["command"]) if "command" in fast and info.get("command_is_displacement", True)
                       else np.full_like(target, np.nan))
            force = first_dof(fast["force"]) if "force" in fast else np.full_like(target, np.nan)
            error = measured - target
            self._sums[0] += float(np.dot(error, error))
            self._sums[1] += float(np.dot(target, target))
            start = self._fast_n
            if not info.get("steps") and start + target.size > self._fast_target.size:
                self._grow(start + target.size)
            stop = min(start + target.size, self._fast_target.size)
            self._fast_target[start:stop] = target[:stop - start]
            self._fast_measured[start:stop] = measured[:stop - start]
            self._fast_force[start:stop] = force[:stop - start]
            self._fast_n = stop
            row.update(target=target[-1], measured=measured[-1], command=command[-1], error=_peak_signed(error),
                       force=force[-1])
            self._limits(measured, command, force, error, info)
            self._loop_points(start, measured, force)
        elif "target" in fast:  # a served substructure: the target it sent, the force it received
            row.update(target=first_dof(fast["target"])[-1],
                       force=first_dof(fast["force"])[-1] if "force" in fast else math.nan)
        update = log.get("update") if isinstance(log, Mapping) else None
        names = [p["name"] for p in info.get("params") or []]
        if update is not None and names:
            theta = np.atleast_1d(np.asarray(update["estimate"], dtype=float))
            std = np.atleast_1d(np.asarray(update.get("relative_std", np.zeros_like(theta)), dtype=float))
            applied = bool(np.asarray(update.get("applied", False)))
            self._theta = theta
            for i, name in enumerate(names):
                band = 2.0 * np.abs(theta[i]) * std[i]
                row.update({f"est:{name}": theta[i], f"lo:{name}": theta[i] - band, f"hi:{name}": theta[i] + band})
            row["applied"] = 1.0 if applied else 0.0
            converged = bool(np.asarray(update.get("converged", False)))
            reasons = [] if applied else guard_reasons(info.get("guards"), theta, std, converged, t, k, names)
            self.status["update"] = {"applied": applied, "converged": converged, "held_back_by": reasons,
                                     "estimate": [_number(v) for v in theta],
                                     "relative_std": [_number(v) for v in std]}
            self.status["updates_applied"] = self.status.get("updates_applied", 0) + int(applied)
        ns = log.get("ns") if isinstance(log, Mapping) else None
        if ns is not None and "displacement" in ns:
            response = np.atleast_1d(np.asarray(ns["displacement"], dtype=float)).ravel()
            reference = info.get("reference")
            for i in range(len(info.get("response_names") or [])):
                row[f"ns:{i}"] = response[i] if i < response.size else math.nan
                row[f"ref:{i}"] = reference[k][i] if reference is not None and k < len(reference) else math.nan
        pacer = self.watch.get("pacer")
        if pacer is not None and info.get("paced"):
            self._paced(pacer, row, k)
        if k % self.stride == 0 or (event.total is not None and k == event.total - 1):
            for name, values in self.series.items():
                values.append(_number(row.get(name, math.nan)))
            if len(self.series["t"]) > MAX_POINTS:
                self._halve()
        self.status.update(step=k, total=None if event.total is None else int(event.total), t=t, t_loop=stamp)
        self._status_changed = True
        self._stepped = True

    def after_batch(self) -> None:
        """Once per batch of events (the server's tick): J2, the paced run's latency so far,
        and τ and the identified model's loop at their periods."""
        if not self._stepped or self.info is None:
            return
        self._stepped = False
        self.status["J2_percent"] = self._j2()
        self.status.update(self._every(self.clock()))
        pacer = self.watch.get("pacer")
        if pacer is not None and self.info.get("paced"):
            self._realtime(pacer)

    def _grow(self, needed: int) -> None:
        size = max(needed, 2 * self._fast_target.size)
        for name in ("_fast_target", "_fast_measured", "_fast_force"):
            grown = np.zeros(size)
            grown[:self._fast_n] = getattr(self, name)[:self._fast_n]
            setattr(self, name, grown)

    def _limits(self, measured, command, force, error, info) -> None:
        dt = 1.0 / float(info["slow_rate_hz"])
        velocity = (abs(measured[-1] - self._previous_measured) / dt if self._previous_measured is not None
                    else 0.0)
        self._previous_measured = float(measured[-1])
        now = {"stroke_m": float(np.max(np.abs(measured))), "command_m": float(np.max(np.abs(command))),
               "velocity_m_s": float(velocity), "force_N": float(np.nanmax(np.abs(force))) if force.size else 0.0,
               "tracking_error_m": float(np.max(np.abs(error)))}
        for key, value in now.items():
            if math.isfinite(value):
                self._peaks[key] = max(self._peaks.get(key, 0.0), value)
        limits = info.get("limits") or {}
        self.status["limits"] = {key: {"now": _number(now[key]), "peak": _number(self._peaks.get(key, math.nan)),
                                       "limit": limits.get("stroke_m" if key == "command_m" else key)}
                                 for key in now}

    def _loop_points(self, start: int, measured, force) -> None:
        ratio = measured.size
        per_step = min(ratio, LOOP_SAMPLES_PER_STEP)
        picks = np.unique(np.linspace(ratio - 1, 0, per_step).round().astype(int))
        for j in picks:
            index = start + int(j)
            if (index // max(1, ratio // per_step)) % self.loop_stride:
                continue
            self.loop["x"].append(_number(measured[j]))
            self.loop["f"].append(_number(force[j]))
            self.loop["model"].append(None)
            self._loop_index.append(index)
        if len(self.loop["x"]) > MAX_LOOP_POINTS:
            for key in self.loop:
                self.loop[key] = self.loop[key][::2]
            self._loop_index = self._loop_index[::2]
            self.loop_stride *= 2
            self._loop_halvings += 1
            self._loop_sent = (self._loop_sent + 1) // 2  # the sent points the halving keeps

    def _paced(self, pacer, row, k: int) -> None:
        """The latency of step ``k`` (the pacer timed it before the step event)."""
        latency, ns_share, _ = pacer.so_far()
        if len(latency) > k and len(ns_share) > k:
            row["latency_ms"], row["ns_ms"] = 1e3 * latency[k], 1e3 * ns_share[k]

    def _realtime(self, pacer) -> None:
        latency, ns_share, missed = pacer.so_far()
        n = min(len(latency), len(ns_share), len(missed))
        if n == 0:
            return
        lat = np.asarray(latency[:n], dtype=float)
        ns_s = np.asarray(ns_share[:n], dtype=float)
        self.status["realtime"] = {
            "p50_ms": float(np.percentile(lat, 50) * 1e3), "p99_ms": float(np.percentile(lat, 99) * 1e3),
            "max_ms": float(lat.max() * 1e3), "missed_deadlines": int(sum(missed[:n])),
            "ns_share_percent": float(100 * ns_s.sum() / max(lat.sum(), 1e-12)),
            "slow_step_ms": 1e3 / float(self.info["slow_rate_hz"]), "steps": n}

    def _j2(self):
        return _number(100.0 * math.sqrt(self._sums[0] / self._sums[1])) if self._sums[1] > 0 else None

    def _every(self, stamp: float, final: bool = False) -> dict:
        """τ at its period (and at the end)."""
        out = {}
        now = self.clock()
        if self._fast_n > 16 and (final or now - self._tau_at >= TAU_PERIOD_S):
            from rths_ident.metrics import fei_delay  # noqa: PLC0415

            self._tau_at = now
            first = 0 if final else max(0, self._fast_n - TAU_WINDOW_SAMPLES)
            try:
                tau = fei_delay(self._fast_target[first:self._fast_n], self._fast_measured[first:self._fast_n],
                                float(self.info["fast_rate_hz"]))
                out["tau_ms"] = _number(1e3 * tau)
                out["tau_window_s"] = None if first == 0 else TAU_WINDOW_SAMPLES / float(self.info["fast_rate_hz"])
            except (ValueError, FloatingPointError):
                pass
        return out

    def _model_loop(self, event: ModelLoop) -> None:
        """The identified model's force along the measured displacement, computed in the
        run's process (:mod:`rths_ident.live.model_loop`): drawn at the loop's points, with
        its rms force error over the samples so far."""
        if event.force is None:
            self.status["model_error"] = event.error
            self._status_changed = True
            return
        force = np.asarray(event.force, dtype=float)
        n = min(force.size, self._fast_n)
        self.loop["model"] = [_number(force[i]) if i < force.size else None for i in self._loop_index]
        measured_force = self._fast_force[:n]
        if n and np.mean(measured_force ** 2) > 0:
            self.status["model_rms_error_percent"] = _number(
                100 * np.sqrt(np.mean((force[:n] - measured_force) ** 2) / np.mean(measured_force ** 2)))
        self.status["model_theta"] = [_number(v) for v in event.theta]
        self._model_changed = self._status_changed = True

    def _halve(self) -> None:
        for name in self.series:
            self.series[name] = self.series[name][::2]
        self.stride *= 2
        self._halvings += 1
        self._sent = (self._sent + 1) // 2  # the sent points the halving keeps (the page halves its own)

    def _runs_done(self, stamp: float, event: ev.RunsDone) -> None:
        self._runs.append((stamp, int(event.done)))
        first_stamp, first_done = self._runs[0]
        rate = (60.0 * (event.done - first_done) / (stamp - first_stamp)) if stamp > first_stamp else None
        study = self.status.setdefault("studies", {}).setdefault(event.label or "study", {})
        study.update(done=int(event.done), total=int(event.total),
                     runs_per_minute=_number(rate) if rate is not None else None)
        self.status["state"] = "running"
        self._status_changed = True

    def _study_run(self, event: ev.StudyRun) -> None:
        """A study's run: the distribution of each index so far (n, min, median, max; the
        values themselves for the histogram of J2)."""
        label = event.label or "study"
        kept = self._study_values.setdefault(label, {})
        for name, value in event.values.items():
            kept.setdefault(name, []).append(float(value))
        study = self.status.setdefault("studies", {}).setdefault(label, {})
        study["J"] = {name: {"n": len(values), "min": _number(min(values)), "p50": _number(np.median(values)),
                             "max": _number(max(values)), "unit": event.units.get(name, "")}
                      for name, values in kept.items()}
        study["histogram"] = {"name": "J2", "unit": event.units.get("J2", ""),
                              "values": [_number(v) for v in kept.get("J2", [])]}
        self._status_changed = True

    def _ended(self, event: ev.RunEnded) -> None:
        if self.info is not None:
            self.status.update(self._every(self.clock(), final=True))
            pacer = self.watch.get("pacer")
            if pacer is not None and self.info.get("paced"):
                self._realtime(pacer)
        self.status.update(state="ended", how=event.how, reason=event.reason, J2_percent=self._j2())
        self._status_changed = True

    def note_stop_request(self, reason: str, accepted: bool) -> None:
        self.status["stop_requested"] = {"reason": reason, "accepted": accepted}
        self._status_changed = True

    # ------------------------------------------------------------------ frames
    def snapshot(self) -> dict:
        self.status["seq"] += 1
        return {"type": "snapshot", "info": self.info, "series": self.series, "loop": self.loop,
                "stride": self.stride, "status": self.status}

    def delta(self) -> dict | None:
        if self._reset:
            self._reset = self._model_changed = False
            self._halvings = self._loop_halvings = 0
            self._sent, self._loop_sent = len(self.series.get("t", [])), len(self.loop["x"])
            self._status_changed = False
            return self.snapshot()
        n, m = len(self.series.get("t", [])), len(self.loop["x"])
        if (n == self._sent and m == self._loop_sent and not self._status_changed and not self._model_changed
                and not self._halvings and not self._loop_halvings):
            return None
        self.status["seq"] += 1
        frame = {"type": "delta", "series": {k: v[self._sent:] for k, v in self.series.items()},
                 "loop": {"x": self.loop["x"][self._loop_sent:], "f": self.loop["f"][self._loop_sent:],
                          "model": self.loop["model"][self._loop_sent:]},
                 "status": self.status}
        if self._halvings:
            frame["halve"], self._halvings = self._halvings, 0
        if self._loop_halvings:
            frame["loop_halve"], self._loop_halvings = self._loop_halvings, 0
        if self._model_changed:
            frame["model"] = self.loop["model"]
            self._model_changed = False
        self._sent, self._loop_sent, self._status_changed = n, m, False
        return frame
