"""The normalised-units table: simulating in normalised units and scaling back must equal
the model's own SI force history, for every model (checks every dimension exponent)."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline import FitData, model_class, model_spec
from rths_ident.estimators.offline.simulation import normalised_record, simulate_fields

from offline_synthetic import growing_triangle_wave

PHYSICAL = {
    "lugre": {"sigma0": 2.0e6, "sigma1": 300.0, "sigma2": 5.0e3, "sigma3": 1.0e5, "Fc": 2.0e4},
    "boucwen": {"k": 2.0e6, "alpha": 0.05, "A": 1.0, "beta": 3.0e3, "gamma": 1.0e3, "n": 2.0},
    "bilinear": {"k": 3.0e6, "fy": 2.0e4, "b": 0.1},
    "degrading-boucwen": {"k_e": 2.0e6, "alpha_sv": 0.1, "f_y0": 2.0e4, "N": 2.0, "eta1": 0.6, "eta2": 0.4,
                          "stiffness_degradation": 2.0e-3, "strength_degradation": 1.0e-3, "k_h": 1.0e8,
                          "c_e": 0.0, "m_e": 0.0},
}


@pytest.mark.parametrize("name", sorted(PHYSICAL))
def test_normalised_simulation_scales_back_to_the_si_history(name):
    # a physical time axis (dt = 0.01 s) so the rate-dependent terms (LuGre σ1, σ2) count
    x = growing_triangle_wave(300, 0.03, cycles=3)
    t = 0.01 * np.arange(x.size)
    model = model_class(name)
    reference = model(**PHYSICAL[name]).force_history(x, dt=0.01)
    data = FitData.from_arrays(x, reference + 1.0, t)  # the force only sets the scale here
    spec = model_spec(name, data)
    scales = data.scales()
    normalised = spec.to_normalised(PHYSICAL[name], scales)
    simulated = np.asarray(simulate_fields(spec, normalised, normalised_record(data))) * scales.force
    np.testing.assert_allclose(simulated, reference, rtol=1e-8, atol=1e-9 * np.ptp(reference))
    back = spec.to_physical(normalised, scales)
    for key, value in PHYSICAL[name].items():
        assert back[key] == pytest.approx(value, rel=1e-12)


def test_linear_element_with_physical_time_includes_inertia():
    t = np.linspace(0.0, 2.0, 401)
    x = 0.01 * np.sin(2 * np.pi * 1.5 * t)
    m, c, k = 3.0, 40.0, 5.0e4
    v = np.gradient(x, t, edge_order=2)
    a = np.gradient(v, t, edge_order=2)
    force = m * a + c * v + k * x
    data = FitData.from_arrays(x, force, t)
    spec = model_spec("linear", data)
    assert set(spec.free_names) == {"k", "c", "m"}
    normalised = spec.to_normalised({"m": m, "c": c, "k": k}, data.scales())
    simulated = np.asarray(simulate_fields(spec, normalised, normalised_record(data))) * data.scales().force
    np.testing.assert_allclose(simulated, force, rtol=1e-9, atol=1e-9 * np.ptp(force))


def test_unknown_model_and_bad_data_raise():
    x = growing_triangle_wave(50, 0.01)
    with pytest.raises(ParameterError, match="unknown model 'steel02'"):
        model_spec("steel02", FitData.from_arrays(x, x))
    with pytest.raises(ParameterError, match="equal length"):
        FitData.from_arrays(x, x[:-1])
    with pytest.raises(ParameterError, match="force is constant"):
        FitData.from_arrays(x, np.zeros_like(x))
    with pytest.raises(ParameterError, match="strictly increasing"):
        FitData.from_arrays(x, x, np.zeros_like(x))


def test_fixed_parameters_are_held_and_checked():
    x = growing_triangle_wave(50, 0.02)
    data = FitData.from_arrays(x, 1e6 * x)
    spec = model_spec("boucwen", data, fixed={"n": 2.0})
    assert "n" not in spec.free_names and spec.held["n"] == 2.0  # dimensionless: same value
    spec = model_spec("bilinear", data, fixed={"fy": 5.0e3})
    assert spec.held["fy"] == pytest.approx(5.0e3 / data.scales().force)
    with pytest.raises(ParameterError, match="cannot fix 'beta'"):
        model_spec("boucwen", data, fixed={"beta": 10.0})  # unit m^-n depends on n
    with pytest.raises(ParameterError, match=r"alpha = 2.0 is outside the allowed range \[0, 1\]"):
        model_spec("boucwen", data, fixed={"alpha": 2.0})
    with pytest.raises(ParameterError, match="substeps applies to"):
        model_spec("bilinear", data, substeps=8)


@pytest.mark.parametrize("unit, dimension", [
    ("N/m", (1, -1, 0)), ("N*s/m", (1, -1, 1)), ("kg", (1, -1, 2)), ("N", (1, 0, 0)), ("-", (0, 0, 0)),
    ("1/J", (-1, -1, 0)), ("m/J", (-1, 0, 0)), ("N/m^3", (1, -3, 0)), ("m", (0, 1, 0)), ("1/m^n", (0, "-n", 0)),
    ("kg*m^2", (1, 1, 2)),
])
def test_dimension_of_a_unit_in_force_displacement_time(unit, dimension):
    # kg = N·s²/m, J = N·m
    from rths_ident.estimators.offline.model_specs import dimension_of_unit

    assert dimension_of_unit(unit) == dimension


def test_a_unit_that_cannot_be_read_is_a_clear_error():
    from rths_ident.estimators.offline.model_specs import dimension_of_unit

    with pytest.raises(ParameterError, match="unit 'Pa': cannot read 'Pa'"):
        dimension_of_unit("Pa")
    with pytest.raises(ParameterError, match="only 1/m\\^n"):
        dimension_of_unit("N^n")
