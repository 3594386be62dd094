"""Freeing the degradation and pinching parameters when the data support them: the
nested BIC rule in closed form, and on synthetic tests with and without degradation and
pinching (plain Bouc–Wen by an independent RK4; degrading/pinched by the model)."""

import math

import numpy as np
import pytest

from rths_ident.estimators.offline import FitData, fit_nls
from rths_ident.estimators.offline.form_selection import BIC_MARGIN, MIN_RSS_REDUCTION, compare_nested
from rths_ident.models import PinchingBoucWen

from offline_synthetic import bouc_wen_rk4, growing_triangle_wave


def test_bic_rule_in_closed_form():
    # n = 500, 5 → 7 parameters, RSS 10 → 8: ΔBIC = 500 ln 0.8 + 2 ln 500
    decision = compare_nested(10.0, 5, 8.0, 7, 500)
    assert decision["delta_bic"] == pytest.approx(500 * math.log(0.8) + 2 * math.log(500), rel=1e-12)
    assert decision["rss_reduction"] == pytest.approx(0.2) and decision["accept_larger"]
    # a significant but immaterial gain (RSS −3 % on 20 000 samples) is not taken
    small = compare_nested(10.0, 5, 9.7, 7, 20000)
    assert small["delta_bic"] < -BIC_MARGIN and small["rss_reduction"] < MIN_RSS_REDUCTION
    assert not small["accept_larger"]
    # a material gain on too few samples for its parameters is not taken either
    few = compare_nested(10.0, 5, 9.0, 12, 40)
    assert few["delta_bic"] > -BIC_MARGIN and not few["accept_larger"]
    with pytest.raises(ValueError, match="more parameters"):
        compare_nested(1.0, 5, 1.0, 5, 100)


# small budgets keep these end-to-end fits to seconds; the rule, not the optimiser, is tested
FAST = dict(n_starts=1, n_screen=8, global_generations=12)


@pytest.mark.slow
def test_plain_bouc_wen_data_keep_the_hysteretic_form(rng):
    x = growing_triangle_wave(300, 0.04, cycles=4)
    clean = bouc_wen_rk4(x, k=2.0e6, alpha=0.05, beta=60.0, gamma=40.0, n=1.0)
    noisy = clean + 0.01 * np.max(np.abs(clean)) * rng.normal(size=x.size)
    result = fit_nls(FitData.from_arrays(x, noisy), "pinching-boucwen", **FAST)
    assert result.details["form"] == "hysteretic", result.details["form_tests"]
    assert not any(t["accept_larger"] for t in result.details["form_tests"])
    assert "delta_nu" not in result.fitted and result.params["zeta_s"] == 0.0


@pytest.mark.slow
def test_degrading_pinched_data_free_the_pinching_parameters(rng):
    x = growing_triangle_wave(300, 0.04, cycles=4)
    truth = dict(k=2.0e6, alpha=0.03, beta=60.0, gamma=40.0, n=1.5, delta_nu=0.02, delta_eta=0.03,
                 zeta_s=0.8, p=0.05, q=0.1, psi=0.004, lam=0.1)
    clean = np.asarray(PinchingBoucWen(**truth).force_history(x))
    noisy = clean + 0.01 * np.max(np.abs(clean)) * rng.normal(size=x.size)
    result = fit_nls(FitData.from_arrays(x, noisy), "pinching-boucwen", **FAST)
    assert result.details["form"] in ("pinched", "full"), result.details["form_tests"]
    assert result.params["zeta_s"] > 0.3 and result.nrmse_rms_percent < 5.0
