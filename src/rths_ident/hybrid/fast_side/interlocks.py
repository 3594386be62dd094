"""Interlocks: the limits a hybrid test must never cross, checked on every site and in the
step-wise loop, each one able to stop the test through the safe stop.

A test declares its interlocks once (the test file's ``[interlocks]`` table;
:class:`Interlocks`, SI units). :class:`InterlockMonitor` checks them as the test runs —
the virtual site, a rig, the OpenFresco element server and the step-wise loop all
feed it the same quantities — and returns the first :class:`Trip`: which interlock, its
value and limit, the slow step and the test time. The caller then brings the specimen
to rest (:mod:`rths_ident.hybrid.loop.safe_stop`) and says why.

=====================  ============================================================================
interlock              trips at the first sample where (per fast sample unless said)
=====================  ============================================================================
command stroke         |x_c| > ``command_stroke`` [m]
command velocity       |Δx_c|/Δt > ``command_velocity`` [m/s]
measured stroke        |x_m| > ``measured_stroke`` [m]
measured velocity      |x_m(t) − x_m(t − span)|/span > ``measured_velocity`` [m/s], span =
                       ``velocity_span`` (a difference over a few samples: one-sample differences
                       of a noisy LVDT are mostly noise)
force                  |f_m| > ``force`` [N]
tracking error         mean |x_t − x_m| over the last ``tracking_window`` s > ``tracking_error``
                       [m] (checked once the window is full)
NS divergence          the NS's next target or its logged response is not finite, or beyond
                       ``ns_displacement`` [m] (once per slow step)
identifier divergence  θ̂ not finite, θ̂ outside its physical range (``identifier_bounds``), or the
                       estimator's covariance not positive definite (once per slow step; with
                       ``identifier`` on)
deadline               the slow step took longer than ``deadline`` [s] of wall-clock time (watchdog;
                       once per slow step)
=====================  ============================================================================

An interlock at ``inf`` is off. The actuator's own latched limits (stroke, velocity,
force of the transfer system) stay what they were: a limit of the actuator model.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["Interlocks", "Trip", "InterlockMonitor", "InterlockTripped", "INTERLOCK_NAMES", "physical_bounds",
           "peak_usage"]

#: name -> (what, unit): the interlocks a trip can name
INTERLOCK_NAMES = {
    "command_stroke": ("command stroke |x_c|", "m"),
    "command_velocity": ("command velocity |dx_c/dt|", "m/s"),
    "measured_stroke": ("measured stroke |x_m|", "m"),
    "measured_velocity": ("measured velocity |dx_m/dt|", "m/s"),
    "force": ("measured force |f_m|", "N"),
    "tracking_error": ("tracking error mean |x_t − x_m|", "m"),
    "ns_divergence": ("numerical substructure |u|", "m"),
    "identifier_divergence": ("identifier", ""),
    "deadline": ("slow step wall-clock time", "s"),
}


@dataclasses.dataclass(frozen=True)
class Interlocks:
    """A test's interlocks (module doc; SI units; ``inf`` = off)."""

    command_stroke: float = math.inf  # m
    command_velocity: float = math.inf  # m/s
    measured_stroke: float = math.inf  # m
    measured_velocity: float = math.inf  # m/s
    velocity_span: float = 0.002  # s: the measured velocity's difference span
    force: float = math.inf  # N
    tracking_error: float = math.inf  # m: mean |x_t − x_m| over the window
    tracking_window: float = 0.1  # s
    ns_displacement: float = math.inf  # m
    identifier: bool = True  # non-finite / out-of-range θ̂, covariance not positive definite
    identifier_range: float = 10.0  # θ̂ within [g/F, F·g] of the initial guess g (and the model's declared range)
    deadline: float = math.inf  # s of wall-clock time per slow step

    def __post_init__(self):
        for name in ("command_stroke", "command_velocity", "measured_stroke", "measured_velocity", "force",
                     "tracking_error", "ns_displacement", "deadline"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
                raise ParameterError(f"interlocks.{name} must be a number > 0 (inf: off); got {value!r}")
        for name in ("velocity_span", "tracking_window"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ParameterError(f"interlocks.{name} must be a finite time > 0 s; got {value!r}")
        if not (isinstance(self.identifier_range, (int, float)) and self.identifier_range > 1):
            raise ParameterError(f"interlocks.identifier_range must be a factor > 1; got {self.identifier_range!r}")

    def site_part(self) -> "Interlocks":
        """What a site checks on its own readings (strokes, velocities, force, tracking);
        the loop's interlocks off."""
        return dataclasses.replace(self, ns_displacement=math.inf, identifier=False, deadline=math.inf)

    def loop_part(self) -> "Interlocks":
        """What the loop checks beside a site that checks its own readings (the NS, the
        identifier, the watchdog); the site's interlocks off."""
        return dataclasses.replace(self, command_stroke=math.inf, command_velocity=math.inf,
                                   measured_stroke=math.inf, measured_velocity=math.inf, force=math.inf,
                                   tracking_error=math.inf)

    def describe(self) -> str:
        """The interlocks that are on, one line."""
        on = []
        for name, (what, unit) in INTERLOCK_NAMES.items():
            key = {"ns_divergence": "ns_displacement"}.get(name, name)
            value = getattr(self, key, None)
            if name == "identifier_divergence":
                if self.identifier:
                    on.append(f"identifier (finite, within ×{self.identifier_range:g} of the guess, P ≻ 0)")
            elif name == "ns_divergence":
                on.append("NS finite" + (f" and |u| ≤ {value:g} m" if math.isfinite(value) else ""))
            elif math.isfinite(value):
                on.append(f"{name.replace('_', ' ')} {value:g} {unit}")
        return ", ".join(on) if on else "none"


@dataclasses.dataclass(frozen=True)
class Trip:
    """An interlock that fired: ``name`` (a key of :data:`INTERLOCK_NAMES`), its
    ``value`` and ``limit`` (SI, the unit in :data:`INTERLOCK_NAMES`), the slow step
    ``step`` and test time ``time`` [s] where it fired, and ``detail`` (what exactly)."""

    name: str
    value: float
    limit: float
    step: int
    time: float
    detail: str = ""

    @property
    def unit(self) -> str:
        return INTERLOCK_NAMES[self.name][1]

    def message(self) -> str:
        """One sentence: which interlock, its value and limit, the slow step and the time."""
        unit = f" {self.unit}" if self.unit else ""
        where = f"at slow step {self.step} (t = {self.time:.3f} s)"
        limit = f"{self.limit:.6g}{unit}" if math.isfinite(self.limit) else ""
        if not math.isfinite(self.value):
            what = self.detail or "not finite"  # what is not finite (or, a covariance, not positive definite)
            return f"interlock {self.name} tripped: {what}" + (f" (limit {limit})" if limit else "") + f" {where}"
        what = f"{self.detail}: " if self.detail else ""
        if not limit:
            return f"interlock {self.name} tripped: {what}{self.value:.6g}{unit} {where}"
        return f"interlock {self.name} tripped: {what}{self.value:.6g}{unit} beyond the limit {limit} {where}"

    def as_dict(self) -> dict:
        return {"interlock": self.name, "value": float(self.value), "limit": float(self.limit), "unit": self.unit,
                "step": int(self.step), "time_s": float(self.time), "detail": self.detail}


class InterlockTripped(RuntimeError):
    """Raised by a site that checks its own interlocks (the OpenFresco element server's
    site); ``trip`` is the :class:`Trip`."""

    def __init__(self, trip: Trip, stopped: str = ""):
        super().__init__(trip.message() + (f"; {stopped}" if stopped else ""))
        self.trip = trip


def physical_bounds(model_params_class, names, initial_values, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of each identified parameter: the model's declared range of the
    field (``params_dataclass`` metadata) intersected with [g/F, F·g] around the initial
    guess g (its sign kept; F = ``factor``)."""
    fields = {f.name: f for f in dataclasses.fields(model_params_class)} if model_params_class is not None else {}
    lower, upper = [], []
    for name, g in zip(names, np.asarray(initial_values, dtype=float)):
        meta = fields[name].metadata if name in fields else {}
        low = meta.get("low", -math.inf)
        high = meta.get("high", math.inf)
        low = -math.inf if low is None else float(low)
        high = math.inf if high is None else float(high)
        if g > 0:
            low, high = max(low, g / factor), min(high, g * factor)
        elif g < 0:
            low, high = max(low, g * factor), min(high, g / factor)
        lower.append(low)
        upper.append(high)
    return np.array(lower), np.array(upper)


_FLOAT64 = np.dtype(np.float64)


def _floats(values) -> list:
    """``values`` flattened to Python floats (the float64 values exactly); a float64
    NumPy array (a site's or a substructure's log) without a conversion first."""
    if type(values) is np.ndarray and values.dtype is _FLOAT64:
        return values.ravel().tolist()
    return np.asarray(values, dtype=float).ravel().tolist()


def _all_within(values: list, limit: float) -> bool:
    """Every value finite and |value| ≤ ``limit`` (Python floats; none: True). A screen:
    True says exactly that; False may also be said of finite values within the limit
    whose sum overflows (magnitudes near 1e308, only when the limit is off), and the
    caller's NumPy path then decides."""
    return not values or (math.isfinite(sum(values)) and max(values) <= limit and -limit <= min(values))


def _is_true(flag) -> bool:
    """``bool(np.all(flag))`` — a Python bool or a 0-d NumPy boolean without the
    reduction."""
    if flag is True or flag is False:
        return flag
    if type(flag) is np.ndarray and flag.ndim == 0:
        return bool(flag)
    return bool(np.all(np.asarray(flag)))


def _first_over(values: np.ndarray, limit: float) -> int | None:
    """Index of the first value above ``limit`` (or not finite), None if there is none."""
    over = np.flatnonzero(~np.isfinite(values) | (values > limit))
    return int(over[0]) if over.size else None


class InterlockMonitor:
    """Checks :class:`Interlocks` as a test runs (module doc); one monitor per run.

    interlocks : the test's :class:`Interlocks`.
    dt_slow : the slow step Δt_n [s] (test time of step k is (k + 1)·Δt_n + ``time_offset``).
    identifier_bounds : (lower, upper) physical range of θ̂ (:func:`physical_bounds`),
        None: only finiteness and the covariance are checked.
    samples_per_step : fast samples per slow step in the site's log (1 for a rig).
    """

    def __init__(self, interlocks: Interlocks, dt_slow: float, identifier_bounds=None, samples_per_step: int = 1,
                 time_offset: float = 0.0):
        if not (np.isfinite(dt_slow) and dt_slow > 0):
            raise ParameterError(f"InterlockMonitor.dt_slow must be a slow step > 0 s; got {dt_slow!r}")
        self.interlocks = interlocks
        self.dt_slow = float(dt_slow)
        self.samples_per_step = int(samples_per_step)
        self.dt_sample = self.dt_slow / self.samples_per_step
        self.time_offset = float(time_offset)
        self.bounds = None if identifier_bounds is None else tuple(np.asarray(b, dtype=float) for b in identifier_bounds)
        self._bounds_lists = None if self.bounds is None else tuple(b.tolist() for b in self.bounds)
        self._window = max(1, int(round(interlocks.tracking_window / self.dt_sample)))
        self._errors = np.zeros(0)  # the last window − 1 errors |x_t − x_m|
        self._span = max(1, int(round(interlocks.velocity_span / self.dt_sample)))
        self._measured_tail: list = []  # the last span measured samples (Python floats)
        self._last_command: float | None = None
        self._now: float | None = None  # the test time a site gave with its log
        self.trip: Trip | None = None

    def time_of(self, step: int) -> float:
        return self.time_offset + (step + 1) * self.dt_slow

    def _trip(self, name: str, value: float, limit: float, step: int, detail: str = "") -> Trip:
        time = self._now if self._now is not None else self.time_of(step)
        self.trip = Trip(name, float(value), float(limit), int(step), time, detail)
        return self.trip

    # ------------------------------------------------------------------ the site's log
    def check_site_log(self, log: dict, step: int, time: float | None = None) -> Trip | None:
        """One slow step of a site's log (``command``, ``measured``, ``target``, ``force``
        per sample; any may be missing, e.g. a rig logs no command in metres). ``time``:
        the test time of the step's end [s] when the site knows it (default from ``step``)."""
        if self._clear_site_log(log):
            return None
        self._now = time
        try:
            return self._check_site_log(log, step)
        finally:
            self._now = None

    def _clear_site_log(self, log) -> bool:
        """Whether no interlock trips on this step's log, found in plain Python floats (a
        few samples per step: a fraction of the NumPy path's cost); when True the
        monitor's state advances exactly as :meth:`_check_site_log` advances it. False
        says nothing: that path then decides (and reports where and what). Every test
        here is the NumPy path's, sample by sample, in the same float64 operations; a
        tracking-error interlock that is on always takes the NumPy path."""
        lim = self.interlocks
        if math.isfinite(lim.tracking_error) and "target" in log and "measured" in log:
            return False
        command = _floats(log["command"]) if "command" in log else None
        measured = _floats(log["measured"]) if "measured" in log else None
        force = _floats(log["force"]) if "force" in log else None
        dt = self.dt_sample
        last_command = tail = None
        if command is not None:
            if not command or not _all_within(command, lim.command_stroke):
                return False
            if math.isfinite(lim.command_velocity):
                limit, previous = lim.command_velocity, command[0] if self._last_command is None else self._last_command
                for value in command:
                    if not abs(value - previous) / dt <= limit:
                        return False
                    previous = value
            last_command = command[-1]
        if measured is not None:
            if not measured or not _all_within(measured, lim.measured_stroke):
                return False
            if math.isfinite(lim.measured_velocity):
                history, span = self._measured_tail + measured, self._span
                limit, interval = lim.measured_velocity, span * dt
                for i in range(span, len(history)):
                    if not abs(history[i] - history[i - span]) / interval <= limit:
                        return False
                tail = history[-span:]
        if force is not None and not (force and _all_within(force, lim.force)):
            return False
        if last_command is not None:
            self._last_command = last_command
        if tail is not None:
            self._measured_tail = tail
        return True

    def seek(self, history: dict) -> None:
        """The monitor as if :meth:`check_site_log` had found no trip in ``history``
        (``command``, ``measured``, ``target`` per sample, 1-D, the run's samples so far):
        the state a step's check reads is the last command, the last ``velocity_span`` of
        measured samples and the tracking window's last errors."""
        command, measured, target = (np.asarray(history[key], dtype=float).reshape(-1) if key in history else None
                                     for key in ("command", "measured", "target"))
        if command is not None and command.size:
            self._last_command = float(command[-1])
        if measured is not None:
            self._measured_tail = measured[-self._span:].tolist()
            if target is not None:
                errors = np.abs(target - measured)
                self._errors = errors[-(self._window - 1):] if self._window > 1 else errors[:0]

    def first_suspect_sample(self, samples: dict) -> int | None:
        """The first sample of a whole run's site log (``command``, ``measured``,
        ``target``, ``force`` per sample, 1-D) at which :meth:`check_site_log`, fed it
        step by step, could trip — found on the whole arrays at once, a little early
        rather than late (every limit × (1 − 1e-9): the moving sums round differently),
        so that the exact check may start at its step after :meth:`seek`; None: no sample
        can trip."""
        lim, shrink = self.interlocks, 1.0 - 1e-9
        firsts = []

        def first(flags, offset=0):
            hit = np.flatnonzero(flags)
            if hit.size:
                firsts.append(int(hit[0]) + offset)

        command, measured, target, force = (np.asarray(samples[key], dtype=float).reshape(-1) if key in samples
                                            else None for key in ("command", "measured", "target", "force"))
        for values, limit in ((command, lim.command_stroke), (measured, lim.measured_stroke), (force, lim.force)):
            if values is not None:
                first(~np.isfinite(values) | (np.abs(values) > limit * shrink))
        if command is not None and command.size and math.isfinite(lim.command_velocity):
            first(np.abs(np.diff(command, prepend=command[0])) / self.dt_sample > lim.command_velocity * shrink)
        if measured is not None and math.isfinite(lim.measured_velocity) and measured.size > self._span:
            span = self._span
            speed = np.abs(measured[span:] - measured[:-span]) / (span * self.dt_sample)
            first(~np.isfinite(speed) | (speed > lim.measured_velocity * shrink), span)
        if target is not None and measured is not None and math.isfinite(lim.tracking_error):
            n = self._window
            errors = np.abs(target - measured)
            first(~np.isfinite(errors))
            if errors.size >= n:
                sums = np.cumsum(np.concatenate([[0.0], np.where(np.isfinite(errors), errors, 0.0)]))
                first((sums[n:] - sums[:-n]) / n > lim.tracking_error * shrink, n - 1)
        return min(firsts) if firsts else None

    def _check_site_log(self, log: dict, step: int) -> Trip | None:
        lim = self.interlocks

        def samples(key):
            if key not in log:
                return None
            return np.asarray(log[key], dtype=float).reshape(-1)

        command, measured, target, force = samples("command"), samples("measured"), samples("target"), samples("force")
        if command is not None:
            trip = self._peak("command_stroke", command, lim.command_stroke, step)
            if trip:
                return trip
            if math.isfinite(lim.command_velocity):
                previous = command[0] if self._last_command is None else self._last_command
                speed = np.abs(np.diff(np.concatenate([[previous], command]))) / self.dt_sample
                i = _first_over(speed, lim.command_velocity)
                if i is not None:
                    return self._trip("command_velocity", speed[i], lim.command_velocity, step,
                                      f"fast sample {i} of the step")
            self._last_command = float(command[-1])
        if measured is not None:
            trip = self._peak("measured_stroke", measured, lim.measured_stroke, step)
            if trip:
                return trip
            if math.isfinite(lim.measured_velocity):
                history = np.concatenate([self._measured_tail, measured])
                if history.size > self._span:
                    speed = np.abs(history[self._span:] - history[:-self._span]) / (self._span * self.dt_sample)
                    i = _first_over(speed, lim.measured_velocity)
                    if i is not None:
                        return self._trip("measured_velocity", speed[i], lim.measured_velocity, step,
                                          f"over {self._span} samples")
                self._measured_tail = history[-self._span:].tolist()
        if force is not None:
            trip = self._peak("force", force, lim.force, step)
            if trip:
                return trip
        if target is not None and measured is not None and math.isfinite(lim.tracking_error):
            # the window's mean after every new sample: a moving sum over the kept tail
            errors = np.concatenate([self._errors, np.abs(target - measured)])
            n = self._window
            if errors.size >= n:
                sums = np.cumsum(np.concatenate([[0.0], errors]))
                means = (sums[n:] - sums[:-n]) / n
                i = _first_over(means, lim.tracking_error)
                if i is not None:
                    return self._trip("tracking_error", means[i], lim.tracking_error, step,
                                      f"mean over {lim.tracking_window:g} s")
            self._errors = errors[-(n - 1):] if n > 1 else errors[:0]
        return None

    def _peak(self, name, values, limit, step) -> Trip | None:
        magnitude = np.abs(values)
        if not np.all(np.isfinite(magnitude)):
            return self._trip(name, math.nan, limit, step, "not finite")
        i = _first_over(magnitude, limit)
        if i is not None:
            return self._trip(name, values[i], limit, step, f"sample {i} of the step" if values.size > 1 else "")
        return None

    # -------------------------------------------------------------- NS, identifier, time
    def check_ns(self, next_target, ns_log: dict | None, step: int) -> Trip | None:
        """The NS's next target and its logged response (displacements)."""
        bound = self.interlocks.ns_displacement
        if _all_within(_floats(next_target), bound) and not (
                isinstance(ns_log, dict) and "displacement" in ns_log
                and not _all_within(_floats(ns_log["displacement"]), bound)):
            return None  # all finite and within the bound (Python floats; below, where and what)
        arrays = [("next target", np.asarray(next_target, dtype=float).reshape(-1))]
        if isinstance(ns_log, dict) and "displacement" in ns_log:
            arrays.append(("response", np.asarray(ns_log["displacement"], dtype=float).reshape(-1)))
        for what, values in arrays:
            if not np.all(np.isfinite(values)):
                return self._trip("ns_divergence", math.nan, bound, step, f"{what} not finite")
            if math.isfinite(bound) and values.size:
                i = int(np.argmax(np.abs(values)))
                if abs(values[i]) > bound:
                    return self._trip("ns_divergence", values[i], bound, step, f"{what} entry {i}")
        return None

    def ns_not_finite(self, step: int, detail: str) -> Trip:
        """The NS-divergence trip for a non-finite value the NS sent (a remote NS whose
        transport refused it before it reached the loop)."""
        return self._trip("ns_divergence", math.nan, self.interlocks.ns_displacement, step,
                          f"the NS sent a value that is not finite ({detail})")

    def check_estimate(self, estimate, step: int, names: tuple = ()) -> Trip | None:
        """The online identifier's estimate (:class:`~rths_ident.protocols.Estimate`)."""
        if estimate is None or not self.interlocks.identifier:
            return None
        values = _floats(estimate.theta)
        if not values:
            return None
        if self._estimate_clear(values, getattr(estimate, "covariance_ok", True)):
            return None
        theta = np.asarray(estimate.theta, dtype=float).reshape(-1)
        label = lambda i: names[i] if i < len(names) else f"θ[{i}]"  # noqa: E731
        bad = np.flatnonzero(~np.isfinite(theta))
        if bad.size:
            return self._trip("identifier_divergence", theta[bad[0]], math.inf, step,
                              f"estimate of {label(int(bad[0]))} not finite")
        if not bool(np.all(np.asarray(getattr(estimate, "covariance_ok", True)))):
            return self._trip("identifier_divergence", math.nan, math.inf, step,
                              "covariance not positive definite")
        if self.bounds is not None:
            lower, upper = self.bounds
            for i, value in enumerate(theta):
                if value < lower[i]:
                    return self._trip("identifier_divergence", value, lower[i], step,
                                      f"{label(i)} below its physical range")
                if value > upper[i]:
                    return self._trip("identifier_divergence", value, upper[i], step,
                                      f"{label(i)} above its physical range")
        return None

    def _estimate_clear(self, theta: list, covariance_ok) -> bool:
        """Whether :meth:`check_estimate` finds nothing (Python floats): θ̂ finite, the
        covariance positive definite, θ̂ within its physical range. A screen: False may
        also be said of a finite θ̂ whose sum overflows (the NumPy path then decides)."""
        if not math.isfinite(sum(theta)):
            return False
        if not _is_true(covariance_ok):
            return False
        if self._bounds_lists is not None:
            lower, upper = self._bounds_lists
            return len(lower) == len(theta) and all(low <= value <= high
                                                   for value, low, high in zip(theta, lower, upper))
        return True

    def check_deadline(self, seconds: float, step: int) -> Trip | None:
        """The watchdog: the slow step's wall-clock time [s]."""
        limit = self.interlocks.deadline
        if math.isfinite(limit) and seconds > limit:
            return self._trip("deadline", seconds, limit, step, "wall-clock time of the step")
        return None


def peak_usage(interlocks: Interlocks, fast_log: dict, dt_sample: float, ns_displacement=None) -> dict:
    """A whole run's peak of each interlock's quantity against its limit, for the
    interlocks that are on (a finite limit): ``{name: {"peak", "limit", "unit", "usage"}}``
    with usage = peak / limit (≥ 1: it trips). ``fast_log``: the run's ``command``,
    ``measured``, ``target``, ``force`` (any shape, time in order); ``dt_sample`` [s]
    between samples; ``ns_displacement``: the NS's logged displacements (the NS bound).
    The quantities are the monitor's (module doc)."""
    def series(key):
        return np.asarray(fast_log[key], dtype=float).reshape(-1) if key in fast_log else None

    command, measured, target, force = (series(k) for k in ("command", "measured", "target", "force"))
    peaks = {}
    if command is not None:
        peaks["command_stroke"] = np.abs(command)
        peaks["command_velocity"] = np.abs(np.diff(command)) / dt_sample
    if measured is not None:
        peaks["measured_stroke"] = np.abs(measured)
        span = max(1, int(round(interlocks.velocity_span / dt_sample)))
        peaks["measured_velocity"] = np.abs(measured[span:] - measured[:-span]) / (span * dt_sample)
    if force is not None:
        peaks["force"] = np.abs(force)
    if target is not None and measured is not None:
        n = max(1, int(round(interlocks.tracking_window / dt_sample)))
        peaks["tracking_error"] = np.convolve(np.abs(target - measured), np.ones(n) / n, "valid")
    if ns_displacement is not None:
        peaks["ns_divergence"] = np.abs(np.asarray(ns_displacement, dtype=float).reshape(-1))
    usage = {}
    for name, values in peaks.items():
        limit = float(getattr(interlocks, "ns_displacement" if name == "ns_divergence" else name))
        if not math.isfinite(limit) or values.size == 0:
            continue
        peak = float(np.max(values)) if np.all(np.isfinite(values)) else math.inf
        usage[name] = {"peak": peak, "limit": limit, "unit": INTERLOCK_NAMES[name][1], "usage": peak / limit}
    return usage
