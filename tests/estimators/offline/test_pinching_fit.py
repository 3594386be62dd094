"""Offline fitting of the pinching Bouc–Wen–Baber–Noori model (``pinching-boucwen``):
the normalised-units table, the reported SI parameters, and the fit of a shipped pinched
RC test against the error bound measured for it."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.datasets import load_hysteresis_test
from rths_ident.estimators.offline import FitData, fit_nls, fittable_models, model_spec
from rths_ident.estimators.offline.simulation import normalised_record, simulate_fields
from rths_ident.models import PinchingBoucWen

from offline_synthetic import degrading_bouc_wen_rk4, growing_triangle_wave

# every field not held at 0 by default, so each dimension exponent is exercised
PHYSICAL = {
    "k": 2.0e6, "alpha": 0.05, "A": 1.2, "beta": 3.0e3, "gamma": 1.0e3, "n": 2.0,
    "delta_A": 1.0e-3, "delta_nu": 2.0e-3, "delta_eta": 1.5e-3, "zeta_s": 0.7, "p": 5.0e-3,
    "q": 0.1, "psi": 4.0e-3, "delta_psi": 2.0e-6, "lam": 0.3, "min_A_ratio": 0.01,
}


def test_registered_for_the_fitters_and_auto():
    assert "pinching-boucwen" in fittable_models()  # fit_all(..., "nls") with models=None fits it
    x = growing_triangle_wave(50, 0.02)
    spec = model_spec("pinching-boucwen", FitData.from_arrays(x, 1e6 * x))
    assert spec.model is PinchingBoucWen
    assert spec.held == {"A": 1.0}
    assert list(spec.forms) == ["hysteretic", "degrading", "pinched", "full"]
    assert spec.forms["full"] == ("k", "alpha", "beta", "gamma_over_beta", "n", "delta_nu", "delta_eta",
                                  "zeta_s", "p", "q", "psi", "delta_A", "delta_psi", "lam")
    assert set(spec.free_names) == set(spec.forms["full"])
    # each form contains the previous one; the 'pinched' form is the earlier fixed set
    names = list(spec.forms.values())
    assert all(set(a) < set(b) for a, b in zip(names, names[1:]))
    pinched = model_spec("pinching-boucwen", FitData.from_arrays(x, 1e6 * x), form="pinched")
    assert pinched.held == {"A": 1.0, "delta_A": 0.0, "delta_psi": 0.0, "lam": 0.1}


def test_normalised_simulation_scales_back_to_the_si_history():
    # simulating in normalised units and scaling back equals the model's own SI history
    x = growing_triangle_wave(300, 0.03, cycles=3)
    reference = PinchingBoucWen(**PHYSICAL).force_history(x)
    data = FitData.from_arrays(x, reference + 1.0)  # the force only sets the scale here
    spec = model_spec("pinching-boucwen", data)
    scales = data.scales()
    normalised = spec.to_normalised(PHYSICAL, scales)
    simulated = np.asarray(simulate_fields(spec, normalised, normalised_record(data))) * scales.force
    np.testing.assert_allclose(simulated, reference, rtol=1e-8, atol=1e-9 * np.ptp(reference))
    back = spec.to_physical(normalised, scales)
    for key, value in PHYSICAL.items():
        assert back[key] == pytest.approx(value, rel=1e-12)


# measured with the defaults (form auto → pinched on each, global stage + 2 local starts),
# NRMSE % rms: kunnath 11.40, gill 13.55, daniel 10.40 (range form 3.36, 3.88, 2.43; before
# the global stage and the form selection: 11.42, 13.55, 10.48). Here: the 'pinched' form
# with a small budget (seconds in CI; the full rule runs in the daniel CLI test); the
# bounds leave a margin of about 1 %.
SHIPPED_BOUNDS = {"kunnath": (3.40, 11.55), "gill": (3.92, 13.70), "daniel": (2.48, 10.60)}


@pytest.mark.parametrize("name", sorted(SHIPPED_BOUNDS))
def test_shipped_pinched_rc_tests_meet_the_15_percent_goal(name):
    """The shipped quasi-static RC tests pinch; the pinching model brings the rms-form
    NRMSE below 15 % on each. The SI parameters it reports give back the fitted force
    through the model's own ``force_history`` (checks the unit table on real data)."""
    x, f = load_hysteresis_test(name, units="SI")
    data = FitData.from_arrays(x, f, source=name)
    result = fit_nls(data, "pinching-boucwen", form="pinched", n_starts=2, n_screen=16, global_generations=10)
    range_bound, rms_bound = SHIPPED_BOUNDS[name]
    assert result.nrmse_percent < range_bound, result.nrmse_percent
    assert result.nrmse_rms_percent < rms_bound < 15.0, result.nrmse_rms_percent
    again = PinchingBoucWen(**result.params).force_history(x)
    np.testing.assert_allclose(again, result.fitted_force, rtol=1e-7, atol=1e-6 * np.ptp(f))


@pytest.mark.slow
def test_degrading_form_recovers_known_parameters(rng):
    # Baber–Noori degradation (strength δ_ν, stiffness δ_η per joule) integrated by an
    # independent RK4; 0.5 % force noise; n held at its value as in the Bouc–Wen recovery
    # test (n and β trade off in SI units). Truth: k = 2 MN/m, 5 % post-yield, z_u = 10 mm;
    # the dissipated energy is ≈ 3.0 kJ, so ν and η grow to about 1.6 and 1.9 over the test.
    truth = dict(k=2.0e6, alpha=0.05, beta=60.0, gamma=40.0, n=1.0, delta_nu=2.0e-4, delta_eta=3.0e-4)
    x = growing_triangle_wave(300, 0.04, cycles=4)
    clean = degrading_bouc_wen_rk4(x, **truth)
    data = FitData.from_arrays(x, clean + 0.005 * np.max(np.abs(clean)) * rng.normal(size=x.size))
    result = fit_nls(data, "pinching-boucwen", form="degrading", fixed={"n": 1.0}, substeps=16,
                     n_starts=1, n_screen=8, global_generations=12)
    assert set(result.fitted) == {"k", "alpha", "beta", "gamma", "delta_nu", "delta_eta"}
    for name, value in truth.items():
        assert result.params[name] == pytest.approx(value, rel=0.05), (name, result.params[name])
    report = result.details["identifiability"]
    assert report["not_identifiable"] == [], report["parameters"]


@pytest.mark.parametrize("form", ["hysteretic", "degrading", "pinched", "full"])
def test_a_restricted_form_has_the_fields_of_the_full_vector_with_the_rest_off(form):
    # what the Bayesian stage samples (spec of one form) equals what NLS fitted (the full
    # coordinate vector with the form's coordinates set and the others at their off values)
    x = growing_triangle_wave(50, 0.02)
    full = model_spec("pinching-boucwen", FitData.from_arrays(x, 1e6 * x))
    restricted = model_spec("pinching-boucwen", FitData.from_arrays(x, 1e6 * x), form=form)
    active = full.form_indices(form)
    assert restricted.free_names == [full.free[i].name for i in active]
    lower, upper = full.bounds()
    q = full.off_coordinates()
    q[active] = lower[active] + 0.37 * (upper[active] - lower[active])
    a = {k: float(v) for k, v in full.fields(q).items()}
    b = {k: float(v) for k, v in restricted.fields(q[active]).items()}
    assert a == pytest.approx(b, rel=1e-12)
    if form == "hysteretic":
        assert b["zeta_s"] == 0.0 and b["delta_nu"] == 0.0 and b["delta_eta"] == 0.0
    with pytest.raises(ParameterError, match="form applies to pinching-boucwen"):
        model_spec("boucwen", FitData.from_arrays(x, 1e6 * x), form=form)
