"""The pre-test check's prediction (``rths-ident check TEST --predict``): the test's
virtual twin — the same test file on the virtual site, the whole record, nothing moves —
and what it says about the real test before anything moves.

* the tracking J2 [%] (x_t against x_m at the fast rate) and the command a servo-valve
  would receive (:func:`rths_ident.runner.results.command_metrics`: peak over the NS
  target's, largest jump per fast step over the target's);
* each interlock's **usage**: the twin's peak of the interlock's quantity over its limit
  (:func:`rths_ident.hybrid.fast_side.interlocks.peak_usage`), and the first interlock the
  twin trips, if one does;
* **go** when the twin trips none and every usage stays below :data:`GO_USAGE`;
  **no-go** otherwise, saying which interlock and by how much.

The twin runs with the interlocks off (what the test would do, not where it would stop),
the fused engine when the test's substructure is native, step-wise otherwise.

Then the **delay margin** (:mod:`rths_ident.runner.delay_margin`, native substructures):
the extra loop delay, the compensator gain error, the actuator's parameter error and the
specimen's stiffness error at which the twin goes unstable or trips an interlock, and
which interlock ends each; **no-go** also when the delay margin is below the sweep's
``min_delay_margin``.
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from rths_ident import metrics
from rths_ident.hybrid.fast_side.interlocks import peak_usage
from rths_ident.hybrid.loop.assembled import first_trip, run_loop
from rths_ident.runner.delay_margin import MarginSweep, margin_lines, predict_margins, start_compiling
from rths_ident.runner.results import command_metrics

__all__ = ["GO_USAGE", "predict_test", "prediction_lines"]

#: go only if every interlock's quantity stays below this share of its limit in the twin
#: (a margin for what the twin does not model: the real actuator's and specimen's errors)
GO_USAGE = 0.8


def predict_test(kind_module, cfg, sweep: MarginSweep | None = None) -> dict:
    """Run ``cfg``'s virtual twin (``kind_module.build(cfg)``) and predict (module doc);
    ``sweep``: the delay margin's sweep (default :class:`MarginSweep`'s defaults)."""
    test = kind_module.build(cfg)
    engine = "fused" if test.native_ns is not None else "stepwise"
    sweep = MarginSweep() if sweep is None else sweep
    if test.native_ns is not None:  # the margin's batch compiles on a worker while the nominal twin runs
        start_compiling(test, cfg.variant, sweep)
    start = _time.perf_counter()
    logs, _ = run_loop(test, engine, variant=cfg.variant, interlocks=False)
    fast = logs["fast"]
    usage = peak_usage(test.interlocks, fast, 1.0 / test.fast_side.fast_rate,
                       ns_displacement=logs.get("ns", {}).get("displacement"))
    trip = first_trip(test, logs)
    worst = max(usage.items(), key=lambda item: item[1]["usage"], default=None)
    if trip is not None:
        verdict = ("no-go", f"the twin trips {trip.message()}")
    elif worst is not None and worst[1]["usage"] >= GO_USAGE:
        verdict = ("no-go", f"{worst[0]} reaches {100 * worst[1]['usage']:.0f} % of its limit "
                            f"(go needs every interlock below {100 * GO_USAGE:.0f} %)")
    else:
        verdict = ("go", "no interlock trips and every one stays below "
                         f"{100 * GO_USAGE:.0f} % of its limit" + (
                             f" (the closest: {worst[0]}, {100 * worst[1]['usage']:.0f} %)" if worst else ""))
    wall = _time.perf_counter() - start
    margins = None
    if test.native_ns is not None and trip is None:  # a twin that trips as it is has no margin to find
        peak_target = float(np.max(np.abs(np.asarray(fast["target"]))))
        margins = predict_margins(test, cfg.variant, sweep, peak_target)
        if verdict[0] == "go" and margins["verdict"] == "no-go":
            verdict = ("no-go", margins["why"])
        elif verdict[0] == "go":
            verdict = ("go", f"{verdict[1]}; {margins['why']}")
    return {"engine": engine, "steps": int(np.asarray(fast["measured"]).shape[0]),
            "j2_percent": float(metrics.j2_tracking_error(np.ravel(fast["target"]), np.ravel(fast["measured"]))),
            **command_metrics(logs), "usage": usage, "trip": None if trip is None else trip.as_dict(),
            "margins": margins, "verdict": verdict[0], "why": verdict[1], "wall_s": wall}


def prediction_lines(prediction: dict) -> list[str]:
    """What ``check --predict`` prints."""
    lines = [f"virtual twin ({prediction['engine']}, {prediction['steps']} slow steps, "
             f"{prediction['wall_s']:.1f} s): tracking J2 {prediction['j2_percent']:.3f} %"
             + (f"; command peak {prediction['command_peak_ratio']:.3f} × the target's, largest jump "
                f"{prediction['command_jump_ratio']:.3g} × the target's" if "command_peak_ratio" in prediction else "")]
    for name, entry in prediction["usage"].items():
        unit = f" {entry['unit']}" if entry["unit"] else ""
        limit = f"{entry['limit']:.4g}{unit}" if math.isfinite(entry["limit"]) else "off"
        lines.append(f"  {name:<22s} peak {entry['peak']:.4g}{unit} of {limit}: {100 * entry['usage']:.0f} %")
    if prediction.get("margins") is not None:
        lines.extend(margin_lines(prediction["margins"]))
    else:
        lines.append("delay margin: not computed (" + ("the twin trips as it is" if prediction["trip"] is not None
                                                    else "the sweep runs the fused twin: it needs a native "
                                                         "substructure") + ")")
    lines.append(f"{prediction['verdict'].upper()}: {prediction['why']}")
    return lines
