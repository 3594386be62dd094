"""The pre-test check's **delay margin** (``rths-ident check TEST --predict``): the extra
loop delay, and the compensator gain error, at which the test's virtual twin goes
unstable or trips an interlock.

What is swept. Between the compensation and the transfer system the twin gets the
stage of :mod:`rths_ident.hybrid.fast_side.command_delay`: the command held back by an
extra delay τ [s] (what a slower servo controller, a longer cable or a network hop adds
to the loop) and the compensator's correction scaled by s [-] (s = 1.2: the
compensator's gain 20 % too high). Each quantity is swept alone, the other at its
nominal value (τ = 0, s = 1); the test file and the compensators stay as they are.

"Unstable", the one definition. A twin **fails** at a swept value when, over the
sweep's window (the first ``window`` seconds of the record), any of the test's
interlocks trips (:class:`~rths_ident.hybrid.fast_side.interlocks.InterlockMonitor`:
strokes, velocities, force, NS divergence, identifier divergence; a value that is not
finite trips the interlock it reaches first) or the **tracking error** — the mean
|x_t − x_m| over the interlocks' tracking window — exceeds the margin's tracking limit:
the test's ``tracking_error`` interlock, or, when the test declares none,
``tracking_share`` (default 20 %) of the peak |x_t| of the nominal twin. A loop that
oscillates about its target trips the tracking limit long before the strokes.

The **margin** of a quantity is the smallest swept change at which the twin fails: τ_m
[s] for the delay (the twin runs at every τ swept below τ_m), and s_low, s_high for
the correction gain (it runs at every s swept between them; not swept without a
compensator, where s changes nothing). The check reports each with the
interlock that ends it; **no-go** when τ_m < ``min_delay_margin`` (default 5 ms).

How it is computed (:func:`predict_margins`). The fused loop of the twin with the
stage, compiled once with ``jax.vmap`` over the swept parameter: one call runs
``points`` values of it. A first call on an even grid from the nominal value brackets the margin (the first
failing value, the last running one below it); each further call runs ``points`` values
evenly inside the bracket, which shrinks it by ``points + 1``, until it is narrower
than ``tolerance`` of the margin. The margin reported is the bracket's upper end (the
first failing value found).

The independent number (:func:`stepwise_delay_margin`): the step-wise engine on the
virtual site (one slow step per compiled call, its interlocks checked by the loop's
monitor as in a real test, the safe stop on a trip) with the same stage at a fixed τ,
bisected on τ from [0, ``max_delay``] — what a lab would find by trial on the rig, with
no batch and no twin. tests/runner/test_delay_margin.py and docs/scripts/delay_margin_table.py
compare the two.
"""

from __future__ import annotations

import dataclasses
import math
import time as _time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import exported_programs
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.command_delay import delayed_compensation
from rths_ident.hybrid.fast_side.fast_chunk import fast_params, initial_fast_state
from rths_ident.hybrid.fast_side.virtual_site import VirtualSite
from rths_ident.hybrid.loop.assembled import (
    HybridTest,
    first_trip,
    initial_loop_state,
    run_loop,
    slow_step_functions,
)
from rths_ident.hybrid.loop.engine import LoopAborted, run_fused

__all__ = ["MarginSweep", "MarginKey", "margin_test", "predict_margins", "stepwise_delay_margin", "margin_lines"]


@dataclasses.dataclass(frozen=True)
class MarginSweep:
    """What the delay-margin sweep runs (module doc; SI units).

    max_delay: the largest extra delay swept [s]; min_delay_margin: no-go below this
    delay margin [s]; window: seconds of the record each twin runs [s] (None: all of
    it); gain_low, gain_high: the correction gains swept below and above 1 [-];
    points: swept values per compiled batch; tolerance: the bracket's width at which the
    refinement stops, as a share of the margin [-]; tracking_share: the tracking limit
    as a share of the nominal twin's peak |x_t| when the test declares none [-]."""

    max_delay: float = 0.05
    min_delay_margin: float = 0.005
    window: float | None = 10.0
    gain_low: float = 0.0
    gain_high: float = 3.0
    points: int = 8
    tolerance: float = 0.04
    tracking_share: float = 0.2

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


class MarginKey(NamedTuple):
    """The compiled-program key of a twin with the delay stage (a test key, the slow
    steps it runs, the delay stage's buffer)."""

    test_key: object
    steps: int
    max_delay: float


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
    return test._replace(key=MarginKey(test.key, steps, float(sweep.max_delay)), fast_side=side,
                         time_slow=np.asarray(test.time_slow)[:steps],
                         ground_accel=np.asarray(test.ground_accel)[:steps], interlocks=interlocks)


def _with_stage(fp: dict, delay, gain) -> dict:
    return dict(fp, compensation=fp["compensation"]._replace(delay=delay, correction_gain=gain))


_BATCHES: dict = {}  # the batched fused twins by key
_SITES: dict = {}  # the step-wise twins' virtual sites by key


def _batched_runner(test: HybridTest, fp: dict, initial, ground_accel, points: int):
    """``(fast params, initial, ground accel, delays (B,), gains (B,)) -> logs with a
    leading batch axis`` (the fast log's interlock channels, the NS's displacement, the
    update log): the fused loop vmapped over the stage's parameters, compiled once per
    key and batch size ``points`` (kept between processes by
    :mod:`rths_ident.exported_programs` when the test's key is a configuration of this
    package)."""
    cache_key = (test.key, int(points))
    if cache_key not in _BATCHES:
        functions = slow_step_functions(test)

        def run(fp, initial, ag, delays, gains):
            def one(delay, gain):
                _, logs = run_fused(functions, _with_stage(fp, delay, gain), initial, ag)
                kept = {"fast": {k: logs["fast"][k] for k in _FAST_CHANNELS if k in logs["fast"]}}
                if "displacement" in logs.get("ns", {}):
                    kept["ns"] = {"displacement": logs["ns"]["displacement"]}
                if logs.get("update") is not None:
                    kept["update"] = logs["update"]
                return kept
            return jax.vmap(one)(delays, gains)

        batch = jax.ShapeDtypeStruct((int(points),), jnp.float64)
        # stored only when the twin's own test key is a configuration of this package
        stored_key = test.key if exported_programs.package_key(test.key.test_key) is not None else None
        _BATCHES[cache_key] = exported_programs.compile_program(
            "delay-margin-batch", stored_key, run,
            (fp, initial, ground_accel, batch, batch), digest_arrays=(np.asarray(ground_accel),))
    return _BATCHES[cache_key]


#: the fast log's channels the interlock monitor reads
_FAST_CHANNELS = ("command", "measured", "target", "force", "slow_target")


class _Twins:
    """Runs batches of the margin twin and says which fail (module doc)."""

    def __init__(self, test: HybridTest, variant: str, points: int):
        self.test = test
        self.params = fast_params(test.fast_side)
        self.initial = initial_loop_state(test, variant)
        self.ground_accel = jax.device_put(np.asarray(test.ground_accel))
        self.points = points
        self.runner = _batched_runner(test, self.params, self.initial, self.ground_accel, points)
        self.runs = 0
        self.batches = 0

    def logs(self, delays, gains) -> list[dict]:
        """The twins' logs at ``delays`` [s] and ``gains`` [-] (``points`` of each)."""
        delays, gains = np.asarray(delays, float), np.asarray(gains, float)
        if delays.shape != (self.points,) or gains.shape != (self.points,):
            raise ValueError(f"a batch holds {self.points} swept values; got {delays.shape} and {gains.shape}")
        out = jax.tree_util.tree_map(np.asarray, self.runner(self.params, self.initial, self.ground_accel,
                                                             jax.device_put(delays), jax.device_put(gains)))
        self.runs += self.points
        self.batches += 1
        return [jax.tree_util.tree_map(lambda x, i=i: x[i], out) for i in range(self.points)]

    def trips(self, delays, gains) -> list:
        return [first_trip(self.test, logs) for logs in self.logs(delays, gains)]


def predict_margins(test: HybridTest, variant: str, sweep: MarginSweep, nominal_peak_target: float,
                    gains: bool = True) -> dict:
    """The delay margin and (``gains``) the correction-gain margins of ``test`` (module
    doc); ``nominal_peak_target``: the peak |x_t| of the nominal twin [m]."""
    start = _time.perf_counter()
    tracking_limit = sweep.tracking_share * float(nominal_peak_target)
    twins = _Twins(margin_test(test, sweep, tracking_limit), variant, sweep.points)
    tolerance = sweep.tolerance
    delay = _refine(lambda values: twins.trips(values, np.ones_like(values)), 0.0, sweep.max_delay, sweep.points,
                    tolerance)
    over = under = None
    if gains and test.fast_side.compensation is not None:  # without a compensator s changes nothing
        over = _refine(lambda values: twins.trips(np.zeros_like(values), values), 1.0, sweep.gain_high,
                       sweep.points, tolerance)
        under = _refine(lambda values: twins.trips(np.zeros_like(values), values), 1.0, sweep.gain_low,
                        sweep.points, tolerance)
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
    return {"delay": delay, "gain_over": over, "gain_under": under,
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


def stepwise_trip(test: HybridTest, variant: str, delay: float = 0.0, gain: float = 1.0):
    """Run the step-wise engine on a virtual site whose delay stage holds ``delay`` [s]
    and ``gain`` [-] (``test``: a :func:`margin_test`), its interlocks on; the
    :class:`~rths_ident.hybrid.fast_side.interlocks.Trip` that stopped it, or None."""
    side = test.fast_side
    if test.key not in _SITES:  # compiled once per twin; each run swaps the stage's values in
        _SITES[test.key] = VirtualSite(side, test.seed)
    params = _with_stage(fast_params(side), jnp.asarray(float(delay)), jnp.asarray(float(gain)))
    site = _SITES[test.key].with_params(params, initial_fast_state(side, test.seed))
    try:
        run_loop(test, "stepwise", variant=variant, site=site, interlocks=True)
    except LoopAborted as aborted:
        if aborted.trip is None:
            raise
        return aborted.trip
    return None


def stepwise_delay_margin(test: HybridTest, variant: str, sweep: MarginSweep, nominal_peak_target: float) -> dict:
    """The delay margin found the way a lab would (module doc): the step-wise loop at
    one delay per run, bisected on [0, ``max_delay``] until the bracket is narrower than
    ``tolerance`` of its upper end. Returns {"margin" (None: it runs at ``max_delay``),
    "bracket", "trip", "runs", "wall_s"}."""
    start = _time.perf_counter()
    twin = margin_test(test, sweep, sweep.tracking_share * float(nominal_peak_target))
    runs = 1
    trip = stepwise_trip(twin, variant, sweep.max_delay)
    if trip is None:
        return {"margin": None, "bracket": (0.0, sweep.max_delay), "trip": None, "runs": runs,
                "wall_s": _time.perf_counter() - start}
    low, high = 0.0, float(sweep.max_delay)
    while high - low > sweep.tolerance * high:
        middle = 0.5 * (low + high)
        middle_trip = stepwise_trip(twin, variant, middle)
        runs += 1
        if middle_trip is None:
            low = middle
        else:
            high, trip = middle, middle_trip
    return {"margin": high, "bracket": (low, high), "trip": trip, "runs": runs, "wall_s": _time.perf_counter() - start}


def _ends(result: dict) -> str:
    trip = result["trip"]
    if trip is None:
        return ""
    limit = f" {trip.limit:.4g} {trip.unit}".rstrip() if math.isfinite(trip.limit) else ""
    return f"; ends by {trip.name}" + (f" (limit{limit})" if limit else "") + f" at t = {trip.time:.2f} s"


def margin_lines(margins: dict) -> list[str]:
    """The ``delay margin`` block of ``check --predict``."""
    sweep = margins["sweep"]
    batches = f"{margins['batches']} compiled batch" + ("es" if margins["batches"] != 1 else "")
    lines = [f"delay margin (twin over the first {margins['window_s']:.3g} s, {margins['runs']} runs in "
             f"{batches}, {margins['wall_s']:.1f} s; fails = any interlock trips or "
             f"tracking error > {1e3 * margins['tracking_limit_m']:.3g} mm):"]
    delay = margins["delay"]
    if delay["margin"] == 0.0:
        lines.append(f"  extra loop delay       0 ms: the twin fails without any extra delay{_ends(delay)}")
    elif delay["margin"] is None:
        lines.append(f"  extra loop delay       > {1e3 * sweep['max_delay']:g} ms (none of the delays swept fails)")
    else:
        low, high = delay["bracket"]
        lines.append(f"  extra loop delay       {1e3 * high:.2f} ms (runs at {1e3 * low:.2f} ms){_ends(delay)}")
    for key, label, end in (("gain_over", "correction gain above", "gain_high"),
                            ("gain_under", "correction gain below", "gain_low")):
        result = margins[key]
        if result is None:
            continue
        if result["margin"] is None:
            lines.append(f"  {label:<22s} none fails up to ×{sweep[end]:g}")
        elif result["margin"] == 1.0:
            lines.append(f"  {label:<22s} the twin fails at ×1 (as it is){_ends(result)}")
        else:
            low, high = result["bracket"]
            lines.append(f"  {label:<22s} fails at ×{high:.3g} (runs at ×{low:.3g}){_ends(result)}")
    lines.append(f"  minimum delay margin   {1e3 * sweep['min_delay_margin']:g} ms (below it: NO-GO)")
    return lines
