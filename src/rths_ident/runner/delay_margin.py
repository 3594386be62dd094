"""The pre-test check's **delay margin** (``rths-ident check TEST --predict``): the extra
loop delay, the compensator gain error, the actuator's parameter error and the
specimen's stiffness error at which the test's virtual twin goes unstable or trips an
interlock.

What is swept. Between the compensation and the transfer system the twin gets the
stage of :mod:`rths_ident.hybrid.fast_side.command_delay`: the command held back by an
extra delay τ [s] (what a slower servo controller, a longer cable or a network hop adds
to the loop) and the compensator's correction scaled by s [-] (s = 1.2: the
compensator's gain 20 % too high). Then the parameter errors of
:mod:`rths_ident.hybrid.fast_side.parameter_errors`: the actuator's ``actuator_field``
(default the servo-valve flow gain K_q) × a [-], and the specimen's stiffness-like fields
× s_k [-]. Each quantity is swept alone, the others at their nominal values (τ = 0,
s = a = s_k = 1); the test file, the compensator's design, the identifier and the
numerical substructure stay as they are.

"Unstable", the one definition. A twin **fails** at a swept value when, over the
sweep's window (the first ``window`` seconds of the record), the actuator's own stroke,
velocity or force limit is exceeded (reported as the interlock of that quantity; the
step-wise loop stops there), any of the test's interlocks trips
(:class:`~rths_ident.hybrid.fast_side.interlocks.InterlockMonitor`: strokes,
velocities, force, NS divergence, identifier divergence; a value that is not
finite trips the interlock it reaches first) or the **tracking error** — the mean
|x_t − x_m| over the interlocks' tracking window — exceeds the margin's tracking limit:
the test's ``tracking_error`` interlock, or, when the test declares none,
``tracking_share`` (default 20 %) of the peak |x_t| of the nominal twin. A loop that
oscillates about its target trips the tracking limit long before the strokes.

The **margin** of a quantity is the smallest swept change at which the twin fails: τ_m
[s] for the delay (the twin runs at every τ swept below τ_m), and s_low, s_high for
the correction gain (it runs at every s swept between them; not swept without a
compensator, where s changes nothing); likewise a_low, a_high (not swept with the
ideal transfer system) and s_k low, s_k high (not swept for a specimen model without a
stiffness field). The check reports each with the interlock that ends it; **no-go**
when τ_m < ``min_delay_margin`` (default 5 ms): the other margins are reported, not
judged.

How it is computed (:func:`predict_margins`). The fused loop of the twin with the
stage and the parameter errors (the actuator's exact discretisation rebuilt from the
changed actuator inside the batch, JAX's ``expm``), compiled once with ``jax.vmap`` over
the four swept parameters: one call runs
``points`` values of it. A first call on an even grid from the nominal value brackets the margin (the first
failing value, the last running one below it); each further call runs ``points`` values
evenly inside the bracket, which shrinks it by ``points + 1``, until it is narrower
than ``tolerance`` of the margin. The margin reported is the bracket's upper end (the
first failing value found).

The independent number (:func:`stepwise_margin`, :func:`stepwise_delay_margin`): the
step-wise engine on the virtual site (one slow step per compiled call, its interlocks
checked by the loop's monitor as in a real test, the safe stop on a trip) with the same
stage at a fixed τ, or given the changed parameters (``VirtualSite.with_params``, the
discretisation from SciPy's ``expm``), bisected between the nominal value and the
sweep's end — what a lab would find by trial on the rig, with no batch and no twin.
tests/runner/test_delay_margin.py and docs/scripts/delay_margin_table.py
compare the two.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import threading
import time as _time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import exported_programs
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side.command_delay import delayed_compensation
from rths_ident.hybrid.fast_side.parameter_errors import ACTUATOR_FIELDS, stiffness_fields, with_parameter_errors
from rths_ident.hybrid.fast_side.fast_chunk import fast_params, initial_fast_state
from rths_ident.hybrid.fast_side.interlocks import Trip
from rths_ident.hybrid.fast_side.virtual_site import VirtualSite
from rths_ident.hybrid.loop.assembled import (
    HybridTest,
    first_trip,
    initial_loop_state,
    run_loop,
    slow_step_functions,
)
from rths_ident.hybrid.loop.engine import LoopAborted, run_fused

__all__ = ["MarginSweep", "MarginKey", "SWEEPS", "swept", "margin_test", "start_compiling", "predict_margins",
           "stepwise_trip",
           "stepwise_margin", "stepwise_delay_margin", "actuator_limit_trip", "margin_lines"]


@dataclasses.dataclass(frozen=True)
class MarginSweep:
    """What the delay-margin sweep runs (module doc; SI units).

    max_delay: the largest extra delay swept [s]; min_delay_margin: no-go below this
    delay margin [s]; window: seconds of the record each twin runs [s] (None: all of
    it); gain_low, gain_high: the correction gains swept below and above 1 [-];
    points: swept values per compiled batch; tolerance: the bracket's width at which the
    refinement stops, as a share of the margin [-]; tracking_share: the tracking limit
    as a share of the nominal twin's peak |x_t| when the test declares none [-];
    actuator_field: the actuator's field an actuator error scales
    (:data:`~rths_ident.hybrid.fast_side.parameter_errors.ACTUATOR_FIELDS`);
    actuator_low, actuator_high: its factors swept below and above 1 [-];
    specimen_low, specimen_high: the specimen's stiffness factors swept below and above 1 [-]."""

    max_delay: float = 0.05
    min_delay_margin: float = 0.005
    window: float | None = 10.0
    gain_low: float = 0.0
    gain_high: float = 3.0
    points: int = 8
    tolerance: float = 0.04
    tracking_share: float = 0.2
    actuator_field: str = "valve_flow_gain"
    actuator_low: float = 0.25
    actuator_high: float = 4.0
    specimen_low: float = 0.25
    specimen_high: float = 4.0

    def __post_init__(self):
        def bad(name, value, expected):
            raise ParameterError(f"margin.{name} = {value!r}: expected {expected}")

        def number(value):
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

        if not (number(self.max_delay) and self.max_delay > 0):
            bad("max_delay", self.max_delay, "a delay > 0 s (the largest extra loop delay swept)")
        if not (number(self.min_delay_margin) and 0 <= self.min_delay_margin < self.max_delay):
            bad("min_delay_margin", self.min_delay_margin, f"a delay in [0, max_delay = {self.max_delay:g}) s")
        if self.window is not None and not (number(self.window) and self.window > 0):
            bad("window", self.window, "a duration > 0 s, or None for the whole record")
        if not (number(self.gain_low) and 0 <= self.gain_low < 1):
            bad("gain_low", self.gain_low, "a correction gain in [0, 1)")
        if not (number(self.gain_high) and self.gain_high > 1):
            bad("gain_high", self.gain_high, "a correction gain > 1")
        if not (isinstance(self.points, (int, np.integer)) and not isinstance(self.points, bool)
                and 2 <= self.points <= 64):
            bad("points", self.points, "a whole number of swept values per batch in 2 … 64")
        if not (number(self.tolerance) and 0 < self.tolerance < 1):
            bad("tolerance", self.tolerance, "a share in (0, 1)")
        if not (number(self.tracking_share) and self.tracking_share > 0):
            bad("tracking_share", self.tracking_share, "a share > 0 of the nominal peak target")
        if self.actuator_field not in ACTUATOR_FIELDS:
            bad("actuator_field", self.actuator_field, f"a field of the Carrion–Spencer actuator: "
                                                       f"{' | '.join(ACTUATOR_FIELDS)}")
        for name in ("actuator_low", "specimen_low"):
            if not (number(getattr(self, name)) and 0 < getattr(self, name) < 1):
                bad(name, getattr(self, name), "a factor in (0, 1)")
        for name in ("actuator_high", "specimen_high"):
            if not (number(getattr(self, name)) and 1 < getattr(self, name) <= 100):
                bad(name, getattr(self, name), "a factor in (1, 100]")


class MarginKey(NamedTuple):
    """The compiled-program key of a twin with the delay stage (a test key, the slow
    steps it runs, the delay stage's buffer, the actuator field an actuator error scales)."""

    test_key: object
    steps: int
    max_delay: float
    actuator_field: str = "valve_flow_gain"


def margin_test(test: HybridTest, sweep: MarginSweep, tracking_limit: float = math.inf) -> HybridTest:
    """``test`` over the sweep's window with the delay stage (τ = 0, s = 1) between its
    compensation and its transfer system, and the margin's tracking limit [m]: the
    test's own ``tracking_error`` interlock, or ``tracking_limit`` when it declares none."""
    steps = len(test.time_slow)
    if sweep.window is not None:
        steps = min(steps, max(1, int(round(sweep.window * test.slow_rate))))
    side = test.fast_side
    side = side._replace(compensation=delayed_compensation(side.compensation, sweep.max_delay, side.fast_rate))
    declared = test.interlocks.tracking_error
    interlocks = dataclasses.replace(test.interlocks,
                                     tracking_error=declared if math.isfinite(declared) else tracking_limit)
    return test._replace(key=MarginKey(test.key, steps, float(sweep.max_delay), sweep.actuator_field),
                         fast_side=side,
                         time_slow=np.asarray(test.time_slow)[:steps],
                         ground_accel=np.asarray(test.ground_accel)[:steps], interlocks=interlocks)


def _with_stage(fp: dict, delay, gain) -> dict:
    return dict(fp, compensation=fp["compensation"]._replace(delay=delay, correction_gain=gain))


_BATCHES: dict = {}  # the batched fused twins by key
_SITES: dict = {}  # the step-wise twins' virtual sites by key


#: the fast parameters a parameter error changes, one set per twin of a batch
#: (:func:`~rths_ident.hybrid.fast_side.parameter_errors.with_parameter_errors`)
_LANE_PARAMS = ("actuator", "actuator_discretisation", "specimen")


def _lanes(test: HybridTest, fp: dict, actuator_scales, specimen_scales) -> dict:
    """The parameters of each twin of a batch that its errors change (:data:`_LANE_PARAMS`)
    and its specimen's initial state, stacked along a leading axis: the actuator's field
    × a and the specimen's stiffnesses × s_k, the actuator's discretisation rebuilt with
    SciPy's ``expm`` (as the step-wise loop's), computed here rather than in the
    compiled batch — JAX's ``expm`` inside it doubled the batch's compilation."""
    side = test.fast_side
    lanes = []
    for actuator_scale, specimen_scale in zip(actuator_scales, specimen_scales):
        params = with_parameter_errors(side, fp, test.key.actuator_field, float(actuator_scale),
                                       float(specimen_scale), traced=False)
        lane = {name: params[name] for name in _LANE_PARAMS if params.get(name) is not None}
        lane["specimen_state"] = side.specimen_model.init(params["specimen"])
        lanes.append(lane)
    return jax.tree_util.tree_map(lambda *values: np.stack([np.asarray(v) for v in values]), *lanes)


def _batched_runner(test: HybridTest, fp: dict, initial, ground_accel, points: int,
                    background: bool = False) -> concurrent.futures.Future:
    """The future of ``(fast params, initial, ground accel, delays (B,), gains (B,), lanes)
    -> logs with a leading batch axis`` (the fast log's interlock channels, the NS's
    displacement, the update log): the fused loop vmapped over the stage's parameters and
    over the parameters the errors change (:func:`_lanes`: ``B`` = ``points`` of each),
    compiled once per key and batch size (kept between processes by
    :mod:`rths_ident.exported_programs` when the test's key is a configuration of this
    package). Traced and lowered here; compiled here too, or with ``background`` on a
    worker thread (XLA's compilation releases the interpreter: the caller goes on)."""
    cache_key = (test.key, int(points))
    if cache_key not in _BATCHES:
        functions = slow_step_functions(test)

        def run(fp, initial, ag, delays, gains, lanes):
            def one(delay, gain, lane):
                params = dict(_with_stage(fp, delay, gain), **{k: v for k, v in lane.items() if k != "specimen_state"})
                fast = dict(initial.fast_state)
                fast["actuator"] = fast["actuator"]._replace(specimen_state=lane["specimen_state"])
                _, logs = run_fused(functions, params, initial._replace(fast_state=fast), ag)
                kept = {"fast": {k: logs["fast"][k] for k in _FAST_CHANNELS if k in logs["fast"]}}
                if "displacement" in logs.get("ns", {}):
                    kept["ns"] = {"displacement": logs["ns"]["displacement"]}
                if logs.get("update") is not None:
                    kept["update"] = logs["update"]
                return kept
            return jax.vmap(one)(delays, gains, lanes)

        batch = jax.ShapeDtypeStruct((int(points),), jnp.float64)
        ones = np.ones(int(points))
        lanes = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), _lanes(test, fp, ones, ones))
        # stored only when the twin's own test key is a configuration of this package
        stored_key = test.key if exported_programs.package_key(test.key.test_key) is not None else None
        prepared = exported_programs.prepare_program(
            "delay-margin-batch", stored_key, run,
            (fp, initial, ground_accel, batch, batch, lanes), digest_arrays=(np.asarray(ground_accel),))
        future = _BATCHES[cache_key] = concurrent.futures.Future()
        if background:  # a daemon: a check whose twin trips as it is does not wait for it at exit
            threading.Thread(target=_compile_into, args=(prepared, future), name="delay-margin-compile",
                             daemon=True).start()
        else:
            _compile_into(prepared, future)
    return _BATCHES[cache_key]


def _compile_into(prepared: exported_programs.PreparedProgram, future: concurrent.futures.Future) -> None:
    """XLA's compilation of ``prepared`` as ``future``'s result (or its error)."""
    try:
        future.set_result(prepared.compile())
    except BaseException as error:  # noqa: BLE001  (handed to whoever waits for the program)
        future.set_exception(error)


def start_compiling(test: HybridTest, variant: str, sweep: MarginSweep) -> None:
    """Trace the margin's batched twin of ``test`` now and compile it on a worker thread,
    so that :func:`predict_margins` finds it compiled (or compiling) later: the pre-test
    check runs the nominal twin meanwhile. The program does not depend on the tracking
    limit (the trips are read from its logs afterwards)."""
    twin = margin_test(test, sweep)
    _batched_runner(twin, fast_params(twin.fast_side), initial_loop_state(twin, variant),
                    jax.device_put(np.asarray(twin.ground_accel)), sweep.points, background=True)


#: the fast log's channels the interlock monitor reads
_FAST_CHANNELS = ("command", "measured", "target", "force", "slow_target", "limit")

#: the interlock an actuator's own limit (its latched limit code's bits) stands for
_ACTUATOR_LIMITS = ((act.LIMIT_STROKE, "measured_stroke", "stroke_limit"),
                    (act.LIMIT_VELOCITY, "measured_velocity", "velocity_limit"),
                    (act.LIMIT_FORCE, "force", "force_limit"))


def actuator_limit_trip(test: HybridTest, limit_codes, first_step: int = 0):
    """The actuator's own limit (stroke, velocity, force of its parameters) as a
    :class:`~rths_ident.hybrid.fast_side.interlocks.Trip` at the first slow step whose
    fast log's limit code (``limit_codes`` (steps, fast samples)) is set, or None: a
    failure like an interlock's — the step-wise loop stops there."""
    codes = np.asarray(limit_codes).reshape(len(limit_codes), -1)
    hit = np.flatnonzero(np.any(codes != 0, axis=1))
    if hit.size == 0:
        return None
    step = int(hit[0])
    code = int(codes[step][codes[step] != 0][0])
    for bit, name, field in _ACTUATOR_LIMITS:
        if code & bit:
            limit = float(getattr(test.fast_side.actuator, field, math.nan))
            return Trip(name, math.nan, limit, first_step + step, (first_step + step) / test.slow_rate,
                        f"the actuator's own {field.split('_')[0]} limit")
    return None


def _first_failure(test: HybridTest, logs: dict):
    """The first trip of a twin's logs (:func:`first_trip`), or the actuator's own limit
    (:func:`actuator_limit_trip`) when it comes at an earlier slow step."""
    trip = first_trip(test, logs)
    limit = actuator_limit_trip(test, logs["fast"]["limit"]) if "limit" in logs["fast"] else None
    if limit is not None and (trip is None or limit.step < trip.step):
        return limit
    return trip


class _Twins:
    """Runs batches of the margin twin and says which fail (module doc)."""

    def __init__(self, test: HybridTest, variant: str, points: int):
        self.test = test
        self.params = fast_params(test.fast_side)
        self.initial = initial_loop_state(test, variant)
        self.ground_accel = jax.device_put(np.asarray(test.ground_accel))
        self.points = points
        self.runner = _batched_runner(test, self.params, self.initial, self.ground_accel, points).result()
        self.runs = 0
        self.batches = 0
        self._lanes: dict = {}  # the stacked parameters of a batch's twins (_lanes) by their scales

    def logs(self, delays=None, gains=None, actuator_scales=None, specimen_scales=None) -> list[dict]:
        """The twins' logs at ``delays`` [s], correction ``gains`` [-], actuator factors
        and specimen stiffness factors [-] (``points`` of each; None: all nominal)."""
        columns = [np.full(self.points, nominal) if values is None else np.asarray(values, float)
                   for values, nominal in ((delays, 0.0), (gains, 1.0), (actuator_scales, 1.0),
                                           (specimen_scales, 1.0))]
        if any(column.shape != (self.points,) for column in columns):
            raise ValueError(f"a batch holds {self.points} swept values; got {[c.shape for c in columns]}")
        delays, gains, actuator_scales, specimen_scales = columns
        scales = (tuple(actuator_scales), tuple(specimen_scales))
        if scales not in self._lanes:  # the nominal lanes serve the delay's and the gain's sweeps alike
            self._lanes[scales] = jax.device_put(_lanes(self.test, self.params, actuator_scales, specimen_scales))
        lanes = self._lanes[scales]
        out = jax.tree_util.tree_map(np.asarray, self.runner(self.params, self.initial, self.ground_accel,
                                                             jax.device_put(delays), jax.device_put(gains),
                                                             lanes))
        self.runs += self.points
        self.batches += 1
        return [jax.tree_util.tree_map(lambda x, i=i: x[i], out) for i in range(self.points)]

    def trips(self, **values) -> list:
        """The first trip (or None) of each twin of a batch (:meth:`logs`' arguments)."""
        return [_first_failure(self.test, logs) for logs in self.logs(**values)]


#: the margins' sweeps: (result key, the batch argument it sets, its nominal value, the
#: sweep's end field)
SWEEPS = {
    "gain_over": ("gains", 1.0, "gain_high"),
    "gain_under": ("gains", 1.0, "gain_low"),
    "actuator_over": ("actuator_scales", 1.0, "actuator_high"),
    "actuator_under": ("actuator_scales", 1.0, "actuator_low"),
    "specimen_over": ("specimen_scales", 1.0, "specimen_high"),
    "specimen_under": ("specimen_scales", 1.0, "specimen_low"),
}


def swept(test: HybridTest) -> tuple[str, ...]:
    """The quantities a sweep of ``test`` varies (module doc): the delay always; the
    correction gain with a compensator; the actuator error with the Carrion–Spencer
    transfer system; the specimen's stiffness when its model has a stiffness field."""
    side = test.fast_side
    names = ["delay"]
    if side.compensation is not None:  # without a compensator s changes nothing
        names.append("gain")
    if side.actuator_step is act.actuator_step:  # the ideal transfer system has no parameters to get wrong
        names.append("actuator")
    if stiffness_fields(side.specimen):
        names.append("specimen")
    return tuple(names)


def predict_margins(test: HybridTest, variant: str, sweep: MarginSweep, nominal_peak_target: float,
                    quantities: tuple[str, ...] = ("delay", "gain", "actuator", "specimen")) -> dict:
    """The delay margin and the margins of the other ``quantities`` swept
    (:func:`swept` of them: "gain" the correction gain, "actuator" the actuator error,
    "specimen" the specimen's stiffness; module doc) of ``test``;
    ``nominal_peak_target``: the peak |x_t| of the nominal twin [m]."""
    start = _time.perf_counter()
    tracking_limit = sweep.tracking_share * float(nominal_peak_target)
    twins = _Twins(margin_test(test, sweep, tracking_limit), variant, sweep.points)
    tolerance = sweep.tolerance
    delay = _refine(lambda values: twins.trips(delays=values), 0.0, sweep.max_delay, sweep.points, tolerance)
    results = dict.fromkeys(SWEEPS)
    run = [name for name in swept(test) if name in quantities]
    for key, (argument, nominal, end) in SWEEPS.items():
        if key.rsplit("_", 1)[0] in run:
            results[key] = _refine(lambda values, argument=argument: twins.trips(**{argument: values}), nominal,
                                   getattr(sweep, end), sweep.points, tolerance)
    delay_margin = delay["margin"]
    if delay_margin is None:
        verdict = ("go", f"no failure up to the largest delay swept, {1e3 * sweep.max_delay:g} ms")
    elif delay_margin == 0.0:
        verdict = ("no-go", f"the twin fails without any extra delay: {delay['trip'].message()}")
    elif delay_margin < sweep.min_delay_margin:
        verdict = ("no-go", f"delay margin {1e3 * delay_margin:.2f} ms below the minimum "
                            f"{1e3 * sweep.min_delay_margin:g} ms")
    else:
        verdict = ("go", f"delay margin {1e3 * delay_margin:.2f} ms ≥ the minimum "
                         f"{1e3 * sweep.min_delay_margin:g} ms")
    return {"delay": delay, **results, "specimen_fields": stiffness_fields(test.fast_side.specimen),
            "tracking_limit_m": float(twins.test.interlocks.tracking_error),
            "window_s": len(twins.test.time_slow) / test.slow_rate, "runs": twins.runs, "batches": twins.batches,
            "verdict": verdict[0], "why": verdict[1], "wall_s": _time.perf_counter() - start,
            "sweep": dataclasses.asdict(sweep)}


def _refine(evaluate, start: float, end: float, points: int, tolerance: float, rounds: int = 6) -> dict:
    """The first failing value from ``start`` (nominal) towards ``end`` (either
    direction): ``evaluate(values) -> [trip or None]`` on an even grid of ``points``
    values from ``start`` (included: if it fails, the margin is ``start``) to ``end``, then on ``points`` values evenly inside the bracket per call
    until the bracket is narrower than ``tolerance`` × |margin − start| (at most
    ``rounds`` calls). Returns {"margin" (None: nothing fails up to ``end``),
    "bracket" (the last value that runs, the first that fails), "trip", "calls"}."""
    values = np.linspace(start, end, points)  # the nominal value first: a twin that fails as it is has no margin
    running, failing, trip = float(start), None, None
    for call in range(1, rounds + 1):
        for value, value_trip in zip(values, evaluate(values)):
            if value_trip is not None:
                failing, trip = float(value), value_trip
                break
            running = float(value)
        if failing is None:
            return {"margin": None, "bracket": (float(start), float(end)), "trip": None, "calls": call}
        if failing == start:
            return {"margin": float(start), "bracket": (float(start), float(start)), "trip": trip, "calls": call}
        if abs(failing - running) <= tolerance * abs(failing - start):
            break
        values = running + (failing - running) * np.arange(1, points + 1) / (points + 1)
    return {"margin": failing, "bracket": (running, failing), "trip": trip, "calls": call}


def stepwise_trip(test: HybridTest, variant: str, delay: float = 0.0, gain: float = 1.0,
                  actuator_scale: float = 1.0, specimen_scale: float = 1.0):
    """Run the step-wise engine on a virtual site whose delay stage holds ``delay`` [s]
    and ``gain`` [-], its actuator's ``test.key.actuator_field`` × ``actuator_scale`` and
    its specimen's stiffnesses × ``specimen_scale`` (``test``: a :func:`margin_test`), its
    interlocks on; the :class:`~rths_ident.hybrid.fast_side.interlocks.Trip` that
    stopped it, or None."""
    side = test.fast_side
    if test.key not in _SITES:  # compiled once per twin; each run swaps the stage's values in
        _SITES[test.key] = VirtualSite(side, test.seed)
    params = _with_stage(fast_params(side), jnp.asarray(float(delay)), jnp.asarray(float(gain)))
    params = with_parameter_errors(side, params, test.key.actuator_field, float(actuator_scale),
                                   float(specimen_scale), traced=False)
    state = initial_fast_state(side._replace(specimen=params["specimen"]), test.seed)
    site = _SITES[test.key].with_params(params, state)
    try:
        run_loop(test, "stepwise", variant=variant, site=site, interlocks=True)
    except LoopAborted as aborted:
        if aborted.trip is not None:
            return aborted.trip
        fast = aborted.logs.get("fast", {}) if isinstance(aborted.logs, dict) else {}
        limit = actuator_limit_trip(test, fast["limit"]) if "limit" in fast and len(fast["limit"]) else None
        if limit is None:
            raise
        return limit
    return None


def stepwise_margin(test: HybridTest, variant: str, sweep: MarginSweep, nominal_peak_target: float,
                    quantity: str = "delay", end: float | None = None) -> dict:
    """A margin found the way a lab would (module doc): the step-wise loop at one value
    per run, bisected between the nominal value and ``end`` until the bracket is
    narrower than ``tolerance`` of the margin's distance from the nominal value.
    ``quantity``: "delay" (τ, from 0 to ``end``, default ``max_delay``), "gain",
    "actuator" or "specimen" (factors from 1 to ``end``). Returns {"margin" (None: it
    runs at ``end``), "bracket" (runs, fails), "trip", "runs", "wall_s"}."""
    start = _time.perf_counter()
    nominal = 0.0 if quantity == "delay" else 1.0
    if end is None:
        end = sweep.max_delay
    argument = {"delay": "delay", "gain": "gain", "actuator": "actuator_scale", "specimen": "specimen_scale"}[quantity]
    twin = margin_test(test, sweep, sweep.tracking_share * float(nominal_peak_target))
    runs = 1
    trip = stepwise_trip(twin, variant, **{argument: end})
    if trip is None:
        return {"margin": None, "bracket": (nominal, float(end)), "trip": None, "runs": runs,
                "wall_s": _time.perf_counter() - start}
    low, high = nominal, float(end)  # runs at low, fails at high (either direction)
    while abs(high - low) > sweep.tolerance * abs(high - nominal):
        middle = 0.5 * (low + high)
        middle_trip = stepwise_trip(twin, variant, **{argument: middle})
        runs += 1
        if middle_trip is None:
            low = middle
        else:
            high, trip = middle, middle_trip
    return {"margin": high, "bracket": (low, high), "trip": trip, "runs": runs, "wall_s": _time.perf_counter() - start}


def stepwise_delay_margin(test: HybridTest, variant: str, sweep: MarginSweep, nominal_peak_target: float) -> dict:
    """The delay margin found the way a lab would (:func:`stepwise_margin` on τ over
    [0, ``max_delay``])."""
    return stepwise_margin(test, variant, sweep, nominal_peak_target, "delay", sweep.max_delay)


def _ends(result: dict) -> str:
    trip = result["trip"]
    if trip is None:
        return ""
    limit = f" {trip.limit:.4g} {trip.unit}".rstrip() if math.isfinite(trip.limit) else ""
    return f"; ends by {trip.name}" + (f" (limit{limit})" if limit else "") + f" at t = {trip.time:.2f} s"


def margin_lines(margins: dict) -> list[str]:
    """The ``delay margin`` block of ``check --predict``: each quantity swept, where the
    twin fails above and below its nominal value, and the interlock that ends it."""
    sweep = margins["sweep"]
    field = sweep["actuator_field"]
    stiffness = "specimen " + ("/".join(margins.get("specimen_fields") or ()) or "stiffness")
    rows = [(key, label, end) for key, label, end in (
        ("gain_over", "correction gain above", "gain_high"),
        ("gain_under", "correction gain below", "gain_low"),
        ("actuator_over", f"actuator {field} above", "actuator_high"),
        ("actuator_under", f"actuator {field} below", "actuator_low"),
        ("specimen_over", f"{stiffness} above", "specimen_high"),
        ("specimen_under", f"{stiffness} below", "specimen_low")) if margins.get(key) is not None]
    width = max([22] + [len(label) for _, label, _ in rows])
    batches = f"{margins['batches']} compiled batch" + ("es" if margins["batches"] != 1 else "")
    lines = [f"delay margin (twin over the first {margins['window_s']:.3g} s, {margins['runs']} runs in "
             f"{batches}, {margins['wall_s']:.1f} s; fails = any interlock trips or "
             f"tracking error > {1e3 * margins['tracking_limit_m']:.3g} mm):"]
    delay, label = margins["delay"], f"{'extra loop delay':<{width}s}"
    if delay["margin"] == 0.0:
        lines.append(f"  {label} 0 ms: the twin fails without any extra delay{_ends(delay)}")
    elif delay["margin"] is None:
        lines.append(f"  {label} > {1e3 * sweep['max_delay']:g} ms (none of the delays swept fails)")
    else:
        low, high = delay["bracket"]
        lines.append(f"  {label} {1e3 * high:.2f} ms (runs at {1e3 * low:.2f} ms){_ends(delay)}")
    for key, label, end in rows:
        result = margins[key]
        if result["margin"] is None:
            lines.append(f"  {label:<{width}s} none fails up to ×{sweep[end]:g}")
        elif result["margin"] == 1.0:
            lines.append(f"  {label:<{width}s} the twin fails at ×1 (as it is){_ends(result)}")
        else:
            low, high = result["bracket"]
            lines.append(f"  {label:<{width}s} fails at ×{high:.3g} (runs at ×{low:.3g}){_ends(result)}")
    lines.append(f"  {'minimum delay margin':<{width}s} {1e3 * sweep['min_delay_margin']:g} ms (below it: NO-GO)")
    return lines
