"""The calibration's warnings: gains on a bound, a held-out J2 that got worse, a search
that stopped early (its reason read from scipy's own stop messages)."""

import numpy as np
import pytest
import scipy.optimize

from rths_ident.calibration.trust import calibration_warnings, stop_reason, warning_lines


def _result(**changes):
    result = {"gains": {"log10 P0": 12.0, "ρ": 0.9996, "s": 1.32},
              "gain_bounds": {"log10 P0": [0.0, 12.0], "ρ": [0.99, 1.0], "s": [0.25, 2.0]},
              "gain_units": {"log10 P0": "log10(-)", "ρ": "-", "s": "-"},
              "J2_before": {"mean": 0.118, "max": 0.315, "failed": 0},
              "J2_after": {"mean": 0.071, "max": 0.403, "failed": 0},
              "iterations": 30, "interrupted": False}
    result.update(changes)
    return result


def test_the_issues_damb_case_warns_of_the_bound_and_the_worse_worst_case():
    # docs/calibration.md (before this check): log10 P0 = 12 on its bound, held-out max 0.315 → 0.403 %
    warnings = calibration_warnings(_result())
    codes = [(w["code"], w.get("gain") or w.get("statistic")) for w in warnings]
    assert codes == [("gain_at_bound", "log10 P0"), ("holdout_worse", "max")]
    assert warnings[0]["side"] == "upper" and warnings[0]["bound"] == 12.0
    lines = warning_lines(warnings)
    assert "log10 P0 = 12 on its upper bound 12" in lines[0]
    assert "worst case got worse after calibration: 0.315 % → 0.403 %" in lines[1]


def test_nothing_to_say_inside_the_box_and_better_everywhere():
    good = _result(gains={"log10 P0": 10.5, "ρ": 0.9996, "s": 1.32},
                   J2_after={"mean": 0.071, "max": 0.180, "failed": 0})
    assert calibration_warnings(good, iterations_done=30, message="") == []


def test_more_failed_runs_and_a_worse_mean_are_said():
    worse = _result(gains={"log10 P0": 10.5, "ρ": 0.9996, "s": 1.32},
                    J2_after={"mean": 0.2, "max": 0.3, "failed": 2})
    assert [w["statistic"] for w in calibration_warnings(worse)] == ["mean", "failed"]


def test_lbfgs_convergence_is_read_from_scipys_message():
    # a quadratic: L-BFGS-B converges in a few iterations of the 30 allowed
    result = scipy.optimize.minimize(lambda z: (float(np.sum((z - 0.3) ** 2)), 2 * (z - 0.3)), np.zeros(2),
                                     jac=True, method="L-BFGS-B", options={"maxiter": 30})
    assert result.nit < 30
    warnings = calibration_warnings(_result(gains={"log10 P0": 10.0, "ρ": 0.9996, "s": 1.0},
                                            J2_after={"mean": 0.1, "max": 0.3, "failed": 0}),
                                    iterations_done=int(result.nit), message=str(result.message))
    early = next(w for w in warnings if w["code"] == "stopped_early")
    assert early["iterations_done"] == result.nit and early["reason"].startswith("converged")
    assert f"stopped after {result.nit} of 30 iterations: converged" in warning_lines([early])[0]


def test_a_failed_line_search_is_said():
    # a gradient that points the wrong way: no step lowers the function
    result = scipy.optimize.minimize(lambda z: (float(np.sum(z**2)), -2 * z + 1.0), np.ones(2), jac=True,
                                     method="L-BFGS-B", options={"maxiter": 30})
    assert result.nit < 30
    assert stop_reason(str(result.message)).startswith("the line search failed")


def test_an_operator_stop_is_not_an_early_stop():
    assert not [w for w in calibration_warnings(_result(interrupted=True), 3, "x") if w["code"] == "stopped_early"]


@pytest.mark.parametrize("message", ["CONVERGENCE: REL_REDUCTION_OF_F_<=_FACTR*EPSMCH",  # scipy < 1.15
                                     "CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH",  # scipy ≥ 1.15
                                     "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"])
def test_both_lbfgs_convergence_criteria_are_named(message):
    reason = stop_reason(message)
    assert reason.startswith("converged") and ("factr" in reason or "pgtol" in reason)
