"""When a calibration's result should not be trusted without a look, as warnings
(``{"code": ..., ...}``, JSON-ready) and their terminal lines. docs/calibration.md asks
users to check exactly these:

* ``gain_at_bound`` — a calibrated gain within :data:`NEAR_FRACTION` of its box's width
  from a bound: the best gains may lie outside the box (``--bounds NAME=LOW:HIGH``).
* ``holdout_worse`` — on the held-out sample (never seen by the search) the worst case
  (``max``) or the mean J2 is larger after calibration than with the starting gains, or
  more runs failed: the gains fit the calibration sample, not specimens in general.
* ``stopped_early`` — the search ran fewer iterations than asked, not by the operator:
  its optimiser's reason in plain words (:func:`stop_reason`) and its own message.
"""

from __future__ import annotations

__all__ = ["NEAR_FRACTION", "bound_warnings", "calibration_warnings", "holdout_warnings", "stop_reason",
           "stopped_early_warnings", "warning_lines"]

#: a gain within this fraction of its box's width from a bound is "on the bound"
NEAR_FRACTION = 0.005


def stop_reason(message: str) -> str:
    """scipy's stop message (L-BFGS-B, differential evolution) in plain words."""
    text = message.upper()
    if "PROJECTED GRADIENT" in text or "PGTOL" in text:
        return ("converged: every component of the projected gradient of the mean J2 is below L-BFGS-B's pgtol "
                "(1e-5 in the unit cube of the gains)")
    if "REL_REDUCTION_OF_F" in text or "RELATIVE REDUCTION OF F" in text:
        return ("converged: the mean J2 fell by less than L-BFGS-B's factr × machine epsilon (relative) in the "
                "last iteration")
    if "ABNORMAL" in text or "LINE SEARCH" in text or "LNSRCH" in text:
        return ("the line search failed: no step along the search direction lowered the mean J2 (a failed run's "
                "penalty or a J2 that is not smooth there)")
    if "FUNCTION EVALUATIONS" in text or "MAXFUN" in text:
        return "the limit on J2 evaluations was reached"
    if "CONVERGENCE" in text or "TERMINATED SUCCESSFULLY" in text:
        return "converged by the optimiser's tolerance"
    return "the optimiser stopped"


def calibration_warnings(result: dict, iterations_done: int | None = None, message: str = "") -> list[dict]:
    """The warnings of a calibration ``result`` (the dict of
    :func:`rths_ident.calibration.study.calibrate`; ``iterations_done``/``message``: what
    its search reported)."""
    warnings = bound_warnings(result)
    warnings += holdout_warnings(result)
    warnings += stopped_early_warnings(result, iterations_done, message)
    return warnings


def bound_warnings(result: dict) -> list[dict]:
    """``gain_at_bound`` for each of ``result["gains"]`` near a bound of ``result["gain_bounds"]``."""
    warnings = []
    for name, value in result["gains"].items():
        low, high = result["gain_bounds"][name]
        for side, bound in (("lower", low), ("upper", high)):
            distance = abs(value - bound) / (high - low)
            if distance <= NEAR_FRACTION:
                warnings.append({"code": "gain_at_bound", "gain": name, "side": side, "value": value,
                                 "bound": bound, "unit": result["gain_units"][name]})
    return warnings


def holdout_warnings(result: dict) -> list[dict]:
    """``holdout_worse``: the held-out sample's J2 (``J2_before`` → ``J2_after``) got worse."""
    warnings = []
    before, after = result["J2_before"], result["J2_after"]
    for statistic in ("max", "mean"):
        if after[statistic] > before[statistic]:
            warnings.append({"code": "holdout_worse", "statistic": statistic, "before": before[statistic],
                             "after": after[statistic]})
    if after["failed"] > before["failed"]:
        warnings.append({"code": "holdout_worse", "statistic": "failed", "before": before["failed"],
                         "after": after["failed"]})
    return warnings


def stopped_early_warnings(result: dict, iterations_done: int | None, message: str) -> list[dict]:
    """``stopped_early``: the search ran fewer of ``result["iterations"]`` than asked, not by the operator."""
    warnings = []
    asked = result["iterations"]
    if not result.get("interrupted") and iterations_done is not None and iterations_done < asked:
        warnings.append({"code": "stopped_early", "iterations_done": iterations_done, "iterations": asked,
                         "reason": stop_reason(message), "message": message})
    return warnings


def warning_lines(warnings: list[dict]) -> list[str]:
    """One terminal line per warning."""
    lines = []
    for w in warnings:
        if w["code"] == "gain_at_bound":
            lines.append(f"  warning: {w['gain']} = {w['value']:.5g} on its {w['side']} bound {w['bound']:g} "
                         f"{w['unit']}: the best gains may lie outside the box (widen it: --bounds)")
        elif w["code"] == "holdout_worse":
            what = {"max": "worst case", "mean": "mean", "failed": "failed runs"}[w["statistic"]]
            unit = "" if w["statistic"] == "failed" else " %"
            lines.append(f"  warning: held-out {what} got worse after calibration: {w['before']:.4g}{unit} → "
                         f"{w['after']:.4g}{unit} (the gains do not carry over to unseen specimens there)")
        elif w["code"] == "worse_than_start":
            lines.append(f"  warning: the best gains' J2 {w['after']:.4g} % is above the start's {w['before']:.4g} % "
                         "when run again (the search's runs and this one differ)")
        elif w["code"] == "stopped_early":
            lines.append(f"  warning: the search stopped after {w['iterations_done']} of {w['iterations']} "
                         f"iterations: {w['reason']} (optimiser: {w['message']})")
    return lines
