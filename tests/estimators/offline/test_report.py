"""A fit's parameters in the user's units: conversions checked against physical
invariants (the Bouc–Wen ultimate displacement, a stiffness, an energy rate)."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.estimators.offline import FitData
from rths_ident.estimators.offline.report import format_report, params_in_units
from rths_ident.estimators.offline.result import FitResult


def _result(params, units):
    x = np.linspace(0.0, 0.01, 16)
    data = FitData.from_arrays(x, 1e5 * x, None, source="hand-made")
    return FitResult(model="pinching-boucwen", method="nls", params=params, fitted=list(params), units=units,
                     data=data, fitted_force=1e5 * x,
                     goodness={"nrmse_percent": 0.0, "nrmse_rms_percent": 0.0, "r_squared": 1.0})


def test_bouc_wen_fields_in_mm_and_kn():
    params = {"k": 2.0e6, "alpha": 0.1, "A": 1.0, "beta": 600.0, "gamma": 400.0, "n": 1.5, "delta_nu": 2.0e-4}
    units = {"k": "N/m", "alpha": "-", "A": "-", "beta": "1/m^n", "gamma": "1/m^n", "n": "-", "delta_nu": "1/J"}
    values, labels = params_in_units(_result(params, units), "mm", "kN")
    assert values["k"] == pytest.approx(2.0) and labels["k"] == "kN/mm"  # 2e6 N/m = 2 kN/mm
    assert values["alpha"] == 0.1 and labels["alpha"] == "-"
    # z_u = (A/(β+γ))^{1/n} is a length: 1000 times larger in mm than in m
    z_u_m = (1.0 / (params["beta"] + params["gamma"])) ** (1 / 1.5)
    z_u_mm = (1.0 / (values["beta"] + values["gamma"])) ** (1 / values["n"])
    assert z_u_mm == pytest.approx(1000.0 * z_u_m, rel=1e-12) and labels["beta"] == "1/mm^n"
    # 1 kN·mm = 1 J: an energy rate keeps its value
    assert values["delta_nu"] == pytest.approx(2.0e-4, rel=1e-12) and labels["delta_nu"] == "1/(kN·mm)"
    report = format_report(_result(params, units), ("mm", "kN"))
    assert "in mm,kN" in report and "kN/mm" in report
    assert "in m,N" not in format_report(_result(params, units), ("m", "N"))


def test_an_unknown_unit_is_not_converted():
    result = _result({"k": 1.0}, {"k": "N/m"})
    assert params_in_units(result, "furlong", "kN") is None
    assert "in furlong" not in format_report(result, ("furlong", "kN"))


def test_the_loops_figure_names_the_file_not_its_path(tmp_path):
    import matplotlib

    from rths_ident.estimators.offline.report import plot_fit

    result = _result({"k": 1e5}, {"k": "N/m"})
    result.data = FitData.from_arrays(result.data.displacement, result.data.force, None,
                                      source="/work/shared/data/lab/column_3.csv")
    figure = tmp_path / "fit_loops.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        plot_fit(result, figure, displacement_unit="mm", force_unit="kN")
    svg = figure.read_text()
    assert "column_3.csv: measured vs fitted force" in svg and "/work/shared" not in svg
    assert "displacement [mm]" in svg and "measured − fitted [kN]" in svg
